// In external mode (OIDC set) clients and their secrets live at the identity provider: the service
// makes none and hands out no secrets, so a client it made could never get a token. Managing them
// at the provider through this API (a Keycloak admin adapter) is not built yet.
import { Problem } from '../http/problem.js';

/** Throws when the service is in external mode (`issuer` set): the request would create a client or secret here. */
export function refuseLocalClients(issuer: string | undefined, what: string) {
  if (!issuer) return;
  throw new Problem(
    409,
    'Conflict',
    `${what}: in external mode clients and their secrets are kept at the identity provider ${issuer}; create the client there, with the tenant claim and its roles (managing them through this API is not available yet)`,
  );
}
