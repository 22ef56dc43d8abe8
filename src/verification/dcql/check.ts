// Whether the verified credentials satisfy the request's DCQL query (claims, values, credential
// sets), decided by the dcql library over what was actually verified.
import { DcqlPresentationResult, DcqlPresentationResultError, DcqlQuery } from 'dcql';
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
  let result: DcqlPresentationResult;
  try {
    result = DcqlPresentationResult.fromDcqlPresentation(presentation as never, { dcqlQuery });
  } catch (err) {
    // What was presented does not fit the query's shape (several credentials for a query without
    // `multiple`, say): the wallet's fault, a rejection like any other, not a server error.
    if (err instanceof DcqlPresentationResultError) throw new PresentationRejected(`DCQL: ${err.message}`);
    throw err;
  }
  if (!result.can_be_satisfied) throw new PresentationRejected('DCQL: the presented credentials and claims do not satisfy the query');
}
