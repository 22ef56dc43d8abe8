// External mode (OIDC set) against a real OpenID Provider (oidc-provider): management tokens come
// from the provider and are checked against its keys (signature with OIDC_ALGORITHM only, iss, aud
// svc-service, expiry), the tenant comes from the OIDC_SUB claim and the roles from the token; the
// service issues no tokens itself. Start-up stops on an unreachable provider, an admin client without
// a refresh token, and invalid settings. This provider's issuer is not a Keycloak realm's, so the
// service has no admin adapter for it: clients are made at the provider by hand
// (provider-clients.test.ts covers a Keycloak realm, where /api/client makes them).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { StartUpError } from '../../src/platform/lifecycle/start-up-errors.js';
import { start } from '../../src/start-up/server.js';
import { ADMIN_CLIENT, startOpenIdProvider, type TestProvider } from '../support/oidc-provider.js';
import { expectProblem, problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

const CLIENTS = [
  { clientId: 'ops', secret: 'ops-secret-0123456789', roles: ['tenants:manage', 'clients:manage'] },
  { clientId: 'acme-admin', secret: 'acme-secret-0123456789', tenantId: 'acme', roles: ['issuance:manage', 'issuance:offer'] },
  { clientId: 'acme-offers', secret: 'acme-offers-0123456789', tenantId: 'acme', roles: ['issuance:offer'] },
  { clientId: 'globex-admin', secret: 'globex-secret-0123456789', tenantId: 'globex', roles: ['issuance:manage'] },
];
const PID = { id: 'pid', config: { format: 'dc+sd-jwt' }, vct: 'urn:eudi:pid:1', fields: [{ path: ['given_name'], type: 'string' }] };

const externalEnv = (provider: TestProvider, extra: Record<string, string> = {}) => ({
  OIDC: provider.issuer,
  OIDC_CLIENT_ID: ADMIN_CLIENT.clientId,
  OIDC_CLIENT_SECRET: ADMIN_CLIENT.secret,
  ...extra,
});

let op: TestProvider;
let svc: TestService;

beforeAll(async () => {
  op = await startOpenIdProvider({ clients: CLIENTS });
  svc = await startService(externalEnv(op));
});
afterAll(async () => {
  await svc?.stop();
  await op?.stop();
});

describe('external mode: tokens from the identity provider', () => {
  it('takes the tenant and roles from provider tokens, keeps tenants apart and refuses a missing role', async () => {
    const ops = await op.token('ops');
    for (const id of ['acme', 'globex']) {
      const created = await svc.call('POST', '/api/tenant', { token: ops, body: { id, name: id } });
      expect(created.status, created.text).toBe(201);
    }
    const acme = await op.token('acme-admin');
    const created = await svc.raw('POST', '/api/issuer/credentials', { token: acme, body: PID });
    expect(created.status, created.text).toBe(201);
    expect((await svc.call('GET', '/api/issuer/credentials', { token: acme })).body.map((c: { id: string }) => c.id)).toEqual(['pid']);

    // Another tenant's client sees nothing of acme's.
    const globex = await op.token('globex-admin');
    expect((await svc.call('GET', '/api/issuer/credentials', { token: globex })).body).toEqual([]);
    expect((await svc.call('GET', '/api/issuer/credentials/pid', { token: globex })).status).toBe(404);

    // A role the token lacks: 403; a tenant operation with the service's client: 403 saying so.
    expectProblem(
      await svc.raw('POST', '/api/issuer/credentials', { token: await op.token('acme-offers'), body: { ...PID, id: 'x' } }),
      403,
    );
    const service = await svc.call('GET', '/api/issuer/credentials', { token: ops });
    expectProblem(service, 403);
    expect(problemOf(service).detail).toContain('tenant operation');
  });

  it('refuses tokens of the wrong audience or issuer, expired ones, and a forged signature', async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: op.issuer,
      aud: 'svc-service',
      sub: 'acme-admin',
      client_id: 'acme-admin',
      tenant_id: 'acme',
      roles: ['issuance:manage'],
      iat: now,
      exp: now + 300,
    };
    expect((await svc.call('GET', '/api/issuer/credentials', { token: await op.mint(claims) })).status).toBe(200);

    const cases: [Record<string, unknown>, string][] = [
      [{ ...claims, aud: 'another-service' }, 'aud'],
      [{ ...claims, iss: 'https://elsewhere.example.com' }, 'iss'],
      [{ ...claims, exp: now - 120 }, 'expired'],
      [{ ...claims, tenant_id: 42 }, 'tenant_id'],
    ];
    for (const [payload, reason] of cases) {
      const reply = await svc.call('GET', '/api/issuer/credentials', { token: await op.mint(payload) });
      expectProblem(reply, 401);
      expect(problemOf(reply).detail).toContain(reason);
    }
    const token = await op.mint(claims);
    const [header, payload] = token.split('.');
    const forged = `${header}.${payload}.${Buffer.from('not the signature').toString('base64url')}`;
    expectProblem(await svc.call('GET', '/api/issuer/credentials', { token: forged }), 401);
  });

  it('follows a key rotation at the provider: an unknown kid fetches the keys again', async () => {
    const before = await op.token('acme-admin');
    expect((await svc.call('GET', '/api/issuer/credentials', { token: before })).status).toBe(200);
    await op.rotate();
    // The keys are fetched again at most every few seconds, however many unknown kids arrive.
    svc.clock.advance(5_500);
    const after = await op.token('acme-admin');
    const reply = await svc.call('GET', '/api/issuer/credentials', { token: after });
    expect(reply.status, reply.text).toBe(200);
  });

  it('makes no clients or secrets at a provider it has no admin adapter for (not a Keycloak realm)', async () => {
    const ops = await op.token('ops');
    const withRoles = await svc.call('POST', '/api/tenant', {
      token: ops,
      body: { id: 'initech', name: 'Initech', roles: ['issuance:manage'] },
    });
    expectProblem(withRoles, 409);
    expect(problemOf(withRoles).detail).toContain(op.issuer);
    expect((await svc.call('GET', '/api/tenant/initech', { token: ops })).status).toBe(404);
    const client = await svc.call('POST', '/api/client', { token: ops, body: { clientId: 'local', roles: ['tenants:manage'] } });
    expectProblem(client, 409);
    expect((await svc.db.selectFrom('clients').select('id').where('id', '=', 'local').execute()).length).toBe(0);
  });

  it('issues no tokens itself, and tells a front end where to log in', async () => {
    const reply = await svc.call('POST', '/api/oauth2/token', {
      body: { grant_type: 'client_credentials', client_id: 'ops', client_secret: 'x' },
    });
    expectProblem(reply, 404);
    expect(problemOf(reply).detail).toContain(op.issuer);
    const frontend = await svc.call('GET', '/api/frontend-config');
    expect(frontend.status).toBe(200);
    expect(frontend.body.auth).toEqual({
      mode: 'external',
      issuer: op.issuer,
      authorizationEndpoint: `${op.issuer}/auth`,
      tokenEndpoint: `${op.issuer}/token`,
      clientId: 'svc-ui',
      tenantClaim: 'tenant_id',
    });
  });

  it('accepts only OIDC_ALGORITHM: ES256 tokens work with ES256 configured and are refused under the RS256 default', async () => {
    const es = await startOpenIdProvider({ algorithm: 'ES256', clients: CLIENTS });
    const matching = await startService(externalEnv(es, { OIDC_ALGORITHM: 'ES256' }));
    const mismatched = await startService(externalEnv(es));
    try {
      const token = await es.token('ops');
      expect((await matching.call('GET', '/api/tenant', { token })).status).toBe(200);
      const refused = await mismatched.call('GET', '/api/tenant', { token });
      expectProblem(refused, 401);
      expect(problemOf(refused).detail).toContain('OIDC_ALGORITHM');
    } finally {
      await matching.stop();
      await mismatched.stop();
      await es.stop();
    }
  });
});

