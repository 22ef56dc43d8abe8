// External mode with an admin adapter: the service makes the clients at the provider and keeps a
// record of each (tenant, roles, allowed configuration lists). A provider token is honoured only
// while its client's record exists and if it was issued after the client was made and its secret
// last replaced, so deleting a client or rotating its secret ends its tokens at once, though the
// provider would honour them until they expire. The record decides the tenant, and the roles are
// those both the token and the record give (a role taken away here counts at once).
import type { CurrentClient } from './principal.js';
import { InvalidTokenError, type TokenVerifier, type VerifiedToken } from './tokens.js';

/** The service's record of a client; undefined when there is none. */
export type ClientRecordLookup = (clientId: string) => Promise<CurrentClient | undefined>;

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
      const current = await lookup(claimed.clientId);
      const record = current?.principal;
      if (!record) {
        throw new InvalidTokenError(
          `client '${claimed.clientId}' is not a client of this service (deleted, or never made through /api/client)`,
        );
      }
      if (record.tenantId !== claimed.tenantId) throw new InvalidTokenError("the access token's tenant is not its client's tenant");
      if (issuedBefore(verified, current.tokensValidFrom)) {
        throw new InvalidTokenError('the access token was issued before its client was made again or its secret replaced');
      }
      return { ...verified, principal: { ...record, roles: record.roles.filter((role) => claimed.roles.includes(role)) } };
    },
  };
}

/** iat has whole seconds: a token of the same second as the change is given the benefit of the doubt. */
function issuedBefore(token: VerifiedToken, validFrom: string | null): boolean {
  if (!validFrom) return false;
  return token.issuedAt === undefined || token.issuedAt < Math.floor(Date.parse(validFrom) / 1000);
}
