import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, fieldsOf, problemOf } from '../support/problems.js';
import { ALL_TENANT_ROLES, ROOT_ID, startService, type TestService } from '../support/service.js';

let svc: TestService;
let root: string;
beforeAll(async () => {
  svc = await startService();
  root = await svc.rootToken();
});
afterAll(() => svc.stop());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Every path in a JSON value at which an object key named `name` occurs. */
function keysNamed(value: unknown, name: string, path = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => keysNamed(v, name, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => [...(k === name ? [`${path}.${k}`] : []), ...keysNamed(v, name, `${path}.${k}`)]);
  }
  return [];
}

const createTenant = (body: Record<string, unknown>, token = root) => svc.raw('POST', '/api/tenant', { token, body });
const getTenant = (id: string, token = root) => svc.call('GET', `/api/tenant/${encodeURIComponent(id)}`, { token });
const patchTenant = (id: string, body: unknown, token = root) => svc.raw('PATCH', `/api/tenant/${encodeURIComponent(id)}`, { token, body });
const deleteTenant = (id: string, token = root) => svc.call('DELETE', `/api/tenant/${encodeURIComponent(id)}`, { token });
const tokenReply = (clientId: string, secret: string) =>
  svc.call('POST', '/api/oauth2/token', { body: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret } });

const tenantRow = (id: string) => svc.db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
const clientRow = (id: string) => svc.db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();

