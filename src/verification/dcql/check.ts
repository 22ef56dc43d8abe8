// Whether the verified credentials satisfy the request's DCQL query (claims, values, credential
// sets), decided by the dcql library over what was actually verified.
import { DcqlPresentationResult, DcqlQuery } from 'dcql';
import { PresentationRejected } from '../errors.js';

export interface VerifiedForDcql {
  format: 'dc+sd-jwt' | 'mso_mdoc';
  vct?: string;
  docType?: string;
  /** SD-JWT: the disclosed claims; mdoc: claims by namespace. */
  claims: Record<string, unknown>;
}

export function checkDcql(query: Record<string, unknown>, presented: Record<string, VerifiedForDcql[]>) {
  const dcqlQuery = DcqlQuery.parse(query as never);
  const presentation = Object.fromEntries(
    Object.entries(presented).map(([id, credentials]) => [
      id,
      credentials.map((c) =>
        c.format === 'dc+sd-jwt'
          ? { credential_format: 'dc+sd-jwt' as const, vct: c.vct as string, claims: c.claims as never, cryptographic_holder_binding: true }
          : {
              credential_format: 'mso_mdoc' as const,
              doctype: c.docType as string,
              namespaces: c.claims as never,
              cryptographic_holder_binding: true,
            },
      ),
    ]),
  );
  const result = DcqlPresentationResult.fromDcqlPresentation(presentation as never, { dcqlQuery });
  if (!result.can_be_satisfied) throw new PresentationRejected('DCQL: the presented credentials and claims do not satisfy the query');
}
