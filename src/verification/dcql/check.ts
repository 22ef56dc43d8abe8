// Whether the verified credentials satisfy the request's DCQL query (claims, values, credential
// sets), decided by the dcql library over what was actually verified.
import { type DcqlCredentialPresentation, DcqlPresentationResult, DcqlPresentationResultError, DcqlQuery } from 'dcql';
import { type VerifiedForDcql as FormatVerifiedForDcql, knownFormat } from '../../formats/index.js';
import { PresentationRejected } from '../errors.js';
import type { MatchedAuthority } from '../trusted-authorities/index.js';

export interface VerifiedForDcql extends FormatVerifiedForDcql {
  /** The authority of the query's trusted_authorities the credential matched (trusted-authorities/), checked again here. */
  authority?: MatchedAuthority;
}

/**
 * The verified credential as the dcql library reads a presentation. Its claims are JSON by origin
 * (disclosures and the issuer-signed payload, or mdoc elements converted to JSON values), which is
 * what the library's types say; it checks them against the query's claims itself.
 */
function asDcqlCredential(c: VerifiedForDcql): DcqlCredentialPresentation {
  return { ...knownFormat(c.format).dcqlPresentation(c), ...(c.authority && { authority: c.authority }) };
}

export function checkDcql(query: Record<string, unknown>, presented: Record<string, VerifiedForDcql[]>) {
  // DcqlQuery.parse validates the query (as it did when its configuration was saved): the type only names what it checks.
  const dcqlQuery = DcqlQuery.parse(query as DcqlQuery.Input);
  const presentation = Object.fromEntries(Object.entries(presented).map(([id, credentials]) => [id, credentials.map(asDcqlCredential)]));
  let result: DcqlPresentationResult;
  try {
    result = DcqlPresentationResult.fromDcqlPresentation(presentation, { dcqlQuery });
  } catch (err) {
    // What was presented does not fit the query's shape (several credentials for a query without
    // `multiple`, say): the wallet's fault, a rejection like any other, not a server error.
    if (err instanceof DcqlPresentationResultError) throw new PresentationRejected(`DCQL: ${err.message}`);
    throw err;
  }
  if (!result.can_be_satisfied) throw new PresentationRejected('DCQL: the presented credentials and claims do not satisfy the query');
}