async function countRows(table: 'clients' | 'users' | 'audit_log', tenantId: string): Promise<number> {
  const row = await svc.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function auditEntries(): Promise<any[]> {
  const reply = await svc.call('GET', '/api/admin/audit-logs?limit=500', { token: root });
  expect(reply.status).toBe(200);
  return reply.body;
}

describe('POST /api/tenant', () => {
  it('creates an active tenant without an admin client when no roles are given', async () => {
    const reply = await createTenant({ id: 'plain', name: 'Plain Tenant' });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toEqual({
      id: 'plain',
      name: 'Plain Tenant',
      description: null,
      status: 'active',
      sessionConfig: null,
      statusListConfig: null,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      clients: [],
    });
    expect(reply.body).not.toHaveProperty('client');
    expect(await countRows('clients', 'plain')).toBe(0);
    expect(await tenantRow('plain')).toMatchObject({ id: 'plain', status: 'active', admin_client_id: null });
  });

  it('creates an admin client {id}-admin for roles and returns its secret once, and the secret works', async () => {
    const roles = ['clients:manage', 'issuance:manage'];
    const reply = await createTenant({ id: 'acme', name: 'Acme', description: 'the Acme company', roles });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toMatchObject({ id: 'acme', name: 'Acme', description: 'the Acme company', status: 'active' });
    expect(reply.body.client).toEqual({ clientId: 'acme-admin', secret: expect.any(String), roles });
    const secret = reply.body.client.secret as string;
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(reply.body.clients).toEqual([
      {
        clientId: 'acme-admin',
        tenantId: 'acme',
        description: 'administrator of acme',
        roles,
        allowedPresentationConfigs: null,
        allowedIssuanceConfigs: null,
        createdAt: expect.stringMatching(ISO),
        updatedAt: expect.stringMatching(ISO),
      },
    ]);
    expect(keysNamed(reply.body.clients, 'secret')).toEqual([]);
    expect(await tenantRow('acme')).toMatchObject({ admin_client_id: 'acme-admin', status: 'active' });

    const token = await tokenReply('acme-admin', secret);
    expect(token.status, token.text).toBe(200);
    const own = await svc.call('GET', '/api/client', { token: token.body.access_token });
    expect(own.status).toBe(200);
    expect(own.body.map((c: { clientId: string }) => c.clientId)).toEqual(['acme-admin']);
    expect((await tokenReply('acme-admin', `${secret}x`)).status).toBe(401);

    // the secret is shown once: reading the tenant again never returns it
    const again = await getTenant('acme');
    expect(again.status).toBe(200);
    expect(again.body).not.toHaveProperty('client');
    expect(keysNamed(again.body, 'secret')).toEqual([]);
    expect(again.text).not.toContain(secret);
  });

  it('stores session and status list configuration, dropping keys that are null', async () => {
    const reply = await createTenant({
      id: 'configured',
      name: 'Configured',
      sessionConfig: { ttlSeconds: 120, cleanupMode: null },
      statusListConfig: { capacity: 100, bits: 8, ttl: 60, immediateUpdate: false, enableAggregation: null },
    });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body.sessionConfig).toEqual({ ttlSeconds: 120 });
    expect(reply.body.statusListConfig).toEqual({ capacity: 100, bits: 8, ttl: 60, immediateUpdate: false });
    const row = await tenantRow('configured');
    expect(JSON.parse(row?.session_config as string)).toEqual({ ttlSeconds: 120 });
    expect(JSON.parse(row?.status_list_config as string)).toEqual({ capacity: 100, bits: 8, ttl: 60, immediateUpdate: false });
    expect((await getTenant('configured')).body).toMatchObject({
      sessionConfig: { ttlSeconds: 120 },
      statusListConfig: reply.body.statusListConfig,
    });
  });

  it('stores a config whose keys are all null as null', async () => {
    const reply = await createTenant({ id: 'all-null', name: 'All null', sessionConfig: { ttlSeconds: null }, statusListConfig: {} });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toMatchObject({ sessionConfig: null, statusListConfig: null });
    expect(await tenantRow('all-null')).toMatchObject({ session_config: null, status_list_config: null });
  });

  it.each([
    ['sessionConfig.ttlSeconds below 60', { sessionConfig: { ttlSeconds: 59 } }, 'body.sessionConfig.ttlSeconds'],
    ['an unknown cleanupMode', { sessionConfig: { cleanupMode: 'shred' } }, 'body.sessionConfig.cleanupMode'],
    ['statusListConfig.capacity below 100', { statusListConfig: { capacity: 99 } }, 'body.statusListConfig.capacity'],
    ['statusListConfig.bits of 3', { statusListConfig: { bits: 3 } }, 'body.statusListConfig.bits'],
    ['statusListConfig.ttl below 60', { statusListConfig: { ttl: 59 } }, 'body.statusListConfig.ttl'],
    ['a non-integer capacity', { statusListConfig: { capacity: 150.5 } }, 'body.statusListConfig.capacity'],
    ['an unknown body field', { colour: 'blue' }, 'body.colour'],
    ['an unknown key in a config', { statusListConfig: { size: 1000 } }, 'body.statusListConfig.size'],
    ['an empty roles list', { roles: [] }, 'body.roles'],
    ['an unknown role', { roles: ['tenants:destroy'] }, 'body.roles.0'],
    ['an empty name', { name: '' }, 'body.name'],
  ])('rejects %s with a 400 naming the field', async (_, change, field) => {
    const reply = await createTenant({ id: 'invalid', name: 'Invalid', ...change });
    expectProblem(reply, 400);
    expect(fieldsOf(reply)).toEqual([field]);
    expect(await tenantRow('invalid')).toBeUndefined();
  });

  it.each([['bad id'], ['bad/id'], ['-leading-dash'], ['ünïcode'], ['x'.repeat(65)], ['']])('rejects the tenant id %j', async (id) => {
    const reply = await createTenant({ id, name: 'Bad id' });
    expectProblem(reply, 400);
    expect(fieldsOf(reply)).toEqual(['body.id']);
    expect(await tenantRow(id)).toBeUndefined();
  });

  it('accepts an id of 64 URL-safe characters', async () => {
    const id = `A1._~-${'z'.repeat(58)}`;
    const reply = await createTenant({ id, name: 'Long id' });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body.id).toBe(id);
    expect((await getTenant(id)).status).toBe(200);
  });

  it('rejects a missing id and name', async () => {
    const reply = await createTenant({});
    expectProblem(reply, 400);
    expect(fieldsOf(reply).sort()).toEqual(['body.id', 'body.name']);
  });

  it('refuses tenants:manage for the admin client and creates nothing', async () => {
    const reply = await createTenant({ id: 'overreach', name: 'Overreach', roles: ['clients:manage', 'tenants:manage'] });
    expectProblem(reply, 400);
    expect(fieldsOf(reply)).toEqual(['body.roles']);
    expect(await tenantRow('overreach')).toBeUndefined();
    expect(await clientRow('overreach-admin')).toBeUndefined();
  });

  it('answers a duplicate id with 409 and leaves the existing tenant alone', async () => {
    const first = await createTenant({ id: 'twice', name: 'First', roles: ['clients:manage'] });
    expect(first.status).toBe(201);
    const hashBefore = (await clientRow('twice-admin'))?.secret_hash;
    const second = await createTenant({ id: 'twice', name: 'Second', roles: ['users:manage'] });
    expectProblem(second, 409);
    expect(second.body).not.toHaveProperty('client');
    const current = await getTenant('twice');
    expect(current.body).toMatchObject({ name: 'First' });
    expect(current.body.clients).toHaveLength(1);
    expect(current.body.clients[0]).toMatchObject({ clientId: 'twice-admin', roles: ['clients:manage'] });
    expect((await clientRow('twice-admin'))?.secret_hash).toBe(hashBefore);
    expect((await tokenReply('twice-admin', first.body.client.secret)).status).toBe(200);
  });

  it('requires an access token', async () => {
    const reply = await svc.call('POST', '/api/tenant', { body: { id: 'anonymous', name: 'Anonymous' } });
    expectProblem(reply, 401);
    expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(await tenantRow('anonymous')).toBeUndefined();
  });
});

