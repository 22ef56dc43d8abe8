// Calls to Keycloak's admin REST API of one realm, as its admin client (OIDC_CLIENT_ID): a refused
// token (401) is renewed and the call made once more; whatever else goes wrong becomes a problem
// naming Keycloak's own message (providerProblem). Realm roles named as this service's roles are
// how clients and users hold their roles; the service makes those a realm lacks at start-up.
import { ROLES, type Role } from '../platform/auth/roles.js';
import { Problem } from '../platform/http/problem.js';
import { jsonObjectOf, jsonOf, type OutboundClient, type OutboundRequest, type OutboundResponse } from '../platform/outbound/client.js';
import { AdminPermissionMissing, ProviderProblem, providerProblem } from './admin.js';
import type { AdminToken } from './admin-token.js';

/** Keycloak's RoleRepresentation, as far as role mappings need it. */
interface RoleRepresentation {
  id: string;
  name: string;
}

/** The description a realm role made by the service gets (the spec's role meanings), for whoever reads the realm. */
const ROLE_DESCRIPTIONS: Record<Role, string> = {
  'presentation:manage': 'svc: manages presentation resources',
  'presentation:request': 'svc: creates presentation offers',
  'issuance:manage': 'svc: manages issuance resources',
  'issuance:offer': 'svc: creates issuance offers',
  'clients:manage': 'svc: manages client resources',
  'users:manage': 'svc: manages human users',
  'tenants:manage': 'svc: manages tenants',
  'registrar:manage': 'svc: manages registrar configuration and operations',
};

type Method = NonNullable<OutboundRequest['method']>;

export interface KeycloakReply {
  status: number;
  /** The last segment of the Location header of a 201: the id Keycloak gave the new resource. */
  createdId?: string;
  body: unknown;
}

/**
 * The admin API of the realm of `issuer`: Keycloak's issuer is `{base}/realms/{realm}`, its admin
 * API `{base}/admin/realms/{realm}`. Undefined for an issuer of another shape (not Keycloak).
 */
export function keycloakAdminBase(issuer: string): string | undefined {
  const match = /^(https?:\/\/.+?)\/realms\/([^/]+)\/?$/.exec(issuer);
  return match ? `${match[1]}/admin/realms/${match[2]}` : undefined;
}

export class KeycloakApi {
  /** Role ids do not change while a role exists: looked up once per instance. */
  private readonly roles = new Map<Role, RoleRepresentation>();

  constructor(
    private readonly outbound: OutboundClient,
    private readonly base: string,
    private readonly token: AdminToken,
  ) {}

  /**
   * One admin call; `action` names it in problems. A 404 is answered (not thrown) when `absentOk`,
   * for lookups whose caller knows what absence means.
   */
  async call(action: string, method: Method, path: string, body?: unknown, absentOk = false) {
    let reply: OutboundResponse;
    try {
      const first = await this.token.get();
      reply = await this.send(method, path, first, body);
      if (reply.status === 401) reply = await this.send(method, path, await this.token.renew(first), body);
    } catch (err) {
      throw providerProblem(action, 0, (err as Error).message);
    }
    if (!reply.ok && !(absentOk && reply.status === 404)) {
      const { message, field } = refusalOf(reply.body);
      throw providerProblem(action, reply.status, message, field);
    }
    const location = reply.headers.location;
    return {
      status: reply.status,
      // Kept as sent (Keycloak's ids are UUIDs), and encoded again wherever it goes into a path.
      createdId: typeof location === 'string' ? location.split('/').pop() : undefined,
      body: jsonOf(reply),
    } satisfies KeycloakReply;
  }

