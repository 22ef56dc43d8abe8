// The credential query of a request's DCQL query that a vp_token entry answers, by its id.
import { PresentationRejected } from '../errors.js';

type CredentialQuery = { id: string; format: string; trusted_authorities?: unknown };

/** The credential query `queryId` of the request's query (as saved, so valid); an entry for no query rejects. */
export function queryOf(request: { dcqlQuery: Record<string, unknown> }, queryId: string): CredentialQuery {
  const queries = (request.dcqlQuery.credentials as CredentialQuery[] | undefined) ?? [];
  const query = queries.find((q) => q.id === queryId);
  if (!query) throw new PresentationRejected(`vp_token: '${queryId}' is not a credential query of the request`);
  return query;
}
