// A real OpenID Provider (oidc-provider from npm) on a free loopback port, issuing client-credentials
// access tokens as JWTs for the audience svc-service, with the tenant and roles of each client as
// claims. Keycloak is the provider the service targets, and Keycloak gives its admin client a refresh
// token with client credentials, which oidc-provider never does: that one answer (the admin client's
// token request) is given here the way Keycloak gives it. `rotate()` replaces the signing key.
// With `realm`, it looks like a Keycloak realm: the issuer is `{origin}/realms/{realm}` and the same
// server answers Keycloak's admin API (keycloak-admin-fake.ts); clients made through it get tokens
// here, with the claims their mappers and realm roles give.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import Provider, { type Adapter, type AdapterPayload } from 'oidc-provider';
import { KeycloakRealm } from './keycloak-admin-fake.js';

export interface ProviderClient {
  clientId: string;
  secret: string;
  tenantId?: string;
  roles?: string[];
}

export interface TestProvider {
  issuer: string;
  /** A token of `clientId` from the provider's token endpoint (client credentials). */
  token(clientId: string): Promise<string>;
  /** A new signing key (a new kid); tokens issued afterwards are signed with it only. */
  rotate(): Promise<void>;
  /** A token signed with the provider's current key, with exactly these claims (for claims the provider would not issue). */
  mint(claims: Record<string, unknown>): Promise<string>;
  /** The fake Keycloak realm behind the admin API (with `realm` only). */
  realm?: KeycloakRealm;
  /** The admin API stops answering (connections are dropped) until called with false. */
  adminApiDown(down: boolean): void;
  /** Every admin token issued so far stops being accepted (as when they expire); with `refreshTokens`, their refresh tokens too. */
  expireAdminTokens(options?: { refreshTokens?: boolean }): void;
  /** The grant type of every token request of the admin client, in order. */
  adminGrants: string[];
  /** The path of every request the provider received, in order. */
  requests: string[];
  stop(): Promise<void>;
}

/** A token of any client from the token endpoint at `issuer`, by client credentials. */
export async function clientCredentialsToken(
  issuer: string,
  clientId: string,
  secret: string,
): Promise<{ status: number; token?: string }> {
  const reply = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
  });
  const body = (await reply.json()) as { access_token?: string };
  return { status: reply.status, token: body.access_token };
}

export const ADMIN_CLIENT = { clientId: 'svc-admin', secret: 'svc-admin-secret-0123456789' };

