// External mode against a fake Keycloak realm: /api/client makes, changes, rotates and deletes the
// clients at the provider through its admin API, and the clients really get their tokens from the
// provider and call the API with them. The service keeps its record of each client (tenant, roles,
// allowed lists) but never its secret, and honours a provider token only while that record exists.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StartUpError } from '../../src/platform/lifecycle/start-up-errors.js';
import { start } from '../../src/start-up/server.js';
import { type ExternalService, startExternalService } from '../support/external-service.js';
import { ADMIN_CLIENT, clientCredentialsToken, startOpenIdProvider } from '../support/oidc-provider.js';
import { createdBody, expectProblem, problemOf } from '../support/problems.js';
import { ROOT_ID } from '../support/service.js';

const PID = { id: 'pid', config: { format: 'dc+sd-jwt' }, vct: 'urn:eudi:pid:1', fields: [{ path: ['given_name'], type: 'string' }] };

let ext: ExternalService;
let acme: { token: string; clientId: string; secret: string };
let globex: { token: string; clientId: string; secret: string };

beforeAll(async () => {
  ext = await startExternalService();
  acme = await ext.tenant('acme');
  globex = await ext.tenant('globex');
});
afterAll(() => ext?.stop());

const call = (method: string, path: string, token: string, body?: unknown) => ext.svc.raw(method, path, { token, body });
const providerToken = (clientId: string, secret: string) => clientCredentialsToken(ext.op.issuer, clientId, secret);
const realmClient = (clientId: string) => ext.op.realm?.clientByClientId(clientId);
const clientRow = (id: string) => ext.svc.db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();

// The provider stamps iat in whole seconds of the real time, which the service's clock cannot move:
// real time must reach the next second, and no further than that.
const secondPasses = () => new Promise((resolve) => setTimeout(resolve, 1_000 - (Date.now() % 1_000) + 20));

async function created(token: string, body: Record<string, unknown>) {
  return createdBody<{ clientId: string; secret: string; roles: string[]; tenantId: string | null }>(
    await call('POST', '/api/client', token, body),
  );
}

describe('the root client and tenant admins', () => {
  it('makes the root client (AUTH_CLIENT_ID) at the provider at start-up, without a tenant claim, and it works', async () => {
    const root = realmClient(ROOT_ID);
    expect(root?.secret).toBe(ext.svc.rootSecret);
    expect(root?.protocolMappers.map((m) => m.protocolMapper)).toEqual(['oidc-audience-mapper']);
    expect([...(ext.op.realm?.serviceAccountOf(root as never)?.realmRoles ?? [])].sort()).toEqual(['clients:manage', 'tenants:manage']);
    const row = await clientRow(ROOT_ID);
    expect(row?.secret_hash).not.toContain(ext.svc.rootSecret);
    expect(row?.secret_hash.startsWith('scrypt$')).toBe(false);
    expect((await call('GET', '/api/tenant', await ext.rootToken())).status).toBe(200);
  });

  it('makes the admin client of a tenant created with roles at the provider, with the tenant claim', async () => {
    const admin = realmClient('acme-admin');
    expect(admin?.secret).toBe(acme.secret);
    const tenantMapper = admin?.protocolMappers.find((m) => m.protocolMapper === 'oidc-hardcoded-claim-mapper');
    expect(tenantMapper?.config).toMatchObject({ 'claim.name': 'tenant_id', 'claim.value': 'acme', 'access.token.claim': 'true' });
    const created = await call('POST', '/api/issuer/credentials', acme.token, PID);
    expect(created.status, created.text).toBe(201);
    expect((await call('GET', '/api/issuer/credentials', globex.token)).body).toEqual([]);
  });
});

