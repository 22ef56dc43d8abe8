// A real OpenID Provider (oidc-provider from npm) on a free loopback port, issuing client-credentials
// access tokens as JWTs for the audience svc-service, with the tenant and roles of each client as
// claims. Keycloak is the provider the service targets, and Keycloak gives its admin client a refresh
// token with client credentials, which oidc-provider never does: that one answer (the admin client's
// token request) is given here the way Keycloak gives it. `rotate()` replaces the signing key.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import Provider from 'oidc-provider';

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
  stop(): Promise<void>;
}

export const ADMIN_CLIENT = { clientId: 'svc-admin', secret: 'svc-admin-secret-0123456789' };

export async function startOpenIdProvider(options: {
  algorithm?: 'RS256' | 'ES256';
  clients: ProviderClient[];
  /** The admin client's token comes with a refresh token (Keycloak's "refresh tokens for client credentials"); default true. */
  adminRefreshToken?: boolean;
  /**
   * The web console's public client (authorization code with PKCE) and the people who log in with it
   * (any password; the provider's development login and consent pages).
   */
  ui?: { clientId: string; redirectUri: string; users: { id: string; tenantId?: string; roles: string[] }[] };
}): Promise<TestProvider> {
  const algorithm = options.algorithm ?? 'RS256';
  let handler: ReturnType<Provider['callback']> | undefined;
  let signingKey: { key: CryptoKey; kid: string } | undefined;
  const server: Server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/token' && isAdmin(req.headers.authorization)) {
      res.setHeader('content-type', 'application/json');
      const refresh = options.adminRefreshToken !== false ? { refresh_token: 'admin-refresh-token' } : {};
      res.end(JSON.stringify({ access_token: 'admin-access-token', token_type: 'Bearer', expires_in: 300, ...refresh }));
      return;
    }
    handler?.(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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
      ttl: { ClientCredentials: 600 },
      features: {
        clientCredentials: { enabled: true },
        devInteractions: { enabled: options.ui !== undefined },
        resourceIndicators: {
          enabled: true,
          // A resource indicator must be an absolute URI; the tokens' audience is svc-service all the same.
          defaultResource: () => 'urn:svc:management',
          useGrantedResource: () => true,
          getResourceServerInfo: () => ({
            scope: '',
            audience: 'svc-service',
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: algorithm } },
          }),
        },
      },
      extraTokenClaims: (_ctx, token) => {
        const { clientId, accountId } = token as { clientId?: string; accountId?: string };
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
      const reply = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${client.clientId}:${client.secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
      });
      const body = (await reply.json()) as { access_token?: string };
      if (!body.access_token) throw new Error(`no token for ${clientId}: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    rotate: makeProvider,
    mint: (claims) =>
      new SignJWT(claims).setProtectedHeader({ alg: algorithm, typ: 'at+jwt', kid: signingKey?.kid }).sign(signingKey?.key as CryptoKey),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