describe('external mode: start-up', () => {
  const attempt = (env: Record<string, string>) =>
    start(
      {
        NODE_ENV: 'test',
        PORT: '0',
        LOG_LEVEL: 'silent',
        // A fresh directory: a database left by another version of the service would fail its migrations first.
        DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-external-start-')),
        MASTER_SECRET: 'm'.repeat(40),
        ...env,
      },
      () => {},
    ).then(
      async (running) => {
        await running.close();
        throw new Error('started');
      },
      (err: unknown) => err,
    );

  it('stops when the provider cannot be reached, naming its discovery URL', async () => {
    const err = await attempt({ OIDC: 'http://127.0.0.1:9', OIDC_CLIENT_ID: 'a', OIDC_CLIENT_SECRET: 'b' });
    expect(err).toBeInstanceOf(StartUpError);
    expect((err as StartUpError).exitCode).toBe(69);
    expect((err as Error).message).toContain('http://127.0.0.1:9/.well-known/openid-configuration');
  });

  it('stops when the admin client gets no refresh token, or no token at all', async () => {
    const noRefresh = await startOpenIdProvider({ clients: CLIENTS, adminRefreshToken: false });
    try {
      const err = await attempt(externalEnv(noRefresh));
      expect(err).toBeInstanceOf(StartUpError);
      expect((err as Error).message).toContain('refresh token');
      const wrong = await attempt({ ...externalEnv(noRefresh), OIDC_CLIENT_SECRET: 'wrong-secret' });
      expect((wrong as Error).message).toContain('got no token');
    } finally {
      await noRefresh.stop();
    }
  });

  it('refuses a missing admin client and an algorithm it does not know, naming the key', async () => {
    const missing = await attempt({ OIDC: op.issuer });
    expect(missing).toBeInstanceOf(ConfigError);
    expect((missing as Error).message).toContain('OIDC_CLIENT_ID');
    expect((missing as Error).message).toContain('OIDC_CLIENT_SECRET');
    const symmetric = await attempt({ ...externalEnv(op), OIDC_ALGORITHM: 'HS256' });
    expect(symmetric).toBeInstanceOf(ConfigError);
    expect((symmetric as Error).message).toContain('OIDC_ALGORITHM');
  });
});
