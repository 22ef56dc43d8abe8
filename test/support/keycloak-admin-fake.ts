// A fake of the part of Keycloak's admin REST API (as documented for Keycloak 24-26) that the
// service's adapter calls, over one in-memory realm: clients (confidential, service account, secret,
// protocol mappers), users (attributes, required actions, temporary password), realm roles and realm
// role mappings. Paths, bodies and status codes are Keycloak's: 201 with a Location header on create,
// 204 on update and delete, 409 on a duplicate clientId, username or role name, 404 for what does not
// exist, 401 for an admin token the realm does not know, 403 for one whose client lacks the
// realm-management role the call needs (as Keycloak's RolePermissions, ClientPermissions and
// UserPermissions decide). A new realm has Keycloak's own realm roles only, none of the service's.
// The OpenID Provider in oidc-provider.ts serves it beside its token endpoint, so a client made here
// obtains real tokens there.
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface FakeClient {
  id: string;
  clientId: string;
  description: string;
  secret: string;
  enabled: boolean;
  serviceAccountsEnabled: boolean;
  protocolMappers: { id: string; name: string; protocolMapper: string; config: Record<string, string> }[];
}

export interface FakeUser {
  id: string;
  username: string;
  email?: string;
  enabled: boolean;
  createdTimestamp: number;
  attributes: Record<string, string[]>;
  requiredActions: string[];
  /** Set for the service account user of a client. */
  serviceAccountClientId?: string;
  password?: { value: string; temporary: boolean };
  realmRoles: Set<string>;
}

export interface FakeRole {
  id: string;
  name: string;
  description?: string;
  composite: false;
  clientRole: false;
  containerId: string;
}

/** The realm-management client's roles that the admin API's checks name (realm-admin holds them all). */
export type RealmManagementRole =
  | 'realm-admin'
  | 'manage-realm'
  | 'view-realm'
  | 'manage-clients'
  | 'view-clients'
  | 'manage-users'
  | 'view-users'
  | 'query-users';

/**
 * Admin access tokens the realm honours, each with the realm-management roles its client held when it
 * was issued: Keycloak decides an admin call by the roles in the token (its resource_access), so a
 * role given to the client later counts from its next token on.
 */
export class AdminTokens extends Set<string> {
  private readonly granted = new Map<string, ReadonlySet<RealmManagementRole>>();

  constructor(private readonly heldNow: () => ReadonlySet<RealmManagementRole>) {
    super();
  }

  override add(token: string): this {
    this.granted.set(token, new Set(this.heldNow()));
    return super.add(token);
  }

  override delete(token: string): boolean {
    this.granted.delete(token);
    return super.delete(token);
  }

  override clear(): void {
    this.granted.clear();
    super.clear();
  }

  rolesOf(token: string): ReadonlySet<RealmManagementRole> {
    return this.granted.get(token) ?? new Set();
  }
}

export class KeycloakRealm {
  readonly clients = new Map<string, FakeClient>();
  readonly users = new Map<string, FakeUser>();
  /** Realm roles by name: a new realm's own ones at first (offline_access, uma_authorization, default-roles-{realm}). */
  readonly roles = new Map<string, FakeRole>();
  /** Every admin call, as `METHOD path` (query left out), for tests that assert what was called. */
  readonly calls: string[] = [];
  /**
   * The realm-management roles of the admin client's service account; tokens issued from now on carry
   * these. By default what docs/api/oidc.md asks the operator to give it.
   */
  adminClientRoles = new Set<RealmManagementRole>(['manage-clients', 'manage-users', 'manage-realm']);
  /** Admin access tokens the realm honours. */
  readonly adminTokens = new AdminTokens(() => this.adminClientRoles);
  /** The realm's password policy: length(n). */
  passwordMinLength = 8;
  /** Calls (`METHOD path`) answered only once this many of them are waiting, as `holdUntil` set them. */
  private readonly holds = new Map<string, { count: number; waiting: (() => void)[] }>();