describe('GET /api/tenant', () => {
  it('lists every tenant with its clients, and returns one by id', async () => {
    await createTenant({ id: 'list-a', name: 'List A', roles: ['issuance:manage'] });
    await createTenant({ id: 'list-b', name: 'List B' });
    const list = await svc.raw('GET', '/api/tenant', { token: root });
    expect(list.status).toBe(200);
    const ids = list.body.map((t: { id: string }) => t.id);
    expect(ids).toEqual(expect.arrayContaining(['list-a', 'list-b', 'acme', 'plain']));
    expect(ids).toHaveLength(new Set(ids).size);
    const a = list.body.find((t: { id: string }) => t.id === 'list-a');
    expect(a).toMatchObject({
      name: 'List A',
      status: 'active',
      clients: [{ clientId: 'list-a-admin', tenantId: 'list-a', roles: ['issuance:manage'] }],
    });
    expect(list.body.find((t: { id: string }) => t.id === 'list-b').clients).toEqual([]);
    expect(keysNamed(list.body, 'secret')).toEqual([]);
    // the root client belongs to no tenant and appears in none
    expect(list.body.flatMap((t: { clients: { clientId: string }[] }) => t.clients.map((c) => c.clientId))).not.toContain(ROOT_ID);

    const one = await getTenant('list-a');
    expect(one.status).toBe(200);
    expect(one.body).toEqual(a);
  });

  it('answers an unknown tenant with a 404 problem', async () => {
    const reply = await getTenant('no-such-tenant');
    expectProblem(reply, 404);
    expect(problemOf(reply).detail).toContain('no-such-tenant');
  });
});