export async function startOpenIdProvider(options: {
  algorithm?: 'RS256' | 'ES256';
  clients: ProviderClient[];
  /** The admin client's token comes with a refresh token (Keycloak's "refresh tokens for client credentials"); default true. */
  adminRefreshToken?: boolean;
  /** Look like this Keycloak realm, and serve its admin API. */
  realm?: string;
  /**
   * The web console's public client (authorization code with PKCE) and the people who log in with it
   * (any password; the provider's development login and consent pages).
   */
  ui?: { clientId: string; redirectUri: string; users: { id: string; tenantId?: string; roles: string[] }[] };
}): Promise<TestProvider> {
  const algorithm = options.algorithm ?? 'RS256';
  let handler: ReturnType<Provider['callback']> | undefined;
  let signingKey: { key: CryptoKey; kid: string } | undefined;
  const realm = options.realm ? new KeycloakRealm(options.realm) : undefined;
  const adminTokens = realm?.adminTokens ?? new Set<string>();
  const refreshTokens = new Set<string>();
  let adminDown = false;
  let issued = 0;
  const prefix = realm ? `/realms/${realm.name}` : '';
  const adminPrefix = realm ? `/admin/realms/${realm.name}/` : undefined;

  /** Keycloak's answer to the admin client: a token, and a refresh token with it. */
  const adminGrants: string[] = [];
  const adminToken = async (req: IncomingMessage) => {
    const form = new URLSearchParams(await readBody(req));
    adminGrants.push(form.get('grant_type') ?? '');
    if (form.get('grant_type') === 'refresh_token' && !refreshTokens.has(form.get('refresh_token') ?? '')) {
      return { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid refresh token' } };
    }
    const accessToken = `admin-access-token-${++issued}`;
    adminTokens.add(accessToken);
    const refresh = options.adminRefreshToken !== false ? { refresh_token: `admin-refresh-token-${issued}` } : {};
    if (refresh.refresh_token) refreshTokens.add(refresh.refresh_token);
    return { status: 200, body: { access_token: accessToken, token_type: 'Bearer', expires_in: 300, ...refresh } };
  };

  const requests: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const url = req.url ?? '/';
    requests.push(url.split('?')[0] as string);
    if (adminPrefix && url.startsWith(adminPrefix)) {
      if (adminDown) return req.socket.destroy();
      return realm?.handle(req, res, url.slice(adminPrefix.length - 1));
    }
    if (!url.startsWith(prefix)) {
      res.statusCode = 404;
      return res.end();
    }
    const path = url.slice(prefix.length) || '/';
    if (req.method === 'POST' && path === '/token' && isAdmin(req.headers.authorization)) {
      const answer = await adminToken(req);
      res.statusCode = answer.status;
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify(answer.body));
    }
    // Mounted under the realm's path, the way oidc-provider expects it (its mount path is what was cut off).
    Object.assign(req, { originalUrl: url, url: path });
    handler?.(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`;
  const byId = new Map(options.clients.map((c) => [c.clientId, c]));
  const users = new Map((options.ui?.users ?? []).map((u) => [u.id, u]));

  const makeProvider = async () => {
    const { privateKey } = await generateKeyPair(algorithm, { extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), kid: crypto.randomUUID(), alg: algorithm, use: 'sig' };
    signingKey = { key: privateKey, kid: jwk.kid };
    const provider = new Provider(issuer, {
      clients: [
        ...[...options.clients, ADMIN_CLIENT].map((c) => ({
          client_id: c.clientId,
          client_secret: c.secret,
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
          id_token_signed_response_alg: algorithm,
        })),
        ...(options.ui
          ? [
              {
                client_id: options.ui.clientId,
                token_endpoint_auth_method: 'none' as const,
                grant_types: ['authorization_code'],
                response_types: ['code' as const],
                redirect_uris: [options.ui.redirectUri],
                id_token_signed_response_alg: algorithm,
              },
            ]
          : []),
      ],
      // The console on another origin exchanges its code here.
      clientBasedCORS: () => true,
      findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
      jwks: { keys: [jwk] },
      ...(realm && { adapter: realmAdapter(realm) }),
      ttl: { ClientCredentials: 600 },
      features: {
        clientCredentials: { enabled: true },
        devInteractions: { enabled: options.ui !== undefined },
        resourceIndicators: {
          enabled: true,
          // A resource indicator must be an absolute URI; the tokens' audience is svc-service all the same.
          defaultResource: () => 'urn:svc:management',
          useGrantedResource: () => true,
          // A client of the realm has svc-service in its tokens only through its audience mapper.
          getResourceServerInfo: (_ctx, _resource, client) => ({
            scope: '',
            audience: realm?.claimsOf(client.clientId)?.audience === false ? 'account' : 'svc-service',
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: algorithm } },
          }),
        },
      },
      extraTokenClaims: (_ctx, token) => {
        const { clientId, accountId } = token as { clientId?: string; accountId?: string };
        const ofRealm = !accountId && realm?.claimsOf(clientId ?? '');
        if (ofRealm) return ofRealm.claims;
        const holder = accountId ? users.get(accountId) : byId.get(clientId ?? '');
        return { ...(holder?.tenantId && { tenant_id: holder.tenantId }), roles: holder?.roles ?? [] };
      },
    });
    handler = provider.callback();
  };
  await makeProvider();

  function isAdmin(authorization?: string) {
    const expected = `Basic ${Buffer.from(`${ADMIN_CLIENT.clientId}:${ADMIN_CLIENT.secret}`).toString('base64')}`;
    return authorization === expected;
  }

  return {
    issuer,
    async token(clientId) {
      const client = byId.get(clientId);
      if (!client) throw new Error(`no client ${clientId}`);
      const { token } = await clientCredentialsToken(issuer, client.clientId, client.secret);
      if (!token) throw new Error(`no token for ${clientId}`);
      return token;
    },
    realm,
    adminApiDown: (down) => {
      adminDown = down;
    },
    expireAdminTokens: (expire) => {
      adminTokens.clear();
      if (expire?.refreshTokens) refreshTokens.clear();
    },
    adminGrants,
    requests,
    rotate: makeProvider,
    mint: (claims) =>
      new SignJWT(claims).setProtectedHeader({ alg: algorithm, typ: 'at+jwt', kid: signingKey?.kid }).sign(signingKey?.key as CryptoKey),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * oidc-provider's storage: clients of the realm are found in it (as Keycloak would find them, secret
 * and all, whenever one asks for a token); everything else the provider stores is kept in memory.
 */
function realmAdapter(realm: KeycloakRealm) {
  const stored = new Map<string, AdapterPayload>();
  return class implements Adapter {
    constructor(private readonly model: string) {}
    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.model !== 'Client') return stored.get(`${this.model}:${id}`);
      const client = realm.clientByClientId(id);
      if (!client?.enabled || !client.serviceAccountsEnabled) return undefined;
      return {
        client_id: client.clientId,
        client_secret: client.secret,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      };
    }
    async upsert(id: string, payload: AdapterPayload) {
      stored.set(`${this.model}:${id}`, payload);
    }
    async findByUid(uid: string) {
      return [...stored.values()].find((p) => p.uid === uid);
    }
    async findByUserCode(userCode: string) {
      return [...stored.values()].find((p) => p.userCode === userCode);
    }
    async consume(id: string) {
      const payload = stored.get(`${this.model}:${id}`);
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      stored.delete(`${this.model}:${id}`);
    }
    async revokeByGrantId(grantId: string) {
      for (const [key, payload] of stored) if (payload.grantId === grantId) stored.delete(key);
    }
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A client of the login provider that logs users in (authorization code flow, client_secret_basic). */
export interface RelyingPartyClient {
  clientId: string;
  secret: string;
  redirectUri: string;
}

export interface LoginProvider {
  issuer: string;
  /**
   * Rewrites the ID token of every token response from now on (undefined: answer as the provider
   * does): new claims re-signed with the provider's own key, or 'bad-signature' for the same token
   * with its signature broken. For what a provider that is wrong, or an attacker in its place, answers.
   */
  rewriteIdToken(rewrite: ((claims: Record<string, unknown>) => Record<string, unknown>) | 'bad-signature' | undefined): void;
  stop(): Promise<void>;
}

/**
 * A real OpenID Provider (oidc-provider) on a free loopback port where people log in: users with
 * profile claims (given to userinfo, as a provider that conforms to OpenID Connect Core does), the
 * provider's development login and consent pages, and confidential clients using the authorization
 * code flow. `loginAt` drives those pages over HTTP.
 */
export async function startLoginProvider(options: {
  clients: RelyingPartyClient[];
  users: Record<string, Record<string, unknown>>;
  algorithm?: 'RS256' | 'ES256';
}): Promise<LoginProvider> {
  const algorithm = options.algorithm ?? 'RS256';
  const { privateKey } = await generateKeyPair(algorithm, { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: crypto.randomUUID(), alg: algorithm, use: 'sig' };
  let rewrite: Parameters<LoginProvider['rewriteIdToken']>[0];
  let handler: ReturnType<Provider['callback']> | undefined;
  const server: Server = createServer((req, res) => {
    if (rewrite && req.method === 'POST' && req.url === '/token') rewriteTokenAnswer(res);
    handler?.(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  /** The token answer on its way out, its id_token replaced (before the headers go, so its length is set anew). */
  function rewriteTokenAnswer(res: ServerResponse) {
    const end = res.end.bind(res) as (body?: unknown) => unknown;
    res.end = ((body?: unknown) => {
      const answer = body === undefined ? undefined : JSON.parse(String(body));
      if (!answer?.id_token || !rewrite) return end(body);
      const changed = async () => {
        const [header, payload, signature] = (answer.id_token as string).split('.') as [string, string, string];
        if (rewrite === 'bad-signature') {
          const flipped = Buffer.from(signature, 'base64url');
          flipped[0] = (flipped[0] as number) ^ 0xff;
          return `${header}.${payload}.${flipped.toString('base64url')}`;
        }
        const claims = rewrite?.(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))) ?? {};
        return new SignJWT(claims).setProtectedHeader({ alg: algorithm, kid: jwk.kid }).sign(privateKey);
      };
      void changed().then((idToken) => {
        const text = JSON.stringify({ ...answer, id_token: idToken });
        res.setHeader('content-length', Buffer.byteLength(text));
        end(text);
      });
      return res;
    }) as typeof res.end;
  }

  const provider = new Provider(issuer, {
    clients: options.clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.secret,
      grant_types: ['authorization_code'],
      response_types: ['code' as const],
      redirect_uris: [c.redirectUri],
      token_endpoint_auth_method: 'client_secret_basic' as const,
      id_token_signed_response_alg: algorithm,
    })),
    claims: { openid: ['sub'], profile: ['given_name', 'family_name', 'birthdate'], email: ['email', 'email_verified'] },
    findAccount: (_ctx, id) => {
      const claims = options.users[id];
      return claims ? { accountId: id, claims: () => ({ sub: id, ...claims }) } : undefined;
    },
    jwks: { keys: [jwk] },
    features: { devInteractions: { enabled: true } },
  });
  handler = provider.callback();
  return {
    issuer,
    rewriteIdToken: (next) => {
      rewrite = next;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Logs `user` in through the provider's development login and consent pages over HTTP (cookies kept
 * as a browser keeps them), starting at its authorization URL; the redirect to the client, where it ends.
 */
export async function loginAt(authorizationUrl: string, user: string): Promise<URL> {
  const cookies = new Map<string, string>();
  const keep = (reply: Response) => {
    for (const line of reply.headers.getSetCookie()) {
      const [pair] = line.split(';') as [string];
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
  };
  const send = async (url: string, init: RequestInit = {}) => {
    const reply = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    keep(reply);
    return reply;
  };
  const origin = new URL(authorizationUrl).origin;
  let url = authorizationUrl;
  for (let step = 0; step < 10; step++) {
    const reply = await send(url);
    const location = reply.headers.get('location');
    if (location) {
      const next = new URL(location, url);
      if (next.origin !== origin) return next;
      url = next.toString();
      continue;
    }
    // A login or consent page: its form posts the prompt it shows (and, for login, who logs in).
    const page = await reply.text();
    const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    if (!prompt || !action) throw new Error(`no interaction form at ${url} (${reply.status}): ${page.slice(0, 300)}`);
    const form = new URLSearchParams({ prompt, ...(prompt === 'login' && { login: user, password: 'any' }) });
    const submitted = await send(new URL(action, url).toString(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    const after = submitted.headers.get('location');
    if (!after) throw new Error(`the ${prompt} form answered ${submitted.status}: ${(await submitted.text()).slice(0, 300)}`);
    const next = new URL(after, url);
    if (next.origin !== origin) return next;
    url = next.toString();
  }
  throw new Error('the login did not end at the client');
}
