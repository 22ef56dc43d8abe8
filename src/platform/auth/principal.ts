import type { Role } from './roles.js';

/** Who is calling the management API, as established from a verified token and the current client row. */
export interface Principal {
  clientId: string;
  tenantId: string | null;
  roles: Role[];
  /** Configuration ids the client may use for offers and requests; absent means all. */
  allowedIssuanceConfigs?: string[] | null;
  allowedPresentationConfigs?: string[] | null;
  /**
   * Set when a service administrator acts in a tenant with an exchanged token (RFC 8693): its client
   * id, which is `clientId` too; `tenantId` and `roles` are then the tenant and the roles it chose.
   */
  actingAdmin?: string;
}

/** A client as it is now, with the token generation its tokens must carry to be its own. */
export interface CurrentClient {
  principal: Principal;
  tokenGeneration: string;
  /** Identity provider tokens issued before this time (ISO) are not its own; null: no such limit. */
  tokensValidFrom: string | null;
}

/**
 * Looks up the current state of a client; undefined once it is deleted. `tokenGeneration` is what
 * the token at hand carries: a cached state that disagrees is read again, for the token may be newer
 * than the cache (its secret replaced on another instance).
 */
export type PrincipalResolver = (clientId: string, tokenGeneration: string) => Promise<CurrentClient | undefined>;

/** What a service needs to know about the request it serves, free of HTTP. */
export interface RequestContext {
  principal: Principal;
  requestId: string;
}
