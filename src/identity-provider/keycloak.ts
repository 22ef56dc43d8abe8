// The Keycloak adapter: the admin API of the realm the issuer names, reached where the service
// reaches the provider (OIDC_INTERNAL_ISSUER_URL when set). Preparing the realm makes the service's
// realm roles it lacks.
import type { Clock } from '../platform/clock.js';
import type { OutboundClient } from '../platform/outbound/client.js';
import type { ProviderAdmin } from './admin.js';
import type { AdminToken } from './admin-token.js';
import { KeycloakApi, keycloakAdminBase } from './keycloak-api.js';
import { KeycloakClients } from './keycloak-clients.js';
import { KeycloakUsers } from './keycloak-users.js';

/** Undefined when `reachableIssuer` is not a Keycloak realm's issuer (`{base}/realms/{realm}`). */
export function keycloakAdmin(options: {
  reachableIssuer: string;
  tenantClaim: string;
  outbound: OutboundClient;
  token: AdminToken;
  clock: Clock;
}): ProviderAdmin | undefined {
  const base = keycloakAdminBase(options.reachableIssuer);
  if (!base) return undefined;
  const api = new KeycloakApi(options.outbound, base, options.token);
  return {
    clients: new KeycloakClients(api, options.tenantClaim),
    users: new KeycloakUsers(api, options.tenantClaim, options.clock),
    prepare: () => api.ensureRealmRoles(),
  };
}
