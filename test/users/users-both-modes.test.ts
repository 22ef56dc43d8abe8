// The same /api/user tests in both modes: users kept by the service (integrated mode) and users kept
// at the identity provider (external mode, a fake Keycloak realm). Same requests, same answers; what
// only one mode stores (hashes, encrypted addresses; Keycloak's attributes and required actions) is
// checked beside, in users.test.ts and below.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../src/platform/auth/roles.js';
import { startExternalService } from '../support/external-service.js';
import type { TestProvider } from '../support/oidc-provider.js';
import { createdBody, expectProblem, fieldsOf, problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

interface Setup {
  svc: TestService;
  op?: TestProvider;
  tenantToken(id: string): Promise<string>;
  client(adminToken: string, clientId: string, roles: Role[]): Promise<string>;
  rootToken(): Promise<string>;
  stop(): Promise<void>;
}

async function integrated(): Promise<Setup> {
  const svc = await startService();
  return {
    svc,
    tenantToken: async (id) => (await svc.tenant(id)).token,
    client: (adminToken, clientId, roles) => svc.client(adminToken, clientId, roles),
    rootToken: () => svc.rootToken(),
    stop: () => svc.stop(),
  };
}

async function external(): Promise<Setup> {
  const ext = await startExternalService();
  return {
    svc: ext.svc,
    op: ext.op,
    tenantToken: async (id) => (await ext.tenant(id)).token,
    client: (adminToken, clientId, roles) => ext.client(adminToken, clientId, roles),
    rootToken: () => ext.rootToken(),
    stop: () => ext.stop(),
  };
}

/** The status of a request whose path is sent exactly as given. */
function rawStatus(base: string, method: string, path: string, token: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(base);
    const sent = httpRequest({ hostname, port, path, method, headers: { authorization: `Bearer ${token}` } }, (reply) => {
      reply.resume();
      reply.on('end', () => resolve(reply.statusCode));
    });
    sent.on('error', reject);
    sent.end();
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe.each([
  ['integrated mode', integrated],
  ['external mode', external],
])('/api/user in %s', (_mode, start) => {
  let setup: Setup;
  let acme: string;
  let globex: string;
  beforeAll(async () => {
    setup = await start();
    acme = await setup.tenantToken('acme');
    globex = await setup.tenantToken('globex');
  });
  afterAll(() => setup?.stop());

  const call = (method: string, path: string, token: string, body?: unknown) => setup.svc.raw(method, path, { token, body });
  async function created(token: string, body: Record<string, unknown>) {
    return createdBody<{ id: string; temporaryPassword: string; createdAt: string; [key: string]: unknown }>(
      await call('POST', '/api/user', token, body),
    );
  }

  it('creates a user and shows the temporary password only then', async () => {
    const reply = await call('POST', '/api/user', acme, { username: 'alice', roles: ['issuance:offer'], email: 'alice@example.org' });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toEqual({
      id: expect.stringMatching(UUID),
      username: 'alice',
      email: 'alice@example.org',
      enabled: true,
      roles: ['issuance:offer'],
      tenantId: 'acme',
      createdAt: expect.any(String),
      updatedAt: reply.body.createdAt,
      temporaryPassword: expect.any(String),
    });
    const { temporaryPassword, ...user } = reply.body;
    expect(temporaryPassword.length).toBeGreaterThanOrEqual(16);
    const fetched = await call('GET', `/api/user/${user.id}`, acme);
    expect(fetched.body).toEqual(user);
    const listed = await call('GET', '/api/user', acme);
    expect(listed.body).toContainEqual(user);
    expect(listed.text).not.toContain(temporaryPassword);
  });

  it('takes a supplied temporary password, and refuses a short one naming the field', async () => {
    const user = await created(acme, { username: 'bob', roles: [], temporaryPassword: 'Supplied-Passw0rd' });
    expect(user.temporaryPassword).toBe('Supplied-Passw0rd');
    const short = await call('POST', '/api/user', acme, { username: 'bobby', roles: [], temporaryPassword: 'short' });
    expectProblem(short, 400);
    expect(fieldsOf(short)).toEqual(['body.temporaryPassword']);
  });

  it('answers a duplicate username in the tenant with 409, and allows it in another tenant', async () => {
    await created(acme, { username: 'carol', roles: [] });
    expectProblem(await call('POST', '/api/user', acme, { username: 'carol', roles: [] }), 409);
    const other = await created(globex, { username: 'carol', roles: [] });
    expect(other.tenantId).toBe('globex');
  });

  it('updates username, e-mail, enabled and roles', async () => {
    const user = await created(acme, { username: 'dave', roles: ['issuance:offer'], email: 'dave@example.org' });
    setup.svc.clock.advance(5);
    const reply = await call('PATCH', `/api/user/${user.id}`, acme, {
      username: 'david',
      email: null,
      enabled: false,
      roles: ['presentation:manage', 'users:manage'],
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({
      id: user.id,
      username: 'david',
      email: null,
      enabled: false,
      roles: ['presentation:manage', 'users:manage'],
      tenantId: 'acme',
      createdAt: user.createdAt,
      updatedAt: expect.any(String),
    });
    expect(Date.parse(reply.body.updatedAt)).toBeGreaterThan(Date.parse(user.createdAt));
    expect((await call('GET', `/api/user/${user.id}`, acme)).body).toEqual(reply.body);
  });

  it('deletes a user', async () => {
    const user = await created(acme, { username: 'erin', roles: [] });
    expect((await call('DELETE', `/api/user/${user.id}`, acme)).status).toBe(204);
    expectProblem(await call('GET', `/api/user/${user.id}`, acme), 404);
    expect((await call('GET', '/api/user', acme)).body.map((u: { id: string }) => u.id)).not.toContain(user.id);
  });

  it("keeps another tenant's users out of sight and reach (404)", async () => {
    const user = await created(acme, { username: 'frank', roles: [] });
    expect((await call('GET', '/api/user', globex)).body.map((u: { id: string }) => u.id)).not.toContain(user.id);
    for (const reply of [
      await call('GET', `/api/user/${user.id}`, globex),
      await call('PATCH', `/api/user/${user.id}`, globex, { enabled: false }),
      await call('DELETE', `/api/user/${user.id}`, globex),
    ]) {
      expectProblem(reply, 404);
    }
    expect((await call('GET', `/api/user/${user.id}`, acme)).body.enabled).toBe(true);
  });

  it('refuses a client without users:manage, and roles the caller lacks', async () => {
    const noUsers = await setup.client(acme, 'acme-no-users', ['issuance:manage']);
    expectProblem(await call('GET', '/api/user', noUsers), 403);
    const clerk = await setup.client(acme, 'acme-clerk', ['users:manage', 'issuance:offer']);
    const refused = await call('POST', '/api/user', clerk, { username: 'grace', roles: ['issuance:manage'] });
    expectProblem(refused, 403);
    expect(problemOf(refused).errors).toEqual([{ field: 'body.roles', message: 'the caller lacks issuance:manage' }]);
    expect((await call('GET', '/api/user', acme)).body.map((u: { username: string }) => u.username)).not.toContain('grace');
    expectProblem(await call('GET', '/api/user', await setup.rootToken()), 403);
  });

  it('answers 404 for an unknown id, a dot segment included', async () => {
    expectProblem(await call('GET', `/api/user/${crypto.randomUUID()}`, acme), 404);
    // Sent as raw bytes: fetch would resolve the dot segments before sending.
    for (const id of ['%2E%2E', '%2E']) {
      for (const method of ['GET', 'DELETE']) expect(await rawStatus(setup.svc.url, method, `/api/user/${id}`, acme)).toBe(404);
    }
  });
});

describe('users at the identity provider', () => {
  let ext: Awaited<ReturnType<typeof startExternalService>>;
  let acme: string;
  beforeAll(async () => {
    ext = await startExternalService();
    acme = (await ext.tenant('acme')).token;
  });
  afterAll(() => ext?.stop());

  it('are Keycloak users named {tenant}.{username}, with the tenant attribute, realm roles and a temporary password to change', async () => {
    const reply = await ext.svc.call('POST', '/api/user', {
      token: acme,
      body: { username: 'Heidi', roles: ['issuance:offer'], email: 'heidi@example.org' },
    });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body.username).toBe('heidi');
    const stored = ext.op.realm?.users.get(reply.body.id);
    expect(stored).toMatchObject({
      username: 'acme.heidi',
      email: 'heidi@example.org',
      attributes: { tenant_id: ['acme'] },
      requiredActions: ['UPDATE_PASSWORD'],
      password: { value: reply.body.temporaryPassword, temporary: true },
    });
    expect([...(stored?.realmRoles ?? [])]).toEqual(['issuance:offer']);
    expect(await ext.svc.db.selectFrom('users').selectAll().execute()).toEqual([]);
  });

  it("answers a temporary password the realm's policy refuses with 400 naming the field, and keeps no user", async () => {
    const realm = ext.op.realm;
    if (!realm) throw new Error('no realm');
    realm.passwordMinLength = 30;
    try {
      const reply = await ext.svc.call('POST', '/api/user', { token: acme, body: { username: 'judy', roles: [] } });
      expectProblem(reply, 400);
      expect(problemOf(reply).errors).toEqual([{ field: 'body.temporaryPassword', message: expect.stringContaining('password policy') }]);
      expect([...realm.users.values()].map((u) => u.username)).not.toContain('acme.judy');
    } finally {
      realm.passwordMinLength = 8;
    }
  });

  it('answers a username the realm refuses with 400 naming body.username, on create and update', async () => {
    const refused = await ext.svc.call('POST', '/api/user', { token: acme, body: { username: 'a<script>', roles: [] } });
    expectProblem(refused, 400);
    expect(problemOf(refused).errors).toEqual([{ field: 'body.username', message: 'refused by the identity provider' }]);
    const user = await ext.svc.call('POST', '/api/user', { token: acme, body: { username: 'kim', roles: [] } });
    const renamed = await ext.svc.raw('PATCH', `/api/user/${user.body.id}`, { token: acme, body: { username: '../../etc/passwd' } });
    expectProblem(renamed, 400);
    expect(renamed.body.errors[0].field).toBe('body.username');
  });

  it('answers 502 naming the provider when it cannot be reached', async () => {
    ext.op.adminApiDown(true);
    try {
      const reply = await ext.svc.call('GET', '/api/user', { token: acme });
      expectProblem(reply, 502);
      expect(problemOf(reply).detail).toContain('identity provider');
    } finally {
      ext.op.adminApiDown(false);
    }
  });

  it("honour a person's console token only while the person is an enabled user of the tenant", async () => {
    // Tokens as the provider issues them to people logging in through the console's public client.
    const personToken = (userId: string, tenantId = 'acme') =>
      ext.op.mint({
        iss: ext.op.issuer,
        aud: 'svc-service',
        azp: 'svc-ui',
        sub: userId,
        tenant_id: tenantId,
        roles: ['issuance:manage'],
        iat: Math.floor(Date.now() / 1000),
        exp: Math.floor(Date.now() / 1000) + 300,
      });
    const make = async (username: string) =>
      createdBody<{ id: string }>(await ext.svc.call('POST', '/api/user', { token: acme, body: { username, roles: ['issuance:manage'] } }));
    const live = await make('lena');
    expect((await ext.svc.call('GET', '/api/issuer/credentials', { token: await personToken(live.id) })).status).toBe(200);
    // Deleted, disabled, or a user of another tenant: the token the provider issued is refused.
    const gone = await make('gus');
    expect((await ext.svc.call('DELETE', `/api/user/${gone.id}`, { token: acme })).status).toBe(204);
    expectProblem(await ext.svc.call('GET', '/api/issuer/credentials', { token: await personToken(gone.id) }), 401);
    const off = await make('otto');
    expect((await ext.svc.call('PATCH', `/api/user/${off.id}`, { token: acme, body: { enabled: false } })).status).toBe(200);
    expectProblem(await ext.svc.call('GET', '/api/issuer/credentials', { token: await personToken(off.id) }), 401);
    const stranger = await make('sid');
    expectProblem(await ext.svc.call('GET', '/api/issuer/credentials', { token: await personToken(stranger.id, 'globex') }), 401);
  });

  it('go with their tenant when it is deleted', async () => {
    const initech = (await ext.tenant('initech')).token;
    await ext.svc.call('POST', '/api/user', { token: initech, body: { username: 'ivan', roles: [] } });
    expect((await ext.svc.call('DELETE', '/api/tenant/initech', { token: await ext.rootToken() })).status).toBe(204);
    expect([...(ext.op.realm?.users.values() ?? [])].map((u) => u.username)).not.toContain('initech.ivan');
  });
});