  private send(method: Method, path: string, token: string, body: unknown) {
    return this.outbound.request(`${this.base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  /**
   * Makes the service's realm roles the realm lacks. One list of the realm roles when none is missing
   * (any realm-management role may list them); its ids are kept, so mapping those roles later needs
   * no lookup. A role another instance made meanwhile (Keycloak's 409) is there all the same. Making
   * one needs manage-realm: without it, AdminPermissionMissing says so.
   */
  async ensureRealmRoles(): Promise<void> {
    const listed = await this.asAdmin('list realm roles', 'a role of the realm-management client (view-realm)', () =>
      this.call('listing realm roles', 'GET', '/roles'),
    );
    for (const role of Array.isArray(listed.body) ? (listed.body as RoleRepresentation[]) : []) {
      if (typeof role?.id === 'string' && (ROLES as readonly string[]).includes(role.name)) {
        this.roles.set(role.name as Role, { id: role.id, name: role.name });
      }
    }
    // One after the other: a client that may not make roles is refused once, not once per role.
    for (const role of ROLES.filter((r) => !this.roles.has(r))) await this.createRealmRole(role);
  }

  private async createRealmRole(role: Role): Promise<void> {
    try {
      await this.asAdmin('create realm roles', 'the realm-management role manage-realm', () =>
        this.call(`creating realm role '${role}'`, 'POST', '/roles', { name: role, description: ROLE_DESCRIPTIONS[role] }),
      );
    } catch (err) {
      if (!(err instanceof ProviderProblem && err.providerStatus === 409)) throw err;
    }
  }

  /** Keycloak's 403: the admin client lacks the realm-management role the call needs. */
  private async asAdmin<T>(action: string, grant: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof ProviderProblem && err.providerStatus === 403) throw new AdminPermissionMissing(action, grant);
      throw err;
    }
  }

  /** The service's roles among the realm roles mapped to a user (a client's service account included). */
  async realmRolesOf(userId: string): Promise<Role[]> {
    const reply = await this.call('reading role mappings', 'GET', `/users/${encodeURIComponent(userId)}/role-mappings/realm`);
    const names = Array.isArray(reply.body) ? reply.body.map((role: RoleRepresentation) => role.name) : [];
    return ROLES.filter((role) => names.includes(role));
  }

  /** Maps exactly `roles` of the service's roles to the user; realm roles of other names are left alone. */
  async setRealmRoles(userId: string, roles: readonly Role[]): Promise<boolean> {
    const current = await this.realmRolesOf(userId);
    const added = roles.filter((role) => !current.includes(role));
    const removed = current.filter((role) => !roles.includes(role));
    const path = `/users/${encodeURIComponent(userId)}/role-mappings/realm`;
    if (added.length) await this.call('mapping roles', 'POST', path, await this.representations(added));
    if (removed.length) await this.call('unmapping roles', 'DELETE', path, await this.representations(removed));
    return added.length + removed.length > 0;
  }

  private representations(roles: Role[]): Promise<RoleRepresentation[]> {
    return Promise.all(roles.map((role) => this.representation(role)));
  }

  private async representation(role: Role): Promise<RoleRepresentation> {
    const known = this.roles.get(role);
    if (known) return known;
    const reply = await this.call('looking up a realm role', 'GET', `/roles/${encodeURIComponent(role)}`, undefined, true);
    const found = reply.body as RoleRepresentation | undefined;
    if (reply.status === 404 || typeof found?.id !== 'string') {
      // Made at start-up: this one was deleted at the realm since.
      throw new Problem(
        502,
        'Bad Gateway',
        `the identity provider has no realm role '${role}' (deleted since the service started?); the service makes it again at its next start`,
      );
    }
    const representation = { id: found.id, name: found.name };
    this.roles.set(role, representation);
    return representation;
  }
}

/**
 * Keycloak's error text (`errorMessage`, or OAuth's `error_description`/`error`, else the body), and
 * the attribute it refused when its user profile says (`field`, also inside `errors`).
 */
function refusalOf(body: Buffer): { message: string; field?: string } {
  const json = jsonObjectOf({ body });
  const first = Array.isArray(json?.errors) ? (json.errors[0] as Record<string, unknown>) : json;
  const text = [first?.errorMessage, json?.error_description, json?.error].find((v) => typeof v === 'string' && v);
  const message = (text as string | undefined)?.slice(0, 300) ?? (body.length ? body.toString('utf8').slice(0, 300) : 'no message');
  return { message, field: typeof first?.field === 'string' ? first.field : undefined };
}