  constructor(readonly name: string) {
    for (const own of ['offline_access', 'uma_authorization', `default-roles-${name}`]) this.addRole(own);
  }

  /** A realm role, as made by hand in the admin console; returns it (an existing one is left as it is). */
  addRole(name: string, description?: string): FakeRole {
    const existing = this.roles.get(name);
    if (existing) return existing;
    const role: FakeRole = { id: crypto.randomUUID(), name, description, composite: false, clientRole: false, containerId: this.name };
    this.roles.set(name, role);
    return role;
  }

  /**
   * From now on, the call `METHOD path` (as in `calls`) is answered only when `count` of them are
   * waiting, then all at once: so that instances starting together all read before any of them writes.
   */
  holdUntil(call: string, count: number): void {
    this.holds.set(call, { count, waiting: [] });
  }

  clientByClientId(clientId: string): FakeClient | undefined {
    return [...this.clients.values()].find((c) => c.clientId === clientId);
  }

  serviceAccountOf(client: FakeClient): FakeUser | undefined {
    return [...this.users.values()].find((u) => u.serviceAccountClientId === client.id);
  }

  /** The claims a token of this client carries through its mappers and service account. */
  claimsOf(clientId: string): { audience: boolean; claims: Record<string, unknown> } | undefined {
    const client = this.clientByClientId(clientId);
    if (!client) return undefined;
    const claims: Record<string, unknown> = {};
    let audience = false;
    for (const mapper of client.protocolMappers) {
      if (mapper.config['access.token.claim'] !== 'true') continue;
      if (mapper.protocolMapper === 'oidc-hardcoded-claim-mapper')
        claims[mapper.config['claim.name'] as string] = mapper.config['claim.value'];
      if (mapper.protocolMapper === 'oidc-audience-mapper' && mapper.config['included.custom.audience'] === 'svc-service') audience = true;
    }
    claims.realm_access = { roles: [...(this.serviceAccountOf(client)?.realmRoles ?? [])] };
    return { audience, claims };
  }