describe('PATCH /api/tenant/{id}', () => {
  it('updates name and description, and null clears the description', async () => {
    const created = await createTenant({ id: 'rename', name: 'Old name', description: 'old' });
    const reply = await patchTenant('rename', { name: 'New name', description: 'new' });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({
      id: 'rename',
      name: 'New name',
      description: 'new',
      status: 'active',
      createdAt: created.body.createdAt,
    });
    expect(reply.body).not.toHaveProperty('client');
    expect(reply.body.updatedAt >= created.body.updatedAt).toBe(true);
    expect(await tenantRow('rename')).toMatchObject({ name: 'New name', description: 'new' });

    const cleared = await patchTenant('rename', { description: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ name: 'New name', description: null });
    expect((await getTenant('rename')).body).toMatchObject({ name: 'New name', description: null });
  });

  it('merges sessionConfig key by key; null on a key resets it, null on the object resets all', async () => {
    await createTenant({ id: 'session-merge', name: 'Session merge', sessionConfig: { ttlSeconds: 300, cleanupMode: 'anonymize' } });

    let reply = await patchTenant('session-merge', { sessionConfig: { ttlSeconds: 600 } });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.sessionConfig).toEqual({ ttlSeconds: 600, cleanupMode: 'anonymize' });

    reply = await patchTenant('session-merge', { sessionConfig: { cleanupMode: null } });
    expect(reply.body.sessionConfig).toEqual({ ttlSeconds: 600 });
    expect(JSON.parse((await tenantRow('session-merge'))?.session_config as string)).toEqual({ ttlSeconds: 600 });

    reply = await patchTenant('session-merge', { sessionConfig: { cleanupMode: 'full' } });
    expect(reply.body.sessionConfig).toEqual({ ttlSeconds: 600, cleanupMode: 'full' });

    reply = await patchTenant('session-merge', { sessionConfig: null });
    expect(reply.body.sessionConfig).toBeNull();
    expect((await tenantRow('session-merge'))?.session_config).toBeNull();

    reply = await patchTenant('session-merge', { sessionConfig: { ttlSeconds: 90 } });
    expect(reply.body.sessionConfig).toEqual({ ttlSeconds: 90 });
    reply = await patchTenant('session-merge', { sessionConfig: { ttlSeconds: null } });
    expect(reply.body.sessionConfig).toBeNull();
    expect((await getTenant('session-merge')).body.sessionConfig).toBeNull();
  });

  it('merges statusListConfig key by key, keeping false values, and leaves the other config alone', async () => {
    await createTenant({
      id: 'status-merge',
      name: 'Status merge',
      sessionConfig: { ttlSeconds: 3600 },
      statusListConfig: { capacity: 1000, bits: 2, immediateUpdate: true },
    });

    let reply = await patchTenant('status-merge', { statusListConfig: { bits: 4, enableAggregation: false } });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.statusListConfig).toEqual({ capacity: 1000, bits: 4, immediateUpdate: true, enableAggregation: false });
    expect(reply.body.sessionConfig).toEqual({ ttlSeconds: 3600 });

    reply = await patchTenant('status-merge', { statusListConfig: { capacity: null, immediateUpdate: null, ttl: 120 } });
    expect(reply.body.statusListConfig).toEqual({ bits: 4, enableAggregation: false, ttl: 120 });
    expect(JSON.parse((await tenantRow('status-merge'))?.status_list_config as string)).toEqual({
      bits: 4,
      enableAggregation: false,
      ttl: 120,
    });

    // a PATCH without the config keeps it
    reply = await patchTenant('status-merge', { name: 'Renamed' });
    expect(reply.body).toMatchObject({
      name: 'Renamed',
      sessionConfig: { ttlSeconds: 3600 },
      statusListConfig: { bits: 4, enableAggregation: false, ttl: 120 },
    });

    reply = await patchTenant('status-merge', { statusListConfig: null });
    expect(reply.body.statusListConfig).toBeNull();
    expect(reply.body.sessionConfig).toEqual({ ttlSeconds: 3600 });
    const row = await tenantRow('status-merge');
    expect(row?.status_list_config).toBeNull();
    expect(JSON.parse(row?.session_config as string)).toEqual({ ttlSeconds: 3600 });
    expect((await getTenant('status-merge')).body).toMatchObject({ statusListConfig: null, sessionConfig: { ttlSeconds: 3600 } });
  });

  it.each([
    ['sessionConfig.ttlSeconds below 60', { sessionConfig: { ttlSeconds: 59 } }, 'body.sessionConfig.ttlSeconds'],
    ['statusListConfig.capacity below 100', { statusListConfig: { capacity: 99 } }, 'body.statusListConfig.capacity'],
    ['statusListConfig.bits of 3', { statusListConfig: { bits: 3 } }, 'body.statusListConfig.bits'],
    ['statusListConfig.ttl below 60', { statusListConfig: { ttl: 59 } }, 'body.statusListConfig.ttl'],
    ['an id (not updatable)', { id: 'other' }, 'body.id'],
    ['an unknown body field', { status: 'initializing' }, 'body.status'],
    ['a null name', { name: null }, 'body.name'],
    ['an empty roles list', { roles: [] }, 'body.roles'],
  ])('rejects %s and changes nothing', async (_, change, field) => {
    const id = 'patch-invalid';
    if (!(await tenantRow(id))) {
      await createTenant({ id, name: 'Unchanged', sessionConfig: { ttlSeconds: 120 }, statusListConfig: { bits: 2 } });
    }
    const before = await tenantRow(id);
    const reply = await patchTenant(id, { name: 'Changed', ...change });
    expectProblem(reply, 400);
    expect(fieldsOf(reply)).toEqual([field]);
    expect(await tenantRow(id)).toEqual(before);
  });

  it('answers an unknown tenant with 404', async () => {
    const reply = await patchTenant('no-such-tenant', { name: 'Ghost' });
    expectProblem(reply, 404);
    expect(await tenantRow('no-such-tenant')).toBeUndefined();
  });

  it("replaces the admin client's roles without a new secret", async () => {
    const created = await createTenant({ id: 'reroled', name: 'Reroled', roles: ['clients:manage'] });
    const hashBefore = (await clientRow('reroled-admin'))?.secret_hash;
    const reply = await patchTenant('reroled', { roles: ['users:manage', 'issuance:offer'] });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).not.toHaveProperty('client');
    expect(reply.body.clients).toEqual([expect.objectContaining({ clientId: 'reroled-admin', roles: ['users:manage', 'issuance:offer'] })]);
    expect(keysNamed(reply.body, 'secret')).toEqual([]);

    const client = await svc.call('GET', '/api/client/reroled-admin', { token: root });
    expect(client.status).toBe(200);
    expect(client.body).toMatchObject({ clientId: 'reroled-admin', tenantId: 'reroled', roles: ['users:manage', 'issuance:offer'] });
    const row = await clientRow('reroled-admin');
    expect(JSON.parse(row?.roles as string)).toEqual(['users:manage', 'issuance:offer']);
    expect(row?.secret_hash).toBe(hashBefore);
    expect((await tokenReply('reroled-admin', created.body.client.secret)).status).toBe(200);
  });

  it('re-creates a deleted admin client with a new secret', async () => {
    const created = await createTenant({ id: 'phoenix', name: 'Phoenix', roles: ['clients:manage'] });
    const oldSecret = created.body.client.secret as string;
    expect((await svc.call('DELETE', '/api/client/phoenix-admin', { token: root })).status).toBe(204);
    expect(await clientRow('phoenix-admin')).toBeUndefined();

    const reply = await patchTenant('phoenix', { roles: ['clients:manage', 'users:manage'] });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.client).toEqual({ clientId: 'phoenix-admin', secret: expect.any(String), roles: ['clients:manage', 'users:manage'] });
    const secret = reply.body.client.secret as string;
    expect(secret).not.toBe(oldSecret);
    expect(reply.body.clients).toEqual([
      expect.objectContaining({ clientId: 'phoenix-admin', tenantId: 'phoenix', roles: ['clients:manage', 'users:manage'] }),
    ]);

    const client = await svc.call('GET', '/api/client/phoenix-admin', { token: root });
    expect(client.status).toBe(200);
    expect(client.body).toMatchObject({ tenantId: 'phoenix', roles: ['clients:manage', 'users:manage'] });
    expect(client.body).not.toHaveProperty('secret');
    expect(await tenantRow('phoenix')).toMatchObject({ admin_client_id: 'phoenix-admin' });

    expect((await tokenReply('phoenix-admin', oldSecret)).status).toBe(401);
    const token = await tokenReply('phoenix-admin', secret);
    expect(token.status).toBe(200);
    expect((await svc.call('GET', '/api/user', { token: token.body.access_token })).status).toBe(200);
  });

  it('creates the admin client for a tenant that was created without roles', async () => {
    await createTenant({ id: 'late-admin', name: 'Late admin' });
    const reply = await patchTenant('late-admin', { roles: ['clients:manage'] });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.client).toEqual({ clientId: 'late-admin-admin', secret: expect.any(String), roles: ['clients:manage'] });
    expect(await tenantRow('late-admin')).toMatchObject({ admin_client_id: 'late-admin-admin' });
    expect(await clientRow('late-admin-admin')).toMatchObject({ tenant_id: 'late-admin' });
    expect((await tokenReply('late-admin-admin', reply.body.client.secret)).status).toBe(200);
  });

  it('refuses tenants:manage for the admin client and rolls back the whole update', async () => {
    await createTenant({ id: 'no-escalation', name: 'No escalation', roles: ['clients:manage'] });
    const before = await tenantRow('no-escalation');
    const reply = await patchTenant('no-escalation', { name: 'Escalated', statusListConfig: { bits: 8 }, roles: ['tenants:manage'] });
    expectProblem(reply, 400);
    expect(fieldsOf(reply)).toEqual(['body.roles']);
    expect(await tenantRow('no-escalation')).toEqual(before);
    expect(JSON.parse((await clientRow('no-escalation-admin'))?.roles as string)).toEqual(['clients:manage']);
  });
});