describe('/api/client at the provider', () => {
  it('creates a client whose secret is shown once and gets it a token with its tenant and roles', async () => {
    const client = await created(acme.token, { clientId: 'acme-issuer', roles: ['issuance:manage'], description: 'issues' });
    expect(client).toMatchObject({ clientId: 'acme-issuer', tenantId: 'acme', roles: ['issuance:manage'] });
    expect(client.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(realmClient('acme-issuer')).toMatchObject({ secret: client.secret, description: 'issues', serviceAccountsEnabled: true });
    expect((await clientRow('acme-issuer'))?.secret_hash).not.toContain(client.secret);
    const listed = await call('GET', '/api/client', acme.token);
    expect(listed.text).not.toContain(client.secret);

    const token = await ext.token('acme-issuer', client.secret);
    const configs = await call('GET', '/api/issuer/credentials', token);
    expect(configs.status, configs.text).toBe(200);
    expect(configs.body.map((c: { id: string }) => c.id)).toEqual(['pid']);
    // A role it was not given: 403.
    expectProblem(await call('GET', '/api/verifier/config', token), 403);
  });

  it('takes a supplied secret to the provider', async () => {
    const secret = 'a-supplied-secret-0123456789';
    await created(acme.token, { clientId: 'acme-supplied', roles: ['issuance:offer'], secret });
    expect((await providerToken('acme-supplied', secret)).token).toBeDefined();
  });

  it('changes the roles at the provider; a role taken away counts at once, also for tokens already issued', async () => {
    const client = await created(acme.token, { clientId: 'acme-roles', roles: ['issuance:manage', 'presentation:manage'] });
    const before = await ext.token('acme-roles', client.secret);
    expect((await call('GET', '/api/verifier/config', before)).status).toBe(200);

    const patched = await call('PATCH', '/api/client/acme-roles', acme.token, { roles: ['issuance:manage'] });
    expect(patched.status, patched.text).toBe(200);
    const account = ext.op.realm?.serviceAccountOf(realmClient('acme-roles') as never);
    expect([...(account?.realmRoles ?? [])]).toEqual(['issuance:manage']);
    expectProblem(await call('GET', '/api/verifier/config', before), 403);
    const after = await ext.token('acme-roles', client.secret);
    expectProblem(await call('GET', '/api/verifier/config', after), 403);
    expect((await call('GET', '/api/issuer/credentials', after)).status).toBe(200);
  });

  it('rotates the secret at the provider: the new one gets tokens, the old one and its tokens no longer work', async () => {
    const client = await created(acme.token, { clientId: 'acme-rotated', roles: ['issuance:manage'] });
    const old = await ext.token('acme-rotated', client.secret);
    expect((await call('GET', '/api/issuer/credentials', old)).status).toBe(200);
    await secondPasses(); // iat has whole seconds: the old token is of an earlier second than the rotation
    const rotated = await call('POST', '/api/client/acme-rotated/rotate-secret', acme.token);
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.secret).not.toBe(client.secret);
    expect((await providerToken('acme-rotated', client.secret)).token).toBeUndefined();
    const refused = await call('GET', '/api/issuer/credentials', old);
    expectProblem(refused, 401);
    expect(problemOf(refused).detail).toContain('secret replaced');
    const fresh = await ext.token('acme-rotated', rotated.body.secret);
    expect((await call('GET', '/api/issuer/credentials', fresh)).status).toBe(200);
    expect(JSON.stringify(await clientRow('acme-rotated'))).not.toContain(rotated.body.secret);
  });

  it('deletes the client at the provider, and its tokens stop working here at once', async () => {
    const client = await created(acme.token, { clientId: 'acme-gone', roles: ['issuance:manage'] });
    const token = await ext.token('acme-gone', client.secret);
    expect((await call('GET', '/api/issuer/credentials', token)).status).toBe(200);
    const deleted = await call('DELETE', '/api/client/acme-gone', acme.token);
    expect(deleted.status, deleted.text).toBe(204);
    expect(realmClient('acme-gone')).toBeUndefined();
    const refused = await call('GET', '/api/issuer/credentials', token);
    expectProblem(refused, 401);
    expect(problemOf(refused).detail).toContain('acme-gone');
    expect((await providerToken('acme-gone', client.secret)).token).toBeUndefined();
  });

  it('does not bring the tokens of a deleted client back to life in a client made again under its id', async () => {
    const first = await created(acme.token, { clientId: 'acme-again', roles: ['issuance:manage'] });
    const old = await ext.token('acme-again', first.secret);
    await secondPasses();
    expect((await call('DELETE', '/api/client/acme-again', acme.token)).status).toBe(204);
    const second = await created(acme.token, { clientId: 'acme-again', roles: ['issuance:manage'] });
    expectProblem(await call('GET', '/api/issuer/credentials', old), 401);
    expect((await call('GET', '/api/issuer/credentials', await ext.token('acme-again', second.secret))).status).toBe(200);
  });

  it('answers a duplicate with 409: one known here, and one the provider already has', async () => {
    await created(acme.token, { clientId: 'acme-twice', roles: ['issuance:offer'] });
    expectProblem(await call('POST', '/api/client', acme.token, { clientId: 'acme-twice', roles: ['issuance:offer'] }), 409);

    // Made at the provider by hand: the provider's 409 is passed on, and no record is left here.
    const byHand = { id: crypto.randomUUID(), clientId: 'acme-by-hand', description: '', secret: 'by-hand-secret', enabled: true };
    ext.op.realm?.clients.set(byHand.id, { ...byHand, serviceAccountsEnabled: true, protocolMappers: [] });
    const duplicate = await call('POST', '/api/client', acme.token, { clientId: 'acme-by-hand', roles: ['issuance:offer'] });
    expectProblem(duplicate, 409);
    expect(problemOf(duplicate).detail).toContain('already exists');
    expect(await clientRow('acme-by-hand')).toBeUndefined();
  });

  it('answers 502 naming the provider when it cannot be reached, and keeps nothing of the attempt', async () => {
    await created(acme.token, { clientId: 'acme-stays', roles: ['issuance:offer'] });
    ext.op.adminApiDown(true);
    try {
      const create = await call('POST', '/api/client', acme.token, { clientId: 'acme-unmade', roles: ['issuance:offer'] });
      expectProblem(create, 502);
      expect(problemOf(create).detail).toContain('identity provider');
      expect(await clientRow('acme-unmade')).toBeUndefined();
      expectProblem(await call('POST', '/api/client/acme-stays/rotate-secret', acme.token), 502);
      expectProblem(await call('DELETE', '/api/client/acme-stays', acme.token), 502);
      expect(await clientRow('acme-stays')).toBeDefined();
    } finally {
      ext.op.adminApiDown(false);
    }
  });

  it('reuses the admin token of start-up, and renews it when the admin API refuses it: by refresh token, else client credentials', async () => {
    // Every admin call so far (root client, two tenants, many clients) went with the one token of start-up.
    expect(ext.op.adminGrants).toEqual(['client_credentials']);
    ext.op.expireAdminTokens();
    const client = await created(acme.token, { clientId: 'acme-after-expiry', roles: ['issuance:offer'] });
    expect((await providerToken('acme-after-expiry', client.secret)).token).toBeDefined();
    expect(ext.op.adminGrants).toEqual(['client_credentials', 'refresh_token']);

    ext.op.expireAdminTokens({ refreshTokens: true });
    expect((await call('PATCH', '/api/client/acme-after-expiry', acme.token, { roles: ['issuance:manage'] })).status).toBe(200);
    expect(ext.op.adminGrants).toEqual(['client_credentials', 'refresh_token', 'refresh_token', 'client_credentials']);
  });

  it("keeps a tenant's clients from another tenant's clients:manage", async () => {
    await created(acme.token, { clientId: 'acme-private', roles: ['issuance:offer'] });
    const listed = await call('GET', '/api/client', globex.token);
    expect(listed.body.map((c: { clientId: string }) => c.clientId)).not.toContain('acme-private');
    for (const reply of [
      await call('GET', '/api/client/acme-private', globex.token),
      await call('PATCH', '/api/client/acme-private', globex.token, { roles: ['issuance:manage'] }),
      await call('POST', '/api/client/acme-private/rotate-secret', globex.token),
      await call('DELETE', '/api/client/acme-private', globex.token),
    ]) {
      expectProblem(reply, 404);
    }
    expect(realmClient('acme-private')).toBeDefined();
  });

  it('refuses a client without clients:manage, and grants only roles the caller holds', async () => {
    const offers = await ext.client(acme.token, 'acme-offers-only', ['issuance:offer']);
    expectProblem(await call('POST', '/api/client', offers, { clientId: 'acme-x', roles: ['issuance:offer'] }), 403);
    const manager = await ext.client(acme.token, 'acme-manager', ['clients:manage', 'issuance:offer']);
    expectProblem(await call('POST', '/api/client', manager, { clientId: 'acme-y', roles: ['issuance:manage'] }), 403);
    expect(realmClient('acme-y')).toBeUndefined();
  });

  it('refuses a token whose tenant claim disagrees with its client', async () => {
    const client = await created(acme.token, { clientId: 'acme-moved', roles: ['issuance:manage'] });
    const mapper = realmClient('acme-moved')?.protocolMappers.find((m) => m.protocolMapper === 'oidc-hardcoded-claim-mapper');
    if (mapper) mapper.config['claim.value'] = 'globex';
    const token = await ext.token('acme-moved', client.secret);
    expectProblem(await call('GET', '/api/issuer/credentials', token), 401);
  });

  it("sets the roles of a tenant's admin client at the provider when the tenant's roles change", async () => {
    const patched = await call('PATCH', '/api/tenant/globex', await ext.rootToken(), { roles: ['issuance:manage', 'clients:manage'] });
    expect(patched.status, patched.text).toBe(200);
    const account = ext.op.realm?.serviceAccountOf(realmClient('globex-admin') as never);
    expect([...(account?.realmRoles ?? [])].sort()).toEqual(['clients:manage', 'issuance:manage']);
    expectProblem(await call('GET', '/api/user', globex.token), 403);
  });

  it('deletes the clients of a deleted tenant at the provider', async () => {
    const initech = await ext.tenant('initech', ['clients:manage', 'issuance:offer']);
    await created(initech.token, { clientId: 'initech-app', roles: ['issuance:offer'] });
    expect((await call('DELETE', '/api/tenant/initech', await ext.rootToken())).status).toBe(204);
    expect(realmClient('initech-admin')).toBeUndefined();
    expect(realmClient('initech-app')).toBeUndefined();
    // ...so the tenant can be made again, admin client and all.
    expect((await ext.tenant('initech', ['issuance:offer'])).secret).toBeDefined();
  });
});