  /** Answers a request under /admin/realms/{name}; `path` is the rest, query included. */
  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const url = new URL(path, 'http://realm');
    this.calls.push(`${req.method} ${url.pathname}`);
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!token || !this.adminTokens.has(token)) return send(res, 401, { error: 'HTTP 401 Unauthorized' });
    const body = await readJson(req);
    const method = req.method ?? 'GET';
    const segments = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const granted = this.adminTokens.rolesOf(token);
    const needed = neededRoles(method, segments);
    if (!granted.has('realm-admin') && !needed.some((role) => granted.has(role))) {
      return send(res, 403, { error: 'HTTP 403 Forbidden' });
    }
    await this.held(`${method} ${url.pathname}`);
    const answer = this.route(method, segments, url.searchParams, body);
    send(res, answer.status, answer.body, answer.location && `${this.baseUrl(req)}${answer.location}`);
  }

  private async held(call: string): Promise<void> {
    const hold = this.holds.get(call);
    if (!hold) return;
    await new Promise<void>((resolve) => {
      hold.waiting.push(resolve);
      if (hold.waiting.length < hold.count) return;
      this.holds.delete(call);
      for (const release of hold.waiting) release();
    });
  }

  private baseUrl(req: IncomingMessage) {
    return `http://${req.headers.host}/admin/realms/${this.name}`;
  }

  private route(method: string, [kind, id, sub, sub2, sub3]: string[], query: URLSearchParams, body: any): Answer {
    if (kind === 'clients' && !id)
      return method === 'GET' ? this.findClients(query) : method === 'POST' ? this.createClient(body) : NOT_ALLOWED;
    if (kind === 'clients' && id) {
      const client = this.clients.get(id);
      if (!client) return { status: 404, body: { error: 'Could not find client' } };
      if (!sub) return this.clientResource(method, client, body);
      if (sub === 'client-secret' && method === 'GET') return { status: 200, body: { type: 'secret', value: client.secret } };
      if (sub === 'client-secret' && method === 'POST') {
        client.secret = crypto.randomUUID().replaceAll('-', '');
        return { status: 200, body: { type: 'secret', value: client.secret } };
      }
      if (sub === 'service-account-user' && method === 'GET') {
        const user = this.serviceAccountOf(client);
        return user
          ? { status: 200, body: userRepresentation(user) }
          : { status: 400, body: { error: 'Service account not enabled for the client' } };
      }
      if (sub === 'protocol-mappers' && sub2 === 'models' && method === 'POST') {
        if (client.protocolMappers.some((m) => m.name === body?.name))
          return { status: 409, body: { errorMessage: 'Protocol mapper exists with same name' } };
        client.protocolMappers.push({ ...body, id: crypto.randomUUID() });
        return { status: 201, location: `/clients/${client.id}/protocol-mappers/models/${client.protocolMappers.at(-1)?.id}` };
      }
    }
    if (kind === 'roles' && !id) return method === 'GET' ? this.listRoles(query) : method === 'POST' ? this.createRole(body) : NOT_ALLOWED;
    if (kind === 'roles' && id && !sub && method === 'GET') {
      const role = this.roles.get(id);
      return role ? { status: 200, body: role } : { status: 404, body: { error: 'Could not find role' } };
    }
    if (kind === 'users' && !id) return method === 'GET' ? this.findUsers(query) : method === 'POST' ? this.createUser(body) : NOT_ALLOWED;
    if (kind === 'users' && id) {
      const user = this.users.get(id);
      if (!user) return { status: 404, body: { error: 'User not found' } };
      if (!sub) return this.userResource(method, user, body);
      if (sub === 'reset-password' && method === 'PUT') return this.resetPassword(user, body);
      if (sub === 'role-mappings' && sub2 === 'realm' && !sub3) return this.realmRoleMappings(method, user, body);
    }
    return { status: 404, body: { error: 'RESTEASY003210: Could not find resource for full path' } };
  }

  /** Every realm role, unless `first` and `max` ask for a page (Keycloak's RoleContainerResource.getRoles). */
  private listRoles(query: URLSearchParams): Answer {
    const all = [...this.roles.values()];
    const first = query.get('first');
    const max = query.get('max');
    const page = first !== null && max !== null ? all.slice(Number(first), Number(first) + Number(max)) : all;
    return { status: 200, body: page };
  }

  private createRole(body: any): Answer {
    if (typeof body?.name !== 'string' || !body.name) return { status: 400, body: { errorMessage: 'Role name is missing' } };
    if (this.roles.has(body.name)) return { status: 409, body: { errorMessage: `Role with name ${body.name} already exists` } };
    const role = this.addRole(body.name, typeof body.description === 'string' ? body.description : undefined);
    // Keycloak's Location names the new role by its name, not its id.
    return { status: 201, location: `/roles/${encodeURIComponent(role.name)}` };
  }

  private findClients(query: URLSearchParams): Answer {
    const clientId = query.get('clientId');
    const found = [...this.clients.values()].filter((c) => clientId === null || c.clientId === clientId);
    return { status: 200, body: found.map(clientRepresentation) };
  }

  private createClient(body: any): Answer {
    if (typeof body?.clientId !== 'string' || !body.clientId) return { status: 400, body: { errorMessage: 'clientId is required' } };
    if (this.clientByClientId(body.clientId)) return { status: 409, body: { errorMessage: `Client ${body.clientId} already exists` } };
    const client: FakeClient = {
      id: crypto.randomUUID(),
      clientId: body.clientId,
      description: body.description ?? '',
      secret: typeof body.secret === 'string' ? body.secret : crypto.randomUUID(),
      enabled: body.enabled ?? true,
      serviceAccountsEnabled: body.serviceAccountsEnabled === true,
      protocolMappers: (body.protocolMappers ?? []).map((m: object) => ({ ...m, id: crypto.randomUUID() })),
    };
    this.clients.set(client.id, client);
    if (client.serviceAccountsEnabled) {
      const account = newUser(`service-account-${client.clientId}`.toLowerCase());
      account.serviceAccountClientId = client.id;
      this.users.set(account.id, account);
    }
    return { status: 201, location: `/clients/${client.id}` };
  }

  private clientResource(method: string, client: FakeClient, body: any): Answer {
    if (method === 'GET') return { status: 200, body: clientRepresentation(client) };
    if (method === 'PUT') {
      if (typeof body?.description === 'string') client.description = body.description;
      if (typeof body?.secret === 'string') client.secret = body.secret;
      if (typeof body?.enabled === 'boolean') client.enabled = body.enabled;
      return { status: 204 };
    }
    if (method === 'DELETE') {
      this.clients.delete(client.id);
      const account = this.serviceAccountOf(client);
      if (account) this.users.delete(account.id);
      return { status: 204 };
    }
    return NOT_ALLOWED;
  }

  /** `q=key:value` matches a user attribute exactly; service account users are never listed, as in Keycloak. */
  private findUsers(query: URLSearchParams): Answer {
    const [key, value] = (query.get('q') ?? '').split(':');
    const first = Number(query.get('first') ?? 0);
    const max = Number(query.get('max') ?? 100);
    const found = [...this.users.values()]
      .filter((u) => !u.serviceAccountClientId)
      .filter((u) => !key || u.attributes[key]?.includes(value ?? ''))
      .slice(first, first + max);
    return { status: 200, body: found.map(userRepresentation) };
  }

  private createUser(body: any): Answer {
    if (typeof body?.username !== 'string' || !body.username)
      return { status: 400, body: { errorMessage: 'error-user-attribute-required' } };
    const username = body.username.toLowerCase();
    if (PROHIBITED_IN_USERNAMES.test(username)) return invalidUsername(username);
    if ([...this.users.values()].some((u) => u.username === username))
      return { status: 409, body: { errorMessage: 'User exists with same username' } };
    const user = newUser(username);
    user.email = body.email ? String(body.email).toLowerCase() : undefined;
    user.enabled = body.enabled ?? false;
    user.attributes = body.attributes ?? {};
    user.requiredActions = body.requiredActions ?? [];
    this.users.set(user.id, user);
    return { status: 201, location: `/users/${user.id}` };
  }

  private userResource(method: string, user: FakeUser, body: any): Answer {
    if (method === 'GET') return { status: 200, body: userRepresentation(user) };
    if (method === 'PUT') {
      if (typeof body?.username === 'string') {
        const username = body.username.toLowerCase();
        if (PROHIBITED_IN_USERNAMES.test(username)) return invalidUsername(username);
        if ([...this.users.values()].some((u) => u.username === username && u.id !== user.id)) {
          return { status: 409, body: { errorMessage: 'User exists with same username' } };
        }
        user.username = username;
      }
      if (typeof body?.email === 'string') user.email = body.email ? body.email.toLowerCase() : undefined;
      if (typeof body?.enabled === 'boolean') user.enabled = body.enabled;
      if (body?.attributes) user.attributes = body.attributes;
      return { status: 204 };
    }
    if (method === 'DELETE') {
      this.users.delete(user.id);
      return { status: 204 };
    }
    return NOT_ALLOWED;
  }

  private resetPassword(user: FakeUser, body: any): Answer {
    if (body?.type !== 'password' || typeof body.value !== 'string') return { status: 400, body: { error: 'invalid credential' } };
    if (body.value.length < this.passwordMinLength) {
      return {
        status: 400,
        body: {
          error: 'invalidPasswordMinLengthMessage',
          error_description: `Invalid password: minimum length ${this.passwordMinLength}.`,
        },
      };
    }
    user.password = { value: body.value, temporary: body.temporary !== false };
    if (user.password.temporary && !user.requiredActions.includes('UPDATE_PASSWORD')) user.requiredActions.push('UPDATE_PASSWORD');
    return { status: 204 };
  }

  private realmRoleMappings(method: string, user: FakeUser, body: any): Answer {
    if (method === 'GET') return { status: 200, body: [...user.realmRoles].map((name) => this.roles.get(name)) };
    if (!Array.isArray(body)) return { status: 400, body: { error: 'a list of roles is expected' } };
    for (const role of body) {
      const known = this.roles.get(role?.name);
      if (!known || known.id !== role.id) return { status: 404, body: { error: 'Could not find role' } };
    }
    for (const role of body) {
      if (method === 'POST') user.realmRoles.add(role.name);
      else if (method === 'DELETE') user.realmRoles.delete(role.name);
      else return NOT_ALLOWED;
    }
    return { status: 204 };
  }
}

