import type { Role } from './roles.js';

/** Who is calling the management API, as established from a verified token and the current client row. */
export interface Principal {
  clientId: string;
  tenantId: string | null;
  roles: Role[];
  /** Configuration ids the client may use for offers and requests; absent means all. */
  allowedIssuanceConfigs?: string[] | null;
  allowedPresentationConfigs?: string[] | null;
}

/** Looks up the current state of a client; undefined once it is deleted. */
export type PrincipalResolver = (clientId: string) => Promise<Principal | undefined>;

/** What a service needs to know about the request it serves, free of HTTP. */
export interface RequestContext {
  principal: Principal;
  requestId: string;
}
