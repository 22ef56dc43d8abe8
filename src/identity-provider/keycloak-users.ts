// A tenant's users as Keycloak users of the realm. Usernames are unique per realm while the API makes
// them unique per tenant, so a user's Keycloak username is `{tenant}.{username}` (what the person
// types at login); Keycloak keeps usernames in lower case. The tenant is also kept in a user
// attribute, which a user-attribute mapper puts into the person's tokens, and the time the service
// last changed the user in another (Keycloak keeps no such time). A new user's temporary password
// must be changed at the first login (required action UPDATE_PASSWORD).
import type { Clock } from '../platform/clock.js';
import { badRequest, Problem } from '../platform/http/problem.js';
import { type NewProviderUser, ProviderProblem, type ProviderUser, type ProviderUserChanges, type UserAdmin } from './admin.js';
import type { KeycloakApi } from './keycloak-api.js';

/** Keycloak's UserRepresentation, as far as the service reads it. */
interface UserRepresentation {
  id: string;
  username: string;
  email?: string;
  enabled?: boolean;
  createdTimestamp?: number;
  attributes?: Record<string, string[]>;
}

const UPDATED_AT_ATTRIBUTE = 'svc_updated_at';
const PAGE_SIZE = 100;
/** Role mappings are read a user at a time, this many at once: a large tenant is no burst of connections. */
const CONCURRENT_READS = 8;

const userPath = (id: string) => `/users/${encodeURIComponent(id)}`;
const realmName = (tenantId: string, username: string) => `${tenantId}.${username}`.toLowerCase();

export class KeycloakUsers implements UserAdmin {
  constructor(
    private readonly api: KeycloakApi,
    /** The user attribute holding the tenant; named as the tenant claim (OIDC_SUB) for a one-to-one mapper. */
    private readonly tenantAttribute: string,
    private readonly clock: Clock,
  ) {}

