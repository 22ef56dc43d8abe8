import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../src/platform/auth/roles.js';
import { engine } from '../support/database.js';
import type { Reply } from '../support/http.js';
import { problemOf } from '../support/problems.js';
import { ROOT_ID, startService, type TestService } from '../support/service.js';

interface Entry {
  id: string;
  tenantId: string | null;
  actionType: string;
  actorType: string;
  actorId: string;
  actorDisplay: string | null;
  actingAdminId: string | null;
  changedFields: string[];
  before: Record<string, any> | null;
  after: Record<string, any> | null;
  requestId: string | null;
  timestamp: string;
}

let svc: TestService;
let acme: { token: string; clientId: string; secret: string };
let globex: { token: string; clientId: string; secret: string };

beforeAll(async () => {
  svc = await startService();
  acme = await svc.tenant('acme');
  globex = await svc.tenant('globex');
});
afterAll(() => svc.stop());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const REDACTED = '[redacted]';
const CLIENT_FIELDS = [
  'allowedIssuanceConfigs',
  'allowedPresentationConfigs',
  'clientId',
  'createdAt',
  'description',
  'roles',
  'tenantId',
  'updatedAt',
];
const USER_FIELDS = ['createdAt', 'email', 'enabled', 'id', 'roles', 'tenantId', 'updatedAt', 'username'];

let counter = 0;
/** A request id no other request of this file carries. */
const rid = (what: string) => `${what}-${++counter}-${Date.now()}`;

/** A management call carrying an X-Request-Id. */
function send(method: string, path: string, token: string, requestId: string, body?: unknown) {
  return svc.raw(method, path, { token, body, headers: { 'x-request-id': requestId } });
}

async function ok(reply: Promise<Reply>, status = 200): Promise<Reply> {
  const r = await reply;
  expect(r.status, r.text).toBe(status);
  return r;
}