describe('start-up', () => {
  it('stops with one line naming AUTH_CLIENT_ID when the root client cannot be made at the provider', async () => {
    const op = await startOpenIdProvider({ realm: 'svc', clients: [] });
    // The admin client may make the realm roles, but no clients.
    if (op.realm) op.realm.adminClientRoles = new Set(['manage-realm', 'manage-users']);
    try {
      const env = {
        NODE_ENV: 'test',
        PORT: '0',
        LOG_LEVEL: 'silent',
        DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-provider-start-')),
        MASTER_SECRET: 'm'.repeat(40),
        OIDC: op.issuer,
        OIDC_CLIENT_ID: ADMIN_CLIENT.clientId,
        OIDC_CLIENT_SECRET: ADMIN_CLIENT.secret,
        AUTH_CLIENT_ID: 'root',
        AUTH_CLIENT_SECRET: 'root-secret-0123456789',
      };
      const err = await start(env, () => {}).then(
        async (running) => {
          await running.close();
          return undefined;
        },
        (failure: unknown) => failure,
      );
      expect(err).toBeInstanceOf(StartUpError);
      expect((err as StartUpError).exitCode).toBe(69);
      expect((err as Error).message).toContain('AUTH_CLIENT_ID');
      expect((err as Error).message).toContain('identity provider');
      expect((err as Error).message).toContain('403');
    } finally {
      await op.stop();
    }
  });
});