describe('DELETE /api/tenant/{id}', () => {
  it("deletes the tenant and its clients, users and audit entries, and nothing of other tenants'", async () => {
    const doomed = await svc.tenant('doomed');
    const survivor = await svc.tenant('survivor');
    for (const [tenant, admin] of [
      ['doomed', doomed],
      ['survivor', survivor],
    ] as const) {
      const client = await svc.call('POST', '/api/client', {
        token: admin.token,
        body: { clientId: `${tenant}-app`, roles: ['issuance:offer'] },
      });
      expect(client.status, client.text).toBe(201);
      const user = await svc.call('POST', '/api/user', {
        token: admin.token,
        body: { username: `${tenant}-user`, roles: ['issuance:manage'] },
      });
      expect(user.status, user.text).toBe(201);
    }
    for (const tenant of ['doomed', 'survivor']) {
      expect(await countRows('clients', tenant)).toBe(2);
      expect(await countRows('users', tenant)).toBe(1);
      expect(await countRows('audit_log', tenant)).toBeGreaterThanOrEqual(3);
    }
    const survivorAudit = await countRows('audit_log', 'survivor');

    const reply = await deleteTenant('doomed');
    expect(reply.status, reply.text).toBe(204);
    expect(reply.text).toBe('');

    expect(await tenantRow('doomed')).toBeUndefined();
    expect(await countRows('clients', 'doomed')).toBe(0);
    expect(await clientRow('doomed-admin')).toBeUndefined();
    expect(await clientRow('doomed-app')).toBeUndefined();
    expect(await countRows('users', 'doomed')).toBe(0);
    expect(await svc.db.selectFrom('users').select('id').where('username', '=', 'doomed-user').execute()).toEqual([]);
    expect(await countRows('audit_log', 'doomed')).toBe(0);

    expect(await tenantRow('survivor')).toBeDefined();
    expect(await countRows('clients', 'survivor')).toBe(2);
    expect(await countRows('users', 'survivor')).toBe(1);
    expect(await countRows('audit_log', 'survivor')).toBe(survivorAudit);
    expect(await clientRow(ROOT_ID)).toBeDefined();

    expectProblem(await getTenant('doomed'), 404);
    // the deleted tenant's credentials and tokens no longer work; the other tenant's do
    expect((await tokenReply('doomed-admin', doomed.secret)).status).toBe(401);
    const stale = await svc.call('GET', '/api/client', { token: doomed.token });
    expectProblem(stale, 401);
    expect(stale.headers.get('www-authenticate')).toContain('invalid_token');
    expect((await svc.call('GET', '/api/client', { token: survivor.token })).status).toBe(200);

    // the deletion itself is audited outside the deleted tenant
    const entry = (await auditEntries()).find((e) => e.actionType === 'tenant.deleted' && e.before?.id === 'doomed');
    expect(entry).toMatchObject({ tenantId: null, actorId: ROOT_ID, after: null, before: { id: 'doomed', name: 'Tenant doomed' } });
  });

  it('answers an unknown or already deleted tenant with 404', async () => {
    expectProblem(await deleteTenant('no-such-tenant'), 404);
    await createTenant({ id: 'once', name: 'Once' });
    expect((await deleteTenant('once')).status).toBe(204);
    expectProblem(await deleteTenant('once'), 404);
  });

  it('allows a tenant with the same id to be created again, with a fresh admin client', async () => {
    const first = await createTenant({ id: 'reborn', name: 'First life', roles: ['clients:manage'] });
    expect((await deleteTenant('reborn')).status).toBe(204);
    const second = await createTenant({ id: 'reborn', name: 'Second life', roles: ['users:manage'] });
    expect(second.status, second.text).toBe(201);
    expect(second.body.client).toMatchObject({ clientId: 'reborn-admin', roles: ['users:manage'] });
    expect((await tokenReply('reborn-admin', first.body.client.secret)).status).toBe(401);
    expect((await tokenReply('reborn-admin', second.body.client.secret)).status).toBe(200);
  });
});