/**
 * The realm-management roles of which a call needs one (realm-admin aside): listing realm roles any
 * of them; reading one view-realm or manage-realm, making one manage-realm; clients and users their
 * view or manage role (query-users for the list of users).
 */
function neededRoles(method: string, [kind, id]: string[]): RealmManagementRole[] {
  const reading = method === 'GET';
  if (kind === 'roles' && !id && reading) return ANY_ADMIN_ROLE;
  if (kind === 'roles') return reading ? ['view-realm', 'manage-realm'] : ['manage-realm'];
  if (kind === 'clients') return reading ? ['view-clients', 'manage-clients'] : ['manage-clients'];
  if (kind === 'users' && !id && reading) return ['query-users', 'view-users', 'manage-users'];
  if (kind === 'users') return reading ? ['view-users', 'manage-users'] : ['manage-users'];
  return ANY_ADMIN_ROLE; // a path Keycloak does not have: its 404, for any admin
}
const ANY_ADMIN_ROLE: RealmManagementRole[] = [
  'manage-realm',
  'view-realm',
  'manage-clients',
  'view-clients',
  'manage-users',
  'view-users',
  'query-users',
];

interface Answer {
  status: number;
  body?: unknown;
  location?: string;
}
/** Keycloak's default user profile: the username-prohibited-characters validator. */
const PROHIBITED_IN_USERNAMES = /[<>&"'\s$%!#?§,;:*/\\|^=[\]{}()`]/;
const invalidUsername = (username: string): Answer => ({
  status: 400,
  body: { field: 'username', errorMessage: 'error-username-invalid-character', params: ['username', username] },
});
const NOT_ALLOWED: Answer = { status: 405, body: { error: 'RESTEASY003650: No resource method found' } };

function newUser(username: string): FakeUser {
  return {
    id: crypto.randomUUID(),
    username,
    enabled: true,
    createdTimestamp: Date.now(),
    attributes: {},
    requiredActions: [],
    realmRoles: new Set(),
  };
}

const clientRepresentation = (c: FakeClient) => ({
  id: c.id,
  clientId: c.clientId,
  description: c.description,
  enabled: c.enabled,
  clientAuthenticatorType: 'client-secret',
  secret: c.secret,
  publicClient: false,
  serviceAccountsEnabled: c.serviceAccountsEnabled,
  protocol: 'openid-connect',
  protocolMappers: c.protocolMappers,
});

const userRepresentation = (u: FakeUser) => ({
  id: u.id,
  username: u.username,
  ...(u.email && { email: u.email }),
  enabled: u.enabled,
  createdTimestamp: u.createdTimestamp,
  attributes: u.attributes,
  requiredActions: u.requiredActions,
});

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (!chunks.length) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

function send(res: ServerResponse, status: number, body?: unknown, location?: string) {
  if (location) res.setHeader('location', location);
  if (body === undefined) {
    res.statusCode = status;
    res.end();
    return;
  }
  res.setHeader('content-type', 'application/json');
  res.statusCode = status;
  res.end(JSON.stringify(body));
}