async function auditLog(token: string, limit = 500): Promise<Entry[]> {
  const reply = await svc.call('GET', `/api/admin/audit-logs?limit=${limit}`, { token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body as Entry[];
}

/** The one entry a request wrote, as the tenant sees it. */
async function entryOf(token: string, requestId: string): Promise<Entry> {
  const entries = (await auditLog(token)).filter((e) => e.requestId === requestId);
  expect(entries, `entries of ${requestId}`).toHaveLength(1);
  return entries[0] as Entry;
}

const allRows = () => svc.db.selectFrom('audit_log').selectAll().orderBy('seq').execute();
const countRows = async () => (await allRows()).length;

function expectTimestamp(value: string, since: number) {
  expect(value).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  expect(Date.parse(value)).toBeGreaterThanOrEqual(since - 1000);
  expect(Date.parse(value)).toBeLessThanOrEqual(Date.now() + 1000);
}

describe('client changes', () => {
  it('records client creation with the actor, the request id and an after snapshot without the secret', async () => {
    const since = Date.now();
    const requestId = rid('client-create');
    const secret = 'Acme-Worker-Secret-0123456789';
    const created = await ok(
      send('POST', '/api/client', acme.token, requestId, {
        clientId: 'acme-worker',
        roles: ['issuance:offer'],
        description: 'worker',
        secret,
      }),
      201,
    );

    const [latest] = await auditLog(acme.token, 1);
    expect(latest).toEqual({
      id: expect.stringMatching(UUID),
      tenantId: 'acme',
      actionType: 'client.created',
      actorType: 'client',
      actorId: acme.clientId,
      actorDisplay: acme.clientId,
      actingAdminId: null,
      changedFields: CLIENT_FIELDS,
      before: null,
      after: {
        clientId: 'acme-worker',
        tenantId: 'acme',
        description: 'worker',
        roles: ['issuance:offer'],
        allowedPresentationConfigs: null,
        allowedIssuanceConfigs: null,
        createdAt: created.body.createdAt,
        updatedAt: created.body.updatedAt,
      },
      requestId,
      timestamp: expect.any(String),
    });
    expectTimestamp(latest?.timestamp as string, since);
    expect(JSON.stringify(latest)).not.toContain(secret);
  });

  it('records a client update with the changed fields and before/after snapshots', async () => {
    await ok(
      send('POST', '/api/client', acme.token, rid('setup'), { clientId: 'acme-updated', roles: ['issuance:offer'], description: 'old' }),
      201,
    );
    svc.clock.advance(5);
    const requestId = rid('client-update');
    const updated = await ok(
      send('PATCH', '/api/client/acme-updated', acme.token, requestId, {
        roles: ['issuance:offer', 'presentation:request'],
        description: 'new',
        allowedIssuanceConfigs: ['pid'],
      }),
    );

    const entry = await entryOf(acme.token, requestId);
    expect(entry).toMatchObject({ tenantId: 'acme', actionType: 'client.updated', actorType: 'client', actorId: acme.clientId, requestId });
    expect(entry.changedFields).toEqual(['allowedIssuanceConfigs', 'description', 'roles', 'updatedAt']);
    expect(entry.before).toMatchObject({
      clientId: 'acme-updated',
      roles: ['issuance:offer'],
      description: 'old',
      allowedIssuanceConfigs: null,
    });
    expect(entry.after).toEqual({ ...updated.body });
    expect(entry.after).toMatchObject({
      roles: ['issuance:offer', 'presentation:request'],
      description: 'new',
      allowedIssuanceConfigs: ['pid'],
    });
  });

  it('records an update that changes only the roles with exactly those fields', async () => {
    await ok(
      send('POST', '/api/client', acme.token, rid('setup'), { clientId: 'acme-roles', roles: ['issuance:offer'], description: 'same' }),
      201,
    );
    svc.clock.advance(5);
    const requestId = rid('client-roles');
    await ok(send('PATCH', '/api/client/acme-roles', acme.token, requestId, { roles: ['issuance:manage'] }));
    const entry = await entryOf(acme.token, requestId);
    expect(entry.changedFields).toEqual(['roles', 'updatedAt']);
    expect(entry.before?.description).toBe('same');
    expect(entry.after?.description).toBe('same');
  });

  it('records a secret rotation with the new secret redacted', async () => {
    await ok(send('POST', '/api/client', acme.token, rid('setup'), { clientId: 'acme-rotated', roles: ['issuance:offer'] }), 201);
    const requestId = rid('client-rotate');
    const rotated = await ok(send('POST', '/api/client/acme-rotated/rotate-secret', acme.token, requestId));
    const secret = rotated.body.secret as string;
    expect(secret.length).toBeGreaterThanOrEqual(16);

    const entry = await entryOf(acme.token, requestId);
    expect(entry).toMatchObject({
      tenantId: 'acme',
      actionType: 'client.secret_rotated',
      actorType: 'client',
      actorId: acme.clientId,
      before: null,
    });
    // the new secret is either left out of the snapshot or redacted, never stored
    const { secret: recorded, ...rest } = entry.after ?? {};
    expect(rest).toEqual({ clientId: 'acme-rotated' });
    expect([undefined, REDACTED]).toContain(recorded);

    const rows = await svc.db.selectFrom('audit_log').selectAll().where('request_id', '=', requestId).execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(secret);
  });

  it('records client deletion with a before snapshot and no after', async () => {
    const created = await ok(
      send('POST', '/api/client', acme.token, rid('setup'), { clientId: 'acme-deleted', roles: ['issuance:offer'], description: 'bye' }),
      201,
    );
    const requestId = rid('client-delete');
    await ok(send('DELETE', '/api/client/acme-deleted', acme.token, requestId), 204);
    const entry = await entryOf(acme.token, requestId);
    const { secret: _secret, ...client } = created.body;
    expect(entry).toMatchObject({
      tenantId: 'acme',
      actionType: 'client.deleted',
      actorType: 'client',
      actorId: acme.clientId,
      after: null,
    });
    expect(entry.before).toEqual(client);
    expect(entry.changedFields).toEqual(CLIENT_FIELDS);
  });

  it("records the root client's change of a tenant's client in that tenant's log", async () => {
    const requestId = rid('root-client');
    await ok(
      send('POST', '/api/client', await svc.rootToken(), requestId, {
        clientId: 'acme-by-root',
        roles: ['issuance:offer'],
        tenantId: 'acme',
      }),
      201,
    );
    const entry = await entryOf(acme.token, requestId);
    expect(entry).toMatchObject({
      tenantId: 'acme',
      actionType: 'client.created',
      actorType: 'client',
      actorId: ROOT_ID,
      actorDisplay: ROOT_ID,
    });
    expect((await auditLog(globex.token)).some((e) => e.requestId === requestId)).toBe(false);
  });
});

describe('user changes', () => {
  it('records user creation with the e-mail redacted and no temporary password', async () => {
    const requestId = rid('user-create');
    const email = 'ulla.private@example.org';
    const temporaryPassword = 'Ulla-Temporary-Passw0rd';
    const created = await ok(
      send('POST', '/api/user', acme.token, requestId, { username: 'ulla', roles: ['issuance:offer'], email, temporaryPassword }),
      201,
    );

    const entry = await entryOf(acme.token, requestId);
    const { temporaryPassword: _t, ...user } = created.body;
    expect(entry).toEqual({
      id: expect.stringMatching(UUID),
      tenantId: 'acme',
      actionType: 'user.created',
      actorType: 'client',
      actorId: acme.clientId,
      actorDisplay: acme.clientId,
      actingAdminId: null,
      changedFields: USER_FIELDS,
      before: null,
      after: { ...user, email: REDACTED },
      requestId,
      timestamp: expect.any(String),
    });
    const raw = JSON.stringify(await svc.db.selectFrom('audit_log').selectAll().where('request_id', '=', requestId).execute());
    expect(raw).not.toContain(email);
    expect(raw).not.toContain('ulla.private');
    expect(raw).not.toContain(temporaryPassword);
    expect(raw).not.toContain('temporaryPassword');
  });

  it('records a user without e-mail with a null e-mail, not a redaction marker', async () => {
    const requestId = rid('user-no-mail');
    await ok(send('POST', '/api/user', acme.token, requestId, { username: 'nomail', roles: [] }), 201);
    const entry = await entryOf(acme.token, requestId);
    expect(entry.after).toMatchObject({ username: 'nomail', email: null, enabled: true, roles: [] });
  });

  it('records a user update with the changed fields, e-mail redacted on both sides', async () => {
    const created = await ok(
      send('POST', '/api/user', acme.token, rid('setup'), { username: 'vera', roles: ['issuance:offer'], email: 'vera@example.org' }),
      201,
    );
    svc.clock.advance(5);
    const requestId = rid('user-update');
    const updated = await ok(
      send('PATCH', `/api/user/${created.body.id}`, acme.token, requestId, { email: 'vera.new@example.org', enabled: false }),
    );

    const entry = await entryOf(acme.token, requestId);
    expect(entry).toMatchObject({ tenantId: 'acme', actionType: 'user.updated', actorType: 'client', actorId: acme.clientId, requestId });
    expect(entry.changedFields).toEqual(['email', 'enabled', 'updatedAt']);
    const { temporaryPassword: _t, ...user } = created.body;
    expect(entry.before).toEqual({ ...user, email: REDACTED });
    expect(entry.after).toEqual({ ...updated.body, email: REDACTED });
    expect(entry.before?.enabled).toBe(true);
    expect(entry.after?.enabled).toBe(false);

    svc.clock.advance(5);
    const renameId = rid('user-rename');
    await ok(send('PATCH', `/api/user/${created.body.id}`, acme.token, renameId, { username: 'veronika', roles: ['users:manage'] }));
    const rename = await entryOf(acme.token, renameId);
    expect(rename.changedFields).toEqual(['roles', 'updatedAt', 'username']);
    expect(rename.before).toMatchObject({ username: 'vera', roles: ['issuance:offer'], email: REDACTED });
    expect(rename.after).toMatchObject({ username: 'veronika', roles: ['users:manage'], email: REDACTED });

    const clearId = rid('user-clear-mail');
    await ok(send('PATCH', `/api/user/${created.body.id}`, acme.token, clearId, { email: null }));
    const clear = await entryOf(acme.token, clearId);
    expect(clear.changedFields).toContain('email');
    expect(clear.before?.email).toBe(REDACTED);
    expect(clear.after?.email).toBeNull();
  });

  it('records user deletion with a before snapshot and no after', async () => {
    const created = await ok(
      send('POST', '/api/user', acme.token, rid('setup'), { username: 'walt', roles: [], email: 'walt@example.org' }),
      201,
    );
    const requestId = rid('user-delete');
    await ok(send('DELETE', `/api/user/${created.body.id}`, acme.token, requestId), 204);
    const entry = await entryOf(acme.token, requestId);
    const { temporaryPassword: _t, ...user } = created.body;
    expect(entry).toMatchObject({ tenantId: 'acme', actionType: 'user.deleted', actorType: 'client', actorId: acme.clientId, after: null });
    expect(entry.before).toEqual({ ...user, email: REDACTED });
  });

  it('names the client that acted, not the tenant admin', async () => {
    const token = await svc.client(acme.token, 'acme-user-manager', ['users:manage']);
    const requestId = rid('by-manager');
    await ok(send('POST', '/api/user', token, requestId, { username: 'managed', roles: [] }), 201);
    const entry = await entryOf(acme.token, requestId);
    expect(entry).toMatchObject({
      actorType: 'client',
      actorId: 'acme-user-manager',
      actorDisplay: 'acme-user-manager',
      actionType: 'user.created',
    });
  });
});

describe('ordering and request ids', () => {
  it('lists entries newest first', async () => {
    const tenant = await svc.tenant('ordered');
    const t = tenant.token;
    const steps: [string, string][] = [];
    const step = async (actionType: string, method: string, path: string, body?: unknown, status = 200) => {
      const requestId = rid(actionType);
      await ok(send(method, path, t, requestId, body), status);
      steps.push([actionType, requestId]);
    };
    await step('client.created', 'POST', '/api/client', { clientId: 'ordered-a', roles: ['issuance:offer'] }, 201);
    await step('client.updated', 'PATCH', '/api/client/ordered-a', { roles: ['issuance:manage'] });
    await step('client.secret_rotated', 'POST', '/api/client/ordered-a/rotate-secret');
    const user = await ok(send('POST', '/api/user', t, rid('user.created'), { username: 'olga', roles: [] }), 201);
    steps.push(['user.created', user.headers.get('x-request-id') as string]);
    await step('user.updated', 'PATCH', `/api/user/${user.body.id}`, { enabled: false });
    await step('user.deleted', 'DELETE', `/api/user/${user.body.id}`, undefined, 204);
    await step('client.deleted', 'DELETE', '/api/client/ordered-a', undefined, 204);

    const entries = await auditLog(t);
    const stepIds = new Set(steps.map(([, requestId]) => requestId));
    // newest first: the steps in reverse, then what the creation of the tenant wrote (its admin client, among others)
    expect(entries.slice(0, steps.length).map((e) => [e.actionType, e.requestId])).toEqual([...steps].reverse());
    const creation = entries.slice(steps.length);
    expect(creation.length).toBeGreaterThan(0);
    expect(creation.some((e) => stepIds.has(e.requestId as string))).toBe(false);
    expect(new Set(creation.map((e) => e.requestId)).size).toBe(1);
    expect(creation.find((e) => e.actionType === 'client.created')).toMatchObject({
      actorId: ROOT_ID,
      after: { clientId: tenant.clientId },
    });
    expect(entries.every((e) => e.tenantId === 'ordered')).toBe(true);
    const times = entries.map((e) => Date.parse(e.timestamp));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
  });

  it('returns exactly one entry, the newest, for limit=1', async () => {
    const requestId = rid('newest');
    await ok(send('POST', '/api/user', acme.token, requestId, { username: 'newest', roles: [] }), 201);
    const reply = await svc.call('GET', '/api/admin/audit-logs?limit=1', { token: acme.token });
    expect(reply.status).toBe(200);
    expect(reply.body).toHaveLength(1);
    expect(reply.body[0]).toMatchObject({ requestId, actionType: 'user.created' });
  });

  it('honours limits of 2 and 500', async () => {
    const all = await auditLog(acme.token, 500);
    expect(all.length).toBeGreaterThan(2);
    expect(await auditLog(acme.token, 2)).toEqual(all.slice(0, 2));
  });

  it('records the generated request id when the caller sends none', async () => {
    const reply = await svc.call('POST', '/api/user', { token: acme.token, body: { username: 'no-request-id', roles: [] } });
    expect(reply.status).toBe(201);
    const requestId = reply.headers.get('x-request-id');
    expect(requestId).toMatch(UUID);
    const [latest] = await auditLog(acme.token, 1);
    expect(latest).toMatchObject({ actionType: 'user.created', requestId });
  });
});

describe('redaction', () => {
  it('never stores a client secret, a rotated secret, a temporary password or an e-mail address', async () => {
    const tenant = await svc.tenant('secretive');
    const t = tenant.token;
    const sensitive: string[] = [svc.rootSecret, acme.secret, globex.secret, tenant.secret];

    const supplied = 'Secretive-Supplied-Secret-987654321';
    await ok(send('POST', '/api/client', t, rid('s'), { clientId: 'secretive-a', roles: ['issuance:offer'], secret: supplied }), 201);
    sensitive.push(supplied);
    const generated = await ok(send('POST', '/api/client', t, rid('s'), { clientId: 'secretive-b', roles: ['issuance:offer'] }), 201);
    sensitive.push(generated.body.secret);
    sensitive.push((await ok(send('POST', '/api/client/secretive-a/rotate-secret', t, rid('s')))).body.secret);
    sensitive.push((await ok(send('POST', '/api/client/secretive-b/rotate-secret', await svc.rootToken(), rid('s')))).body.secret);
    await ok(send('PATCH', '/api/client/secretive-b', t, rid('s'), { roles: ['issuance:manage'], description: 'rotated twice' }));
    await ok(send('DELETE', '/api/client/secretive-b', t, rid('s')), 204);

    const password = 'Secretive-Temp-Passw0rd-42';
    const u1 = await ok(
      send('POST', '/api/user', t, rid('s'), {
        username: 'xena',
        roles: [],
        email: 'xena.hidden@mail.example',
        temporaryPassword: password,
      }),
      201,
    );
    const u2 = await ok(
      send('POST', '/api/user', t, rid('s'), { username: 'yves', roles: ['users:manage'], email: 'yves.hidden@mail.example' }),
      201,
    );
    sensitive.push(password, u2.body.temporaryPassword, 'xena.hidden@mail.example', 'yves.hidden@mail.example');
    await ok(send('PATCH', `/api/user/${u1.body.id}`, t, rid('s'), { email: 'xena.changed@mail.example', username: 'xena2' }));
    sensitive.push('xena.changed@mail.example');
    await ok(send('PATCH', `/api/user/${u1.body.id}`, t, rid('s'), { email: null }));
    await ok(send('DELETE', `/api/user/${u2.body.id}`, t, rid('s')), 204);
    await ok(send('PATCH', '/api/tenant/secretive', await svc.rootToken(), rid('s'), { description: 'touched' }));

    const rows = await allRows();
    const mine = rows.filter((r) => r.tenant_id === 'secretive' && /^(client|user)\./.test(r.action_type));
    expect(mine.map((r) => r.action_type)).toEqual([
      'client.created',
      'client.created',
      'client.created',
      'client.secret_rotated',
      'client.secret_rotated',
      'client.updated',
      'client.deleted',
      'user.created',
      'user.created',
      'user.updated',
      'user.updated',
      'user.deleted',
    ]);
    for (const row of rows) {
      const raw = JSON.stringify(row);
      for (const value of sensitive) expect(raw, `audit row ${row.action_type} ${row.id}`).not.toContain(value);
      expect(raw).not.toMatch(/hidden@|changed@|mail\.example/);
      expect(raw).not.toContain('temporaryPassword');
      expect(raw).not.toMatch(/scrypt\$/);
    }

    const rotations = mine.filter((r) => r.action_type === 'client.secret_rotated').map((r) => JSON.parse(r.after as string));
    expect(rotations.map((r) => r.clientId)).toEqual(['secretive-a', 'secretive-b']);
    for (const rotation of rotations) expect([undefined, REDACTED]).toContain(rotation.secret);
    const userCreations = mine.filter((r) => r.action_type === 'user.created').map((r) => JSON.parse(r.after as string).email);
    expect(userCreations).toEqual([REDACTED, REDACTED]);
    const firstUpdate = mine.find((r) => r.action_type === 'user.updated');
    expect(JSON.parse(firstUpdate?.before as string).email).toBe(REDACTED);
    expect(JSON.parse(firstUpdate?.after as string).email).toBe(REDACTED);
    expect(JSON.parse(mine.at(-1)?.before as string).email).toBe(REDACTED);
  });
});

describe('tenant scope', () => {
  it("shows a tenant only its own tenant's entries", async () => {
    const acmeId = rid('acme-only');
    const globexId = rid('globex-only');
    await ok(send('POST', '/api/user', acme.token, acmeId, { username: 'scoped', roles: [] }), 201);
    await ok(send('POST', '/api/user', globex.token, globexId, { username: 'scoped', roles: [] }), 201);

    const acmeLog = await auditLog(acme.token);
    expect(acmeLog.length).toBeGreaterThan(1);
    expect(acmeLog.every((e) => e.tenantId === 'acme')).toBe(true);
    expect(acmeLog.some((e) => e.requestId === acmeId)).toBe(true);
    expect(acmeLog.some((e) => e.requestId === globexId)).toBe(false);

    const globexLog = await auditLog(globex.token);
    expect(globexLog.every((e) => e.tenantId === 'globex')).toBe(true);
    expect(globexLog.some((e) => e.requestId === globexId)).toBe(true);
    expect(globexLog.some((e) => e.requestId === acmeId)).toBe(false);

    const dbCount = await svc.db
      .selectFrom('audit_log')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('tenant_id', '=', 'acme')
      .executeTakeFirstOrThrow();
    expect(acmeLog).toHaveLength(Number(dbCount.n));
  });

  it('shows the root client the entries of every tenant, including tenant.created', async () => {
    const acmeId = rid('root-sees-acme');
    const globexId = rid('root-sees-globex');
    await ok(send('POST', '/api/user', acme.token, acmeId, { username: 'seen-by-root', roles: [] }), 201);
    await ok(send('POST', '/api/user', globex.token, globexId, { username: 'seen-by-root', roles: [] }), 201);
    const tenantId = rid('tenant-create');
    const initechReply = await ok(
      send('POST', '/api/tenant', await svc.rootToken(), tenantId, { id: 'initech', name: 'Initech', roles: ['users:manage'] }),
      201,
    );

    const rootLog = await auditLog(await svc.rootToken());
    expect(rootLog).toHaveLength(await countRows());
    expect(rootLog.find((e) => e.requestId === acmeId)).toMatchObject({ tenantId: 'acme', actionType: 'user.created' });
    expect(rootLog.find((e) => e.requestId === globexId)).toMatchObject({ tenantId: 'globex', actionType: 'user.created' });
    const tenantCreations = rootLog.filter((e) => e.actionType === 'tenant.created');
    expect(tenantCreations.map((e) => e.after?.id)).toEqual(expect.arrayContaining(['acme', 'globex', 'initech']));
    const initech = rootLog.filter((e) => e.requestId === tenantId);
    // the tenant entry is written last in the creation, so it comes first; the rest belong to the new tenant
    expect(initech[0]).toMatchObject({
      tenantId: null,
      actionType: 'tenant.created',
      actorType: 'client',
      actorId: ROOT_ID,
      before: null,
      after: { id: 'initech', name: 'Initech' },
    });
    const rest = initech.slice(1);
    expect(rest.every((e) => e.tenantId === 'initech')).toBe(true);
    expect(rest.find((e) => e.actionType === 'client.created')).toMatchObject({ actorId: ROOT_ID, after: { clientId: 'initech-admin' } });
    expect([...new Set(rootLog.map((e) => e.tenantId))]).toEqual(expect.arrayContaining([null, 'acme', 'globex', 'initech']));

    // the new tenant sees what was written in it, but not the tenant entry itself
    const { clientId, secret } = initechReply.body.client;
    const initechLog = await auditLog(await svc.token(clientId, secret));
    expect(initechLog).toEqual(rest);
  });
});

describe('GET /api/admin/audit-logs query and access', () => {
  const badLimits = ['0', '501', '-1', 'abc', '1.5', '', '1e3', '10abc', '1&limit=2'];
  const askWithLimit = (limit: string) => svc.raw('GET', `/api/admin/audit-logs?limit=${limit}`, { token: acme.token });

  for (const limit of badLimits) {
    it(`rejects limit=${limit} with a 400 problem about the limit`, async () => {
      const reply = await askWithLimit(limit);
      expect(reply.status, reply.text).toBe(400);
      expect(reply.headers.get('content-type')).toContain('application/problem+json');
      expect(reply.body).toMatchObject({ status: 400, title: 'Bad Request' });
      expect(problemOf(reply).errors).toEqual([{ field: expect.stringMatching(/\.limit$/), message: expect.any(String) }]);
    });
  }

  it('names the offending field query.limit', async () => {
    for (const limit of badLimits) {
      const reply = await askWithLimit(limit);
      expect(
        reply.body.errors?.map((e: { field: string }) => e.field),
        `limit=${limit}`,
      ).toEqual(['query.limit']);
    }
  });

  it('accepts the bounds 1 and 500', async () => {
    expect(await auditLog(acme.token, 1)).toHaveLength(1);
    expect((await auditLog(acme.token, 500)).length).toBeGreaterThan(1);
  });

  it('rejects unknown query parameters', async () => {
    const reply = await svc.raw('GET', '/api/admin/audit-logs?limit=5&tenantId=globex', { token: acme.token });
    expect(reply.status).toBe(400);
    expect(reply.body.errors[0].field).toContain('tenantId');
  });

  it('defaults to 100 entries without a limit', async () => {
    const reply = await svc.call('GET', '/api/admin/audit-logs', { token: await svc.rootToken() });
    expect(reply.status).toBe(200);
    const total = await countRows();
    expect(reply.body).toHaveLength(Math.min(total, 100));
  });

  it('requires a token and a managing role', async () => {
    expect((await svc.call('GET', '/api/admin/audit-logs')).status).toBe(401);
    const requester = await svc.client(acme.token, 'acme-requester', ['presentation:request', 'issuance:offer']);
    const denied = await svc.call('GET', '/api/admin/audit-logs', { token: requester });
    expect(denied.status).toBe(403);
    expect(denied.headers.get('content-type')).toContain('application/problem+json');

    for (const role of ['users:manage', 'clients:manage', 'issuance:manage'] as Role[]) {
      const token = await svc.client(acme.token, `acme-auditor-${role.split(':')[0]}`, [role]);
      const entries = await auditLog(token, 10);
      expect(entries.length).toBeGreaterThan(0);
      expect(entries.every((e) => e.tenantId === 'acme')).toBe(true);
    }
  });
});

describe('failed requests', () => {
  it('write no entry', async () => {
    const user = await ok(send('POST', '/api/user', acme.token, rid('setup'), { username: 'unique-user', roles: [] }), 201);
    await ok(send('POST', '/api/user', acme.token, rid('setup'), { username: 'other-user', roles: [] }), 201);
    const foreign = await ok(send('POST', '/api/user', globex.token, rid('setup'), { username: 'foreign-user', roles: [] }), 201);
    await ok(send('POST', '/api/client', acme.token, rid('setup'), { clientId: 'acme-unique', roles: ['issuance:offer'] }), 201);
    const noUsers = await svc.client(acme.token, 'acme-no-users', ['clients:manage']);
    const before = await allRows();

    const failures: [string, number, Promise<Reply>][] = [];
    const fail = (status: number, method: string, path: string, token: string, body?: unknown) => {
      const requestId = rid(`fail-${status}`);
      failures.push([requestId, status, send(method, path, token, requestId, body)]);
    };
    fail(409, 'POST', '/api/user', acme.token, { username: 'unique-user', roles: ['users:manage'], email: 'dup@example.org' });
    fail(409, 'PATCH', `/api/user/${user.body.id}`, acme.token, { username: 'other-user' });
    fail(409, 'POST', '/api/client', acme.token, { clientId: 'acme-unique', roles: ['issuance:offer'] });
    fail(400, 'POST', '/api/user', acme.token, { username: '', roles: [] });
    fail(400, 'POST', '/api/user', acme.token, { username: 'rooty', roles: ['tenants:manage'] });
    fail(400, 'PATCH', `/api/user/${user.body.id}`, acme.token, { roles: ['tenants:manage'] });
    fail(400, 'PATCH', '/api/client/acme-unique', acme.token, { roles: ['tenants:manage'] });
    fail(404, 'PATCH', `/api/user/${foreign.body.id}`, acme.token, { enabled: false });
    fail(404, 'DELETE', `/api/user/${foreign.body.id}`, acme.token);
    fail(404, 'DELETE', '/api/client/globex-admin', acme.token);
    fail(404, 'POST', '/api/client/globex-admin/rotate-secret', acme.token);
    fail(403, 'POST', '/api/user', noUsers, { username: 'forbidden', roles: [] });
    fail(401, 'POST', '/api/user', 'not-a-token', { username: 'anonymous', roles: [] });
    for (const [requestId, status, reply] of failures) {
      const r = await reply;
      expect(r.status, `${requestId}: ${r.text}`).toBe(status);
    }

    const after = await allRows();
    expect(after).toEqual(before);
    const ids = new Set(failures.map(([requestId]) => requestId));
    expect(after.some((r) => r.request_id !== null && ids.has(r.request_id))).toBe(false);
  });
});

/** Makes every audit insert of a request whose id starts with `fail-audit` fail, as a broken audit store would. */
async function withFailingAudit(work: () => Promise<void>) {
  if (engine === 'postgres') {
    await sql`create function svc_test_audit_fail() returns trigger language plpgsql as $$
      begin
        if new.request_id like 'fail-audit%' then raise exception 'audit store down'; end if;
        return new;
      end $$`.execute(svc.db);
    await sql`create trigger svc_test_audit_fail before insert on audit_log for each row execute function svc_test_audit_fail()`.execute(
      svc.db,
    );
  } else {
    await sql`create trigger svc_test_audit_fail before insert on audit_log when new.request_id like 'fail-audit%'
      begin select raise(abort, 'audit store down'); end`.execute(svc.db);
  }
  try {
    await work();
  } finally {
    await sql`drop trigger svc_test_audit_fail${sql.raw(engine === 'postgres' ? ' on audit_log' : '')}`.execute(svc.db);
    if (engine === 'postgres') await sql`drop function svc_test_audit_fail()`.execute(svc.db);
  }
}

describe('a change and its audit entry', () => {
  it('land together: when the entry cannot be written, the user change is not stored either', async () => {
    const user = await ok(
      send('POST', '/api/user', acme.token, rid('setup'), { username: 'atomic', roles: ['issuance:offer'], email: 'atomic@example.org' }),
      201,
    );
    const rowOf = (id: string) => svc.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    const before = await rowOf(user.body.id);
    const entries = await countRows();

    await withFailingAudit(async () => {
      const created = await send('POST', '/api/user', acme.token, rid('fail-audit-create'), { username: 'unaudited', roles: [] });
      expect(created.status, created.text).toBe(500);
      const stored = await svc.db.selectFrom('users').selectAll().where('username', '=', 'unaudited').execute();
      expect(stored).toEqual([]);

      const patched = await send('PATCH', `/api/user/${user.body.id}`, acme.token, rid('fail-audit-update'), {
        username: 'atomic-2',
        enabled: false,
      });
      expect(patched.status, patched.text).toBe(500);
      expect(await rowOf(user.body.id)).toEqual(before);

      const deleted = await send('DELETE', `/api/user/${user.body.id}`, acme.token, rid('fail-audit-delete'));
      expect(deleted.status, deleted.text).toBe(500);
      expect(await rowOf(user.body.id)).toEqual(before);
    });

    expect(await countRows()).toBe(entries);
    // with the audit store back, the same changes go through
    await ok(send('PATCH', `/api/user/${user.body.id}`, acme.token, rid('after-recovery'), { username: 'atomic-2' }));
    await ok(send('POST', '/api/user', acme.token, rid('after-recovery'), { username: 'unaudited', roles: [] }), 201);
  });
});