describe('access to the tenant endpoints', () => {
  it('refuses a tenant admin without tenants:manage on every endpoint with 403', async () => {
    const admin = await svc.tenant('guarded', ALL_TENANT_ROLES);
    const before = await tenantRow('guarded');
    const attempts: [string, string, unknown?][] = [
      ['GET', '/api/tenant'],
      ['POST', '/api/tenant', { id: 'sneaky', name: 'Sneaky' }],
      ['GET', '/api/tenant/guarded'],
      ['PATCH', '/api/tenant/guarded', { name: 'Hijacked', roles: ['clients:manage'] }],
      ['DELETE', '/api/tenant/guarded'],
      ['GET', '/api/tenant/acme'],
      ['PATCH', '/api/tenant/acme', { name: 'Hijacked' }],
      ['DELETE', '/api/tenant/acme'],
    ];
    for (const [method, path, body] of attempts) {
      const reply = await svc.raw(method, path, { token: admin.token, body });
      expectProblem(reply, 403);
      expect(problemOf(reply).detail).toContain('tenants:manage');
    }
    expect(await tenantRow('sneaky')).toBeUndefined();
    expect(await tenantRow('guarded')).toEqual(before);
    expect(await tenantRow('acme')).toMatchObject({ name: 'Acme' });
  });

  it('refuses requests without a valid token with 401', async () => {
    for (const [method, path] of [
      ['GET', '/api/tenant'],
      ['GET', '/api/tenant/acme'],
      ['PATCH', '/api/tenant/acme'],
      ['DELETE', '/api/tenant/acme'],
    ]) {
      const reply = await svc.raw(method as string, path as string, { body: method === 'PATCH' ? { name: 'x' } : undefined });
      expectProblem(reply, 401);
      expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer realm="svc"/);
      const forged = await svc.raw(method as string, path as string, {
        token: 'not.a.jwt',
        body: method === 'PATCH' ? { name: 'x' } : undefined,
      });
      expectProblem(forged, 401);
    }
    expect(await tenantRow('acme')).toMatchObject({ name: 'Acme' });
  });

  it('admits a tenant-less client that holds only tenants:manage', async () => {
    const created = await svc.call('POST', '/api/client', {
      token: root,
      body: { clientId: 'tenant-operator', roles: ['tenants:manage'] },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.tenantId).toBeNull();
    const token = await svc.token('tenant-operator', created.body.secret);
    const reply = await svc.call('POST', '/api/tenant', { token, body: { id: 'by-operator', name: 'By operator' } });
    expect(reply.status, reply.text).toBe(201);
    expect((await svc.call('GET', '/api/tenant/by-operator', { token })).status).toBe(200);
  });
});