  async listUsers(tenantId: string): Promise<ProviderUser[]> {
    const query = encodeURIComponent(`${this.tenantAttribute}:${tenantId}`);
    const found: UserRepresentation[] = [];
    for (let first = 0; ; first += PAGE_SIZE) {
      const reply = await this.api.call(
        'listing users',
        'GET',
        `/users?q=${query}&briefRepresentation=false&first=${first}&max=${PAGE_SIZE}`,
      );
      const page = Array.isArray(reply.body) ? (reply.body as UserRepresentation[]) : [];
      found.push(...page.filter((user) => this.belongs(user, tenantId)));
      if (page.length < PAGE_SIZE) break;
    }
    const users: ProviderUser[] = [];
    for (let i = 0; i < found.length; i += CONCURRENT_READS) {
      users.push(...(await Promise.all(found.slice(i, i + CONCURRENT_READS).map((user) => this.withRoles(user, tenantId)))));
    }
    return users.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async findUser(tenantId: string, id: string): Promise<ProviderUser | undefined> {
    const user = await this.representation(id);
    return user && this.belongs(user, tenantId) ? this.withRoles(user, tenantId) : undefined;
  }

  async createUser(tenantId: string, user: NewProviderUser): Promise<ProviderUser> {
    const action = `creating user '${user.username}'`;
    const created = await refusedInputAsBadRequest(() =>
      this.api.call(action, 'POST', '/users', {
        username: realmName(tenantId, user.username),
        ...(user.email && { email: user.email }),
        enabled: user.enabled,
        // No time of change yet: until the first change, it is the creation time Keycloak records.
        attributes: { [this.tenantAttribute]: [tenantId] },
        requiredActions: ['UPDATE_PASSWORD'],
      }),
    );
    const id = created.createdId;
    if (!id) throw new Problem(502, 'Bad Gateway', `${action}: the identity provider did not say where the user is`);
    // A user without its password or roles is not the user that was asked for: take it back.
    try {
      await this.setTemporaryPassword(id, user.temporaryPassword);
      await this.api.setRealmRoles(id, user.roles);
    } catch (err) {
      await this.api.call(`removing user '${user.username}' again`, 'DELETE', userPath(id)).catch(() => {});
      throw err;
    }
    const stored = await this.findUser(tenantId, id);
    if (!stored) throw new Problem(502, 'Bad Gateway', `${action}: the identity provider does not show the new user`);
    return stored;
  }

  async updateUser(tenantId: string, id: string, changes: ProviderUserChanges): Promise<void> {
    const current = await this.representation(id);
    if (!current || !this.belongs(current, tenantId)) throw new Problem(404, 'Not Found', `user '${id}' does not exist`);
    await refusedInputAsBadRequest(() =>
      this.api.call(`updating user '${id}'`, 'PUT', userPath(id), {
        ...current,
        ...(changes.username !== undefined && { username: realmName(tenantId, changes.username) }),
        // Keycloak removes the address when it is given as an empty string.
        ...(changes.email !== undefined && { email: changes.email ?? '' }),
        ...(changes.enabled !== undefined && { enabled: changes.enabled }),
        attributes: { ...current.attributes, [UPDATED_AT_ATTRIBUTE]: [this.clock.now().toISOString()] },
      }),
    );
    if (changes.roles) await this.api.setRealmRoles(id, changes.roles);
  }

  async deleteUser(_tenantId: string, id: string): Promise<void> {
    await this.api.call(`deleting user '${id}'`, 'DELETE', userPath(id), undefined, true);
  }

  private async setTemporaryPassword(id: string, password: string) {
    try {
      await this.api.call('setting the temporary password', 'PUT', `${userPath(id)}/reset-password`, {
        type: 'password',
        value: password,
        temporary: true,
      });
    } catch (err) {
      // Keycloak answers 400 when the password breaks the realm's password policy: the caller's to fix.
      if (err instanceof ProviderProblem && err.providerStatus === 400) {
        throw badRequest(`temporaryPassword: ${err.detail}`, [
          { field: 'body.temporaryPassword', message: "does not meet the identity provider's password policy" },
        ]);
      }
      throw err;
    }
  }

  private async representation(id: string): Promise<UserRepresentation | undefined> {
    // A dot segment would climb out of /users in the URL (encoding does not stop it): no user has such an id.
    if (id === '.' || id === '..') return undefined;
    const reply = await this.api.call(`reading user '${id}'`, 'GET', userPath(id), undefined, true);
    return reply.status === 404 ? undefined : (reply.body as UserRepresentation);
  }

  /** Another tenant's user is no user of this one: the attribute and the username prefix must both say so. */
  private belongs(user: UserRepresentation, tenantId: string): boolean {
    return Boolean(user.attributes?.[this.tenantAttribute]?.includes(tenantId) && user.username?.startsWith(realmName(tenantId, '')));
  }

  private async withRoles(user: UserRepresentation, tenantId: string): Promise<ProviderUser> {
    const createdAt = new Date(user.createdTimestamp ?? 0).toISOString();
    return {
      id: user.id,
      username: user.username.slice(realmName(tenantId, '').length),
      email: user.email || null,
      enabled: user.enabled ?? true,
      roles: await this.api.realmRolesOf(user.id),
      tenantId,
      createdAt,
      updatedAt: user.attributes?.[UPDATED_AT_ATTRIBUTE]?.[0] ?? createdAt,
    };
  }
}

/** The fields of a user a caller gives; Keycloak's user profile names them the same. */
const CALLER_FIELDS = ['username', 'email'];

/**
 * Keycloak's user profile refuses what it finds invalid with a 400 naming the attribute (a username
 * with characters it prohibits, say): that is the caller's input, so a 400 naming the field, not a 502.
 */
async function refusedInputAsBadRequest<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof ProviderProblem && err.providerStatus === 400 && CALLER_FIELDS.includes(err.providerField ?? '')) {
      const field = `body.${err.providerField}`;
      throw badRequest(`${field}: ${err.detail}`, [{ field, message: 'refused by the identity provider' }]);
    }
    throw err;
  }
}
