// What the service asks of an identity provider's admin API in external mode: machine clients
// (confidential, client credentials, with the tenant claim and the service's audience) and the
// tenants' users. Keycloak (keycloak-admin.ts) is the first implementation; another provider
// implements the same interface. Secrets pass through, never stored here.
import type { Role } from '../platform/auth/roles.js';
import { Problem } from '../platform/http/problem.js';

/** A client as the provider keeps it: who it is, its tenant (in its tokens) and its roles. */
export interface ProviderClient {
  clientId: string;
  tenantId: string | null;
  roles: Role[];
  description: string | null;
}

export interface ClientAdmin {
  /** Creates the client with this secret; a client of that id already there is a 409. */
  createClient(client: ProviderClient, secret: string): Promise<void>;
  /** Brings the client's roles and description in line. */
  updateClient(client: ProviderClient): Promise<void>;
  /** Deletes the client; one that is already gone is no error. */
  deleteClient(clientId: string): Promise<void>;
  /** A new secret made by the provider; the old one stops working there. */
  rotateSecret(clientId: string): Promise<string>;
  /** Creates the client, or brings its secret, tenant claim and roles in line, and says which it did. */
  ensureClient(client: ProviderClient, secret: string): Promise<EnsuredClient>;
}

/** What ensureClient did: a new secret (a new client's included) ends the tokens of the old one. */
export type EnsuredClient = 'created' | 'secret replaced' | 'updated' | 'unchanged';

export interface ProviderUser {
  id: string;
  username: string;
  email: string | null;
  enabled: boolean;
  roles: Role[];
  tenantId: string;
  createdAt: string;
  updatedAt: string;
}

export interface NewProviderUser {
  username: string;
  email: string | null;
  enabled: boolean;
  roles: Role[];
  /** Must be changed at the first login (the provider's required action). */
  temporaryPassword: string;
}

export type ProviderUserChanges = Partial<Pick<ProviderUser, 'username' | 'email' | 'enabled' | 'roles'>>;

/** A tenant's users at the provider; a user of another tenant is treated as absent. */
export interface UserAdmin {
  listUsers(tenantId: string): Promise<ProviderUser[]>;
  findUser(tenantId: string, id: string): Promise<ProviderUser | undefined>;
  /** A username taken in the tenant is a 409. */
  createUser(tenantId: string, user: NewProviderUser): Promise<ProviderUser>;
  updateUser(tenantId: string, id: string, changes: ProviderUserChanges): Promise<void>;
  deleteUser(tenantId: string, id: string): Promise<void>;
}

export interface ProviderAdmin {
  clients: ClientAdmin;
  users: UserAdmin;
  /**
   * Makes at the provider what clients and users need there and a new realm lacks (Keycloak: the
   * service's realm roles), at every start; several instances may do it at once.
   */
  prepare(): Promise<void>;
}

/**
 * The admin client (OIDC_CLIENT_ID) may not do what the service needs at the provider: what it may
 * not do, and what to give it, for a start-up failure the operator can act on.
 */
export class AdminPermissionMissing extends Error {
  constructor(
    readonly action: string,
    readonly grant: string,
  ) {
    super(`may not ${action} at the identity provider: give it ${grant}`);
    this.name = 'AdminPermissionMissing';
  }
}

/** A problem that came from the provider, with the status the provider answered (0: no answer, or no admin token). */
export class ProviderProblem extends Problem {
  constructor(
    status: number,
    title: string,
    detail: string,
    readonly providerStatus: number,
    /** The attribute the provider named as the one it refused (Keycloak's user profile does), if any. */
    readonly providerField?: string,
  ) {
    super(status, title, detail);
  }
}

/**
 * The provider refused or failed: its duplicate (409) stays a 409, anything else is a 502 naming
 * the provider's own message, so the caller sees whose fault it is and never a 500.
 */
export function providerProblem(action: string, status: number, message: string, field?: string): ProviderProblem {
  if (status === 409) return new ProviderProblem(409, 'Conflict', `${action}: the identity provider answered: ${message}`, status);
  const answer = status ? ` answered ${status}` : '';
  return new ProviderProblem(502, 'Bad Gateway', `${action}: the identity provider${answer}: ${message}`, status, field);
}