describe('audit of tenant changes', () => {
  it('records tenant.created without any secret', async () => {
    const created = await createTenant({ id: 'audited', name: 'Audited', sessionConfig: { ttlSeconds: 600 }, roles: ['clients:manage'] });
    expect(created.status).toBe(201);
    const secret = created.body.client.secret as string;

    const entries = await auditEntries();
    const entry = entries.find((e) => e.actionType === 'tenant.created' && e.after?.id === 'audited');
    expect(entry).toEqual({
      id: expect.any(String),
      tenantId: null,
      actionType: 'tenant.created',
      actorType: 'client',
      actorId: ROOT_ID,
      actorDisplay: ROOT_ID,
      actingAdminId: null,
      changedFields: expect.arrayContaining(['id', 'name', 'status', 'sessionConfig']),
      before: null,
      after: {
        id: 'audited',
        name: 'Audited',
        description: null,
        status: 'active',
        sessionConfig: { ttlSeconds: 600 },
        statusListConfig: null,
        createdAt: created.body.createdAt,
        updatedAt: created.body.updatedAt,
      },
      requestId: expect.any(String),
      timestamp: expect.stringMatching(ISO),
    });
    expect(keysNamed(entry, 'secret')).toEqual([]);
    expect(JSON.stringify(entry)).not.toContain(secret);

    // neither the admin client's own entry nor anything stored in the audit table reveals the secret
    const clientEntry = entries.find((e) => e.actionType === 'client.created' && e.after?.clientId === 'audited-admin');
    expect(clientEntry).toMatchObject({ tenantId: 'audited', after: { clientId: 'audited-admin', roles: ['clients:manage'] } });
    expect(JSON.stringify(entries)).not.toContain(secret);
    const rows = await svc.db.selectFrom('audit_log').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(secret);
  });

  it('records tenant.updated with before, after and the changed fields', async () => {
    await createTenant({ id: 'audit-update', name: 'Before' });
    expect((await patchTenant('audit-update', { name: 'After' })).status).toBe(200);
    const entry = (await auditEntries()).find((e) => e.actionType === 'tenant.updated' && e.after?.id === 'audit-update');
    expect(entry).toMatchObject({ tenantId: null, actorId: ROOT_ID, before: { name: 'Before' }, after: { name: 'After' } });
    expect(entry.changedFields).toContain('name');
    expect(entry.changedFields).not.toContain('description');
  });
});
