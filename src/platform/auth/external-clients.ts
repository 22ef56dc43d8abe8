// External mode with an admin adapter: the service makes the clients at the provider and keeps a
// record of each (tenant, roles, allowed configuration lists). A provider token is honoured only
// while its client's record exists and if it was issued after the client was made and its secret
// last replaced, so deleting a client or rotating its secret ends its tokens at once, though the
// provider would honour them until they expire. The record decides the tenant, and the roles are
// those both the token and the record give (a role taken away here counts at once). A person's token
// (from the console's public client) counts while the person is a user of the tenant at the provider
// and enabled, looked up at most every USER_CHECK_MS per person.
import { TtlCache } from '../ttl-cache.js';
import type { CurrentClient } from './principal.js';
import { InvalidTokenError, type TokenVerifier, type VerifiedToken } from './tokens.js';

/** The service's record of a client; undefined when there is none. */
export type ClientRecordLookup = (clientId: string) => Promise<CurrentClient | undefined>;
/** A user of the tenant at the provider; undefined when there is none. */
export type UserLookup = (tenantId: string, userId: string) => Promise<{ enabled: boolean } | undefined>;

/** How long a user found (or not found) at the provider is taken as such. */
export const USER_CHECK_MS = 5_000;

export function boundToClientRecords(
  verifier: TokenVerifier,
  lookup: ClientRecordLookup,
  /** OIDC_UI_CLIENT_ID: tokens of people logging in through the console, who are users, not clients. */
  consoleClientId: string,
  /** The tenant's users at the provider; absent: a person's token is checked against the provider's keys only. */
  users?: UserLookup,
): TokenVerifier {
  const checkUser = users && userCheck(users);
  return {
    async verify(token) {
      const verified = await verifier.verify(token);
      const claimed = verified.principal;
      if (!claimed) return verified;
      if (claimed.clientId === consoleClientId) {
        if (checkUser && claimed.tenantId && verified.subject) await checkUser(claimed.tenantId, verified.subject);
        return verified;
      }
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

/** Refuses the token of a person who is no longer a user of the tenant, or is disabled. */
function userCheck(users: UserLookup) {
  const known = new TtlCache<{ enabled: boolean } | undefined>(USER_CHECK_MS);
  return async (tenantId: string, userId: string) => {
    const user = await known.get(`${tenantId}\n${userId}`, () => users(tenantId, userId));
    if (!user) throw new InvalidTokenError('the user of this access token is no longer a user of its tenant');
    if (!user.enabled) throw new InvalidTokenError('the user of this access token is disabled');
  };
}
