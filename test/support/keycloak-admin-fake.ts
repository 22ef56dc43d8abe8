// A fake of the part of Keycloak's admin REST API (as documented for Keycloak 24-26) that the
// service's adapter calls, over one in-memory realm: clients (confidential, service account, secret,
// protocol mappers), users (attributes, required actions, temporary password), realm roles and realm
// role mappings. Paths, bodies and status codes are Keycloak's: 201 with a Location header on create,
// 204 on update and delete, 409 on a duplicate clientId or username, 404 for what does not exist,
// 401 for an admin token the realm does not know. The OpenID Provider in oidc-provider.ts serves it
// beside its token endpoint, so a client made here obtains real tokens there.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ROLES } from '../../src/platform/auth/roles.js';

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

export class KeycloakRealm {
  readonly clients = new Map<string, FakeClient>();
  readonly users = new Map<string, FakeUser>();
  readonly roles = new Map<string, { id: string; name: string }>(ROLES.map((name) => [name, { id: crypto.randomUUID(), name }]));
  /** Every admin call, as `METHOD path` (query left out), for tests that assert what was called. */
  readonly calls: string[] = [];
  /** Admin access tokens the realm honours. */
  readonly adminTokens = new Set<string>();
  /** The realm's password policy: length(n). */
  passwordMinLength = 8;

  constructor(readonly name: string) {}

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
    const segments = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const answer = this.route(req.method ?? 'GET', segments, url.searchParams, body);
    send(res, answer.status, answer.body, answer.location && `${this.baseUrl(req)}${answer.location}`);
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
