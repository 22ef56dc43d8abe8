// External mode with an admin adapter: the service makes the clients at the provider and keeps a
// record of each (tenant, roles, allowed configuration lists). A provider token is honoured only
// while its client's record exists, so deleting a client here ends its tokens at once, though the
// provider would honour them until they expire. The record decides the tenant, and the roles are
// those both the token and the record give (a role taken away here counts at once).
import type { Principal } from './principal.js';
import { InvalidTokenError, type TokenVerifier } from './tokens.js';

/** The service's record of a client, as a principal; undefined when there is none. */
export type ClientRecordLookup = (clientId: string) => Promise<Principal | undefined>;

export function boundToClientRecords(
  verifier: TokenVerifier,
  lookup: ClientRecordLookup,
  /** OIDC_UI_CLIENT_ID: tokens of people logging in through the console, who are users, not clients. */
  consoleClientId: string,
): TokenVerifier {
  return {
    async verify(token) {
      const verified = await verifier.verify(token);
      const claimed = verified.principal;
      if (!claimed || claimed.clientId === consoleClientId) return verified;
      const record = await lookup(claimed.clientId);
      if (!record) {
        throw new InvalidTokenError(
          `client '${claimed.clientId}' is not a client of this service (deleted, or never made through /api/client)`,
        );
      }
      if (record.tenantId !== claimed.tenantId) throw new InvalidTokenError("the access token's tenant is not its client's tenant");
      return { ...verified, principal: { ...record, roles: record.roles.filter((role) => claimed.roles.includes(role)) } };
    },
  };
}
