import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createdBody, expectProblem, fieldsOf, problemOf } from '../support/problems.js';
import { ROOT_ID, startService, type TestService } from '../support/service.js';

let svc: TestService;
let root: string;
/** Admin tokens of two tenants (all tenant roles). */
let alpha: { token: string; clientId: string; secret: string };
let beta: { token: string; clientId: string; secret: string };
/** A client of alpha that holds clients:manage and nothing else. */
let alphaManager: string;

beforeAll(async () => {
  svc = await startService();
  root = await svc.rootToken();
  alpha = await svc.tenant('alpha');
  beta = await svc.tenant('beta');
  alphaManager = await svc.client(alpha.token, 'alpha-manager', ['clients:manage']);
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

const path = (id: string, rest = '') => `/api/client/${encodeURIComponent(id)}${rest}`;
const createClient = (token: string, body: Record<string, unknown>) => svc.raw('POST', '/api/client', { token, body });
const getClient = (token: string, id: string) => svc.raw('GET', path(id), { token });
const patchClient = (token: string, id: string, body: unknown) => svc.raw('PATCH', path(id), { token, body });
const deleteClient = (token: string, id: string) => svc.raw('DELETE', path(id), { token });
const rotate = (token: string, id: string) => svc.raw('POST', path(id, '/rotate-secret'), { token });
const tokenReply = (clientId: string, secret: string) =>
  svc.call('POST', '/api/oauth2/token', { body: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret } });
const clientRow = (id: string) => svc.db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();

async function created(token: string, body: Record<string, unknown>) {
  return createdBody<{ clientId: string; secret: string; tenantId: string | null; roles: string[]; createdAt: string }>(
    await createClient(token, body),
  );
}

async function auditEntries(token = root): Promise<any[]> {
  const reply = await svc.call('GET', '/api/admin/audit-logs?limit=500', { token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

describe('POST /api/client', () => {
  it("creates a client in the caller's tenant and returns a generated secret once", async () => {
    const reply = await createClient(alpha.token, {
      clientId: 'alpha-app',
      roles: ['issuance:offer', 'presentation:request'],
      description: 'the app',
    });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toEqual({
      clientId: 'alpha-app',
      tenantId: 'alpha',
      description: 'the app',
      roles: ['issuance:offer', 'presentation:request'],
      allowedPresentationConfigs: null,
      allowedIssuanceConfigs: null,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    const secret = reply.body.secret as string;

    const token = await tokenReply('alpha-app', secret);
    expect(token.status, token.text).toBe(200);
    expect(token.body.token_type).toBe('Bearer');
    expect((await tokenReply('alpha-app', 'wrong-secret-wrong-secret')).status).toBe(401);

    const other = await created(alpha.token, { clientId: 'alpha-app-2', roles: ['issuance:offer'] });
    expect(other.secret).not.toBe(secret);
    expect(other.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('accepts a supplied secret and stores only its scrypt hash', async () => {
    const secret = 'a-supplied-secret-0123456789';
    const body = await created(alpha.token, { clientId: 'alpha-supplied', roles: ['issuance:offer'], secret });
    expect(body.secret).toBe(secret);
    expect((await tokenReply('alpha-supplied', secret)).status).toBe(200);
    expect((await tokenReply('alpha-supplied', `${secret}-`)).status).toBe(401);

    const row = await clientRow('alpha-supplied');
    expect(row?.secret_hash).toMatch(/^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
    expect(row?.secret_hash).not.toContain(secret);
    expect(JSON.stringify(row)).not.toContain(secret);
  });

  it('stores only a scrypt hash of a generated secret', async () => {
    const body = await created(alpha.token, { clientId: 'alpha-hashed', roles: ['issuance:offer'] });
    const row = await clientRow('alpha-hashed');
    expect(row).toMatchObject({ id: 'alpha-hashed', tenant_id: 'alpha' });
    expect(row?.secret_hash.startsWith('scrypt$')).toBe(true);
    expect(row?.secret_hash).not.toContain(body.secret);
    expect(JSON.stringify(row)).not.toContain(body.secret);
    // salted: the same secret never hashes the same way twice
    const twin = await created(alpha.token, {
      clientId: 'alpha-hashed-twin',
      roles: ['issuance:offer'],
      secret: 'same-secret-for-both-0001',
    });
    const triplet = await created(alpha.token, { clientId: 'alpha-hashed-triplet', roles: ['issuance:offer'], secret: twin.secret });
    expect((await clientRow('alpha-hashed-twin'))?.secret_hash).not.toBe((await clientRow('alpha-hashed-triplet'))?.secret_hash);
    expect(triplet.secret).toBe(twin.secret);
  });

  it('rejects a supplied secret shorter than 16 characters', async () => {
    const reply = await createClient(alpha.token, { clientId: 'alpha-short', roles: ['issuance:offer'], secret: 'short' });
    expectProblem(reply, 400);
    expect(fieldsOf(reply)).toEqual(['body.secret']);
    expect(await clientRow('alpha-short')).toBeUndefined();
  });

  it('stores and returns the allowed configuration lists; an empty list means all (null)', async () => {
    const body = await created(alpha.token, {
      clientId: 'alpha-limited',
      roles: ['presentation:request', 'issuance:offer'],
      allowedPresentationConfigs: ['age-check', 'pid-check'],
      allowedIssuanceConfigs: ['pid'],
    });
    expect(body).toMatchObject({ allowedPresentationConfigs: ['age-check', 'pid-check'], allowedIssuanceConfigs: ['pid'] });
    expect(await clientRow('alpha-limited')).toMatchObject({
      allowed_presentation_configs: JSON.stringify(['age-check', 'pid-check']),
      allowed_issuance_configs: JSON.stringify(['pid']),
    });
    expect((await getClient(alpha.token, 'alpha-limited')).body).toMatchObject({
      allowedPresentationConfigs: ['age-check', 'pid-check'],
      allowedIssuanceConfigs: ['pid'],
    });

    const open = await created(alpha.token, {
      clientId: 'alpha-open',
      roles: ['issuance:offer'],
      allowedPresentationConfigs: [],
      allowedIssuanceConfigs: null,
    });
    expect(open).toMatchObject({ allowedPresentationConfigs: null, allowedIssuanceConfigs: null });
    expect(await clientRow('alpha-open')).toMatchObject({ allowed_presentation_configs: null, allowed_issuance_configs: null });
    expect((await getClient(alpha.token, 'alpha-open')).body).toMatchObject({
      allowedPresentationConfigs: null,
      allowedIssuanceConfigs: null,
    });
  });

  it('lets a tenant client name its own tenant but not another one', async () => {
    const own = await created(alpha.token, { clientId: 'alpha-explicit', roles: ['issuance:offer'], tenantId: 'alpha' });
    expect(own.tenantId).toBe('alpha');
    const foreign = await createClient(alpha.token, { clientId: 'alpha-into-beta', roles: ['issuance:offer'], tenantId: 'beta' });
    expectProblem(foreign, 403);
    const none = await createClient(alpha.token, { clientId: 'alpha-into-none', roles: ['issuance:offer'], tenantId: null });
    expectProblem(none, 403);
    expect(await clientRow('alpha-into-beta')).toBeUndefined();
    expect(await clientRow('alpha-into-none')).toBeUndefined();
  });

  it('refuses tenants:manage for a client of a tenant', async () => {
    const byAdmin = await createClient(alpha.token, { clientId: 'alpha-boss', roles: ['clients:manage', 'tenants:manage'] });
    expectProblem(byAdmin, 400);
    expect(fieldsOf(byAdmin)).toEqual(['body.roles']);
    const byRoot = await createClient(root, { clientId: 'alpha-boss', roles: ['tenants:manage'], tenantId: 'alpha' });
    expectProblem(byRoot, 400);
    expect(fieldsOf(byRoot)).toEqual(['body.roles']);
    expect(await clientRow('alpha-boss')).toBeUndefined();
  });

  it('lets root create a client in a tenant, and a tenant-less client only with tenants:manage', async () => {
    const inAlpha = await created(root, { clientId: 'alpha-by-root', roles: ['users:manage'], tenantId: 'alpha' });
    expect(inAlpha.tenantId).toBe('alpha');
    const seen = await getClient(alpha.token, 'alpha-by-root');
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ clientId: 'alpha-by-root', tenantId: 'alpha', roles: ['users:manage'] });

    for (const roles of [['clients:manage'], ['issuance:manage'], ['tenants:manage', 'issuance:manage']]) {
      const reply = await createClient(root, { clientId: 'loose', roles });
      expectProblem(reply, 400);
      expect(fieldsOf(reply)).toEqual(['body.roles']);
      expect(await clientRow('loose')).toBeUndefined();
    }
    const operator = await created(root, { clientId: 'operator', roles: ['tenants:manage', 'clients:manage'] });
    expect(operator).toMatchObject({ tenantId: null, roles: ['tenants:manage', 'clients:manage'] });
    expect(await clientRow('operator')).toMatchObject({ tenant_id: null });
  });

  it('refuses a tenantId of a tenant that does not exist', async () => {
    const reply = await createClient(root, { clientId: 'orphan', roles: ['issuance:offer'], tenantId: 'no-such-tenant' });
    expectProblem(reply, 400);
    expect(fieldsOf(reply)).toEqual(['body.tenantId']);
    expect(await clientRow('orphan')).toBeUndefined();
  });

  it('answers a duplicate clientId with 409, also across tenants, and leaves the existing client alone', async () => {
    const first = await created(alpha.token, { clientId: 'taken', roles: ['issuance:offer'], description: 'first' });
    const rowBefore = await clientRow('taken');

    const sameTenant = await createClient(alpha.token, { clientId: 'taken', roles: ['users:manage'] });
    expectProblem(sameTenant, 409);
    const otherTenant = await createClient(beta.token, { clientId: 'taken', roles: ['users:manage'], secret: 'beta-wants-this-one-0001' });
    expectProblem(otherTenant, 409);
    expect(otherTenant.body).not.toHaveProperty('secret');
    expectProblem(await createClient(beta.token, { clientId: ROOT_ID, roles: ['users:manage'] }), 409);
    expectProblem(await createClient(beta.token, { clientId: alpha.clientId, roles: ['users:manage'] }), 409);

    expect(await clientRow('taken')).toEqual(rowBefore);
    expect((await tokenReply('taken', first.secret)).status).toBe(200);
    expect((await tokenReply('taken', 'beta-wants-this-one-0001')).status).toBe(401);
  });

  it.each([['has space'], ['a/b'], ['ümlaut'], ['with:colon'], [''], ['x'.repeat(101)]])('rejects the clientId %j', async (clientId) => {
    const reply = await createClient(alpha.token, { clientId, roles: ['issuance:offer'] });
    expectProblem(reply, 400);
    expect(fieldsOf(reply)).toEqual(['body.clientId']);
    expect(await clientRow(clientId)).toBeUndefined();
  });

  it('accepts a clientId of 100 URL-safe characters, and it stays addressable', async () => {
    const clientId = `Az09._~-${'c'.repeat(92)}`;
    const body = await created(alpha.token, { clientId, roles: ['issuance:offer'] });
    expect(body.clientId).toBe(clientId);
    expect((await getClient(alpha.token, clientId)).status).toBe(200);
    expect((await patchClient(alpha.token, clientId, { roles: ['issuance:offer'], description: 'long' })).status).toBe(200);
    expect((await rotate(alpha.token, clientId)).status).toBe(200);
    expect((await deleteClient(alpha.token, clientId)).status).toBe(204);
    expect(await clientRow(clientId)).toBeUndefined();
  });

  it.each([
    ['an unknown role', { roles: ['issuance:offer', 'admin'] }, 'body.roles.1'],
    ['no roles', { roles: [] }, 'body.roles'],
    ['missing roles', { roles: undefined }, 'body.roles'],
    ['an unknown field', { roles: ['issuance:offer'], owner: 'me' }, 'body.owner'],
    ['an empty id in an allowed list', { roles: ['issuance:offer'], allowedIssuanceConfigs: [''] }, 'body.allowedIssuanceConfigs.0'],
  ])('rejects %s with a 400 naming the field', async (_, change, field) => {
    const reply = await createClient(alpha.token, { clientId: 'alpha-invalid', ...change });
    expectProblem(reply, 400);
    expect(fieldsOf(reply)).toEqual([field]);
    expect(await clientRow('alpha-invalid')).toBeUndefined();
  });

  it('is refused to a client without clients:manage or tenants:manage', async () => {
    const offerer = await svc.client(alpha.token, 'alpha-offerer', ['issuance:offer', 'users:manage']);
    const reply = await createClient(offerer, { clientId: 'alpha-by-offerer', roles: ['issuance:offer'] });
    expectProblem(reply, 403);
    expect(await clientRow('alpha-by-offerer')).toBeUndefined();
    for (const [method, url] of [
      ['GET', '/api/client'],
      ['GET', path('alpha-app')],
      ['DELETE', path('alpha-app')],
      ['POST', path('alpha-app', '/rotate-secret')],
    ]) {
      expectProblem(await svc.raw(method as string, url as string, { token: offerer }), 403);
    }
    expectProblem(await patchClient(offerer, 'alpha-app', { roles: ['users:manage'] }), 403);
    expect(await clientRow('alpha-app')).toMatchObject({ roles: JSON.stringify(['issuance:offer', 'presentation:request']) });
  });

  it('requires an access token', async () => {
    const reply = await svc.call('POST', '/api/client', { body: { clientId: 'anonymous', roles: ['issuance:offer'] } });
    expectProblem(reply, 401);
    expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer realm="svc"/);
    expect(await clientRow('anonymous')).toBeUndefined();
  });
});

describe('GET /api/client', () => {
  it("shows a tenant client only its tenant's clients, and root every client", async () => {
    const betaApp = await created(beta.token, { clientId: 'beta-listed', roles: ['issuance:offer'] });
    expect(betaApp.tenantId).toBe('beta');

    const alphaList = await svc.raw('GET', '/api/client', { token: alphaManager });
    expect(alphaList.status).toBe(200);
    const alphaIds = alphaList.body.map((c: { clientId: string }) => c.clientId);
    expect(alphaIds).toEqual(expect.arrayContaining(['alpha-admin', 'alpha-manager']));
    expect(alphaList.body.every((c: { tenantId: string }) => c.tenantId === 'alpha')).toBe(true);
    expect(alphaIds).not.toContain('beta-admin');
    expect(alphaIds).not.toContain('beta-listed');
    expect(alphaIds).not.toContain(ROOT_ID);
    const alphaRows = await svc.db.selectFrom('clients').select('id').where('tenant_id', '=', 'alpha').execute();
    expect([...alphaIds].sort()).toEqual(alphaRows.map((r) => r.id).sort());

    const betaList = await svc.raw('GET', '/api/client', { token: beta.token });
    expect(betaList.body.every((c: { tenantId: string }) => c.tenantId === 'beta')).toBe(true);
    expect(betaList.body.map((c: { clientId: string }) => c.clientId)).toEqual(expect.arrayContaining(['beta-admin', 'beta-listed']));

    const all = await svc.raw('GET', '/api/client', { token: root });
    expect(all.status).toBe(200);
    const allIds = all.body.map((c: { clientId: string }) => c.clientId);
    const rows = await svc.db.selectFrom('clients').select('id').execute();
    expect([...allIds].sort()).toEqual(rows.map((r) => r.id).sort());
    expect(allIds).toEqual(expect.arrayContaining([ROOT_ID, 'alpha-admin', 'beta-admin', 'beta-listed']));
    expect(all.body.find((c: { clientId: string }) => c.clientId === ROOT_ID)).toMatchObject({
      tenantId: null,
      roles: ['tenants:manage', 'clients:manage'],
    });
  });

  it('returns one client of the tenant, and 404 for an unknown id', async () => {
    const reply = await getClient(alphaManager, 'alpha-admin');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      clientId: 'alpha-admin',
      tenantId: 'alpha',
      description: 'administrator of alpha',
      roles: expect.any(Array),
      allowedPresentationConfigs: null,
      allowedIssuanceConfigs: null,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    const missing = await getClient(alphaManager, 'no-such-client');
    expectProblem(missing, 404);
    expect(problemOf(missing).detail).toContain('no-such-client');
    expectProblem(await getClient(alphaManager, ROOT_ID), 404);
    expect((await getClient(root, 'alpha-admin')).status).toBe(200);
  });
});

describe('secrets', () => {
  it('never returns a secret outside create and rotate-secret', async () => {
    const made = await created(alpha.token, { clientId: 'alpha-quiet', roles: ['issuance:offer'] });
    const patched = await patchClient(alpha.token, 'alpha-quiet', { roles: ['issuance:offer', 'issuance:manage'], description: 'patched' });
    expect(patched.status).toBe(200);
    const rotated = await rotate(alpha.token, 'alpha-quiet');
    expect(rotated.status).toBe(200);
    const secrets = [made.secret, rotated.body.secret as string, alpha.secret, beta.secret, svc.rootSecret];

    const replies = [
      patched,
      await getClient(alpha.token, 'alpha-quiet'),
      await getClient(root, 'alpha-quiet'),
      await svc.call('GET', '/api/client', { token: alpha.token }),
      await svc.call('GET', '/api/client', { token: root }),
      await svc.raw('GET', path('alpha-quiet', '/secret'), { token: alpha.token }),
      await svc.call('GET', '/api/tenant', { token: root }),
      await svc.call('GET', '/api/tenant/alpha', { token: root }),
      await svc.call('PATCH', '/api/tenant/alpha', { token: root, body: { description: 'still alpha' } }),
      await svc.raw('GET', '/api/admin/audit-logs?limit=500', { token: root }),
      await svc.raw('GET', '/api/admin/audit-logs?limit=500', { token: alpha.token }),
    ];
    for (const reply of replies) {
      expect(reply.status, reply.text).toBeLessThan(500);
      expect(keysNamed(reply.body, 'secret').filter((p) => !/\.(after|before)\.secret$/.test(p))).toEqual([]);
      for (const secret of secrets) expect(reply.text).not.toContain(secret);
    }
    const auditRows = await svc.db.selectFrom('audit_log').selectAll().execute();
    for (const secret of secrets) expect(JSON.stringify(auditRows)).not.toContain(secret);
  });

  it('answers GET /api/client/{id}/secret with 410 pointing to rotate-secret', async () => {
    await created(alpha.token, { clientId: 'alpha-gone', roles: ['issuance:offer'] });
    const hashBefore = (await clientRow('alpha-gone'))?.secret_hash;
    const reply = await svc.raw('GET', path('alpha-gone', '/secret'), { token: alpha.token });
    expectProblem(reply, 410);
    expect(reply.body).toMatchObject({ title: 'Gone', rotate: '/api/client/alpha-gone/rotate-secret' });
    expect(problemOf(reply).detail).toContain('rotate-secret');
    expect(reply.body).not.toHaveProperty('secret');
    expect((await clientRow('alpha-gone'))?.secret_hash).toBe(hashBefore);

    expectProblem(await svc.raw('GET', path('no-such-client', '/secret'), { token: alpha.token }), 404);
    expectProblem(await svc.raw('GET', path('beta-admin', '/secret'), { token: alpha.token }), 404);
    expectProblem(await svc.raw('GET', path('alpha-gone', '/secret'), { token: root }), 410);
  });

  it('rotates a secret: the new one works, the old one fails', async () => {
    const made = await created(alpha.token, { clientId: 'alpha-rotated', roles: ['issuance:offer'] });
    const hashBefore = (await clientRow('alpha-rotated'))?.secret_hash;
    expect((await tokenReply('alpha-rotated', made.secret)).status).toBe(200); // warms any verification cache

    const reply = await rotate(alpha.token, 'alpha-rotated');
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({ secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    const fresh = reply.body.secret as string;
    expect(fresh).not.toBe(made.secret);

    const row = await clientRow('alpha-rotated');
    expect(row?.secret_hash).not.toBe(hashBefore);
    expect(row?.secret_hash.startsWith('scrypt$')).toBe(true);
    expect(row?.secret_hash).not.toContain(fresh);

    const old = await tokenReply('alpha-rotated', made.secret);
    expect(old.status).toBe(401);
    expect(old.body).toMatchObject({ error: 'invalid_client' });
    expect((await tokenReply('alpha-rotated', fresh)).status).toBe(200);

    const entry = (await auditEntries(alpha.token)).find(
      (e) => e.actionType === 'client.secret_rotated' && e.after?.clientId === 'alpha-rotated',
    );
    expect(entry).toMatchObject({ tenantId: 'alpha', actorId: 'alpha-admin', after: { clientId: 'alpha-rotated' } });
    expect(entry?.after).not.toHaveProperty('secret');
  });

  it('lets root rotate the secret of any client, a tenant client only within its tenant', async () => {
    const made = await created(beta.token, { clientId: 'beta-rotated-by-root', roles: ['issuance:offer'] });
    const reply = await rotate(root, 'beta-rotated-by-root');
    expect(reply.status, reply.text).toBe(200);
    expect((await tokenReply('beta-rotated-by-root', made.secret)).status).toBe(401);
    expect((await tokenReply('beta-rotated-by-root', reply.body.secret)).status).toBe(200);

    const rootHash = (await clientRow(ROOT_ID))?.secret_hash;
    expectProblem(await rotate(alpha.token, ROOT_ID), 404);
    expect((await clientRow(ROOT_ID))?.secret_hash).toBe(rootHash);
    expect((await tokenReply(ROOT_ID, svc.rootSecret)).status).toBe(200);
    expectProblem(await rotate(root, 'no-such-client'), 404);
  });
});

describe('tenant isolation', () => {
  it('hides the clients of tenant B from a clients:manage client of tenant A', async () => {
    const victim = await created(beta.token, {
      clientId: 'beta-victim',
      roles: ['issuance:offer'],
      description: 'untouched',
      allowedIssuanceConfigs: ['pid'],
    });
    const rowBefore = await clientRow('beta-victim');
    const auditBefore = (await auditEntries(beta.token)).length;

    const read = await getClient(alphaManager, 'beta-victim');
    expectProblem(read, 404);
    expect(read.text).not.toContain('untouched');
    const list = await svc.call('GET', '/api/client', { token: alphaManager });
    expect(list.body.map((c: { clientId: string }) => c.clientId)).not.toContain('beta-victim');
    expectProblem(
      await patchClient(alphaManager, 'beta-victim', { roles: ['issuance:manage', 'clients:manage'], description: 'owned' }),
      404,
    );
    const rotated = await rotate(alphaManager, 'beta-victim');
    expectProblem(rotated, 404);
    expect(rotated.body).not.toHaveProperty('secret');
    expectProblem(await svc.raw('GET', path('beta-victim', '/secret'), { token: alphaManager }), 404);
    expectProblem(await deleteClient(alphaManager, 'beta-victim'), 404);

    expect(await clientRow('beta-victim')).toEqual(rowBefore);
    expect((await tokenReply('beta-victim', victim.secret)).status).toBe(200);
    expect((await getClient(beta.token, 'beta-victim')).body).toMatchObject({
      roles: ['issuance:offer'],
      description: 'untouched',
      allowedIssuanceConfigs: ['pid'],
    });
    expect((await auditEntries(beta.token)).length).toBe(auditBefore);
    // and A's audit log shows nothing of B
    expect((await auditEntries(alphaManager)).every((e) => e.tenantId === 'alpha')).toBe(true);
  });
});

describe('PATCH /api/client/{id}', () => {
  it('requires roles', async () => {
    await created(alpha.token, { clientId: 'alpha-patch-roles', roles: ['issuance:offer'], description: 'keep' });
    const rowBefore = await clientRow('alpha-patch-roles');
    for (const body of [{ description: 'changed' }, { roles: [], description: 'changed' }, { roles: null, description: 'changed' }]) {
      const reply = await patchClient(alpha.token, 'alpha-patch-roles', body);
      expectProblem(reply, 400);
      expect(fieldsOf(reply)).toEqual(['body.roles']);
    }
    expect(await clientRow('alpha-patch-roles')).toEqual(rowBefore);
  });

  it('updates roles, description and the allowed lists; omitted fields are kept', async () => {
    const made = await created(alpha.token, { clientId: 'alpha-patched', roles: ['issuance:offer'], description: 'before' });
    const hashBefore = (await clientRow('alpha-patched'))?.secret_hash;

    let reply = await patchClient(alpha.token, 'alpha-patched', {
      roles: ['issuance:offer', 'presentation:request'],
      description: 'after',
      allowedPresentationConfigs: ['age-check'],
      allowedIssuanceConfigs: ['pid', 'mdl'],
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({
      clientId: 'alpha-patched',
      tenantId: 'alpha',
      description: 'after',
      roles: ['issuance:offer', 'presentation:request'],
      allowedPresentationConfigs: ['age-check'],
      allowedIssuanceConfigs: ['pid', 'mdl'],
      createdAt: made.createdAt,
      updatedAt: expect.stringMatching(ISO),
    } as Record<string, unknown>);
    expect((await getClient(alpha.token, 'alpha-patched')).body).toEqual(reply.body);
    expect(await clientRow('alpha-patched')).toMatchObject({
      description: 'after',
      roles: JSON.stringify(['issuance:offer', 'presentation:request']),
      allowed_presentation_configs: JSON.stringify(['age-check']),
      allowed_issuance_configs: JSON.stringify(['pid', 'mdl']),
      secret_hash: hashBefore,
    });

    reply = await patchClient(alpha.token, 'alpha-patched', { roles: ['issuance:offer'] });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      roles: ['issuance:offer'],
      description: 'after',
      allowedPresentationConfigs: ['age-check'],
      allowedIssuanceConfigs: ['pid', 'mdl'],
    });

    reply = await patchClient(alpha.token, 'alpha-patched', {
      roles: ['issuance:offer'],
      description: null,
      allowedPresentationConfigs: [],
      allowedIssuanceConfigs: null,
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ description: null, allowedPresentationConfigs: null, allowedIssuanceConfigs: null });
    expect(await clientRow('alpha-patched')).toMatchObject({
      description: null,
      allowed_presentation_configs: null,
      allowed_issuance_configs: null,
    });
    expect((await tokenReply('alpha-patched', made.secret)).status).toBe(200);

    const entry = (await auditEntries(alpha.token)).find((e) => e.actionType === 'client.updated' && e.after?.clientId === 'alpha-patched');
    expect(entry).toMatchObject({ tenantId: 'alpha', before: { description: 'after' }, after: { description: null } });
    expect(entry.changedFields).toEqual(expect.arrayContaining(['allowedIssuanceConfigs', 'allowedPresentationConfigs', 'description']));
  });

  it.each([
    ['a secret', { secret: 'a-new-secret-from-patch-01' }, 'body.secret'],
    ['a tenantId', { tenantId: 'beta' }, 'body.tenantId'],
    ['a clientId', { clientId: 'renamed' }, 'body.clientId'],
    ['an unknown role', { roles: ['issuance:offer', 'root'] }, 'body.roles.1'],
  ])('rejects %s', async (_, change, field) => {
    if (!(await clientRow('alpha-patch-strict'))) await created(alpha.token, { clientId: 'alpha-patch-strict', roles: ['issuance:offer'] });
    const rowBefore = await clientRow('alpha-patch-strict');
    const reply = await patchClient(alpha.token, 'alpha-patch-strict', { roles: ['users:manage'], ...change });
    expectProblem(reply, 400);
    expect(fieldsOf(reply)).toEqual([field]);
    expect(await clientRow('alpha-patch-strict')).toEqual(rowBefore);
  });

  it('refuses tenants:manage for a client of a tenant, also from root', async () => {
    await created(alpha.token, { clientId: 'alpha-no-escalation', roles: ['clients:manage'] });
    const rowBefore = await clientRow('alpha-no-escalation');
    for (const token of [alpha.token, root]) {
      const reply = await patchClient(token, 'alpha-no-escalation', { roles: ['clients:manage', 'tenants:manage'] });
      expectProblem(reply, 400);
      expect(fieldsOf(reply)).toEqual(['body.roles']);
    }
    expect(await clientRow('alpha-no-escalation')).toEqual(rowBefore);
  });

  it('keeps tenants:manage on a tenant-less client and refuses tenant roles for it', async () => {
    await created(root, { clientId: 'operator-patched', roles: ['tenants:manage'] });
    expectProblem(await patchClient(root, 'operator-patched', { roles: ['clients:manage'] }), 400);
    expectProblem(await patchClient(root, 'operator-patched', { roles: ['tenants:manage', 'issuance:manage'] }), 400);
    const ok = await patchClient(root, 'operator-patched', { roles: ['tenants:manage', 'clients:manage'], description: 'operator' });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ tenantId: null, roles: ['tenants:manage', 'clients:manage'], description: 'operator' });
  });

  it('answers an unknown client with 404', async () => {
    expectProblem(await patchClient(alpha.token, 'no-such-client', { roles: ['issuance:offer'] }), 404);
    expect(await clientRow('no-such-client')).toBeUndefined();
  });
});

describe('tokens follow the current client', () => {
  it('rejects the token of a deleted client with 401 and a WWW-Authenticate challenge', async () => {
    const made = await created(alpha.token, { clientId: 'alpha-doomed', roles: ['clients:manage'] });
    const token = await svc.token('alpha-doomed', made.secret);
    expect((await svc.call('GET', '/api/client', { token })).status).toBe(200);

    const reply = await deleteClient(alpha.token, 'alpha-doomed');
    expect(reply.status, reply.text).toBe(204);
    expect(reply.text).toBe('');
    expect(await clientRow('alpha-doomed')).toBeUndefined();

    const stale = await svc.call('GET', '/api/client', { token });
    expectProblem(stale, 401);
    const challenge = stale.headers.get('www-authenticate');
    expect(challenge).toMatch(/^Bearer realm="svc"/);
    expect(challenge).toContain('error="invalid_token"');
    expect((await tokenReply('alpha-doomed', made.secret)).status).toBe(401);

    expectProblem(await getClient(alpha.token, 'alpha-doomed'), 404);
    expectProblem(await deleteClient(alpha.token, 'alpha-doomed'), 404);
    const entry = (await auditEntries(alpha.token)).find((e) => e.actionType === 'client.deleted' && e.before?.clientId === 'alpha-doomed');
    expect(entry).toMatchObject({ tenantId: 'alpha', actorId: 'alpha-admin', after: null });
  });

  it('applies a role change to an existing token at once', async () => {
    const token = await svc.client(alpha.token, 'alpha-flex', ['clients:manage', 'users:manage']);
    expect((await svc.call('GET', '/api/client', { token })).status).toBe(200);
    expect((await svc.call('GET', '/api/user', { token })).status).toBe(200);

    expect((await patchClient(alpha.token, 'alpha-flex', { roles: ['users:manage'] })).status).toBe(200);
    const refused = await svc.call('GET', '/api/client', { token });
    expectProblem(refused, 403);
    expect(problemOf(refused).detail).toContain('clients:manage');
    expectProblem(await createClient(token, { clientId: 'alpha-by-flex', roles: ['issuance:offer'] }), 403);
    expect(await clientRow('alpha-by-flex')).toBeUndefined();
    expect((await svc.call('GET', '/api/user', { token })).status).toBe(200);

    expect((await patchClient(alpha.token, 'alpha-flex', { roles: ['clients:manage'] })).status).toBe(200);
    expect((await svc.call('GET', '/api/client', { token })).status).toBe(200);
    expectProblem(await svc.call('GET', '/api/user', { token }), 403);
  });

  it('lets a client delete itself, after which its token fails', async () => {
    const token = await svc.client(alpha.token, 'alpha-self', ['clients:manage']);
    expect((await deleteClient(token, 'alpha-self')).status).toBe(204);
    expectProblem(await svc.raw('GET', '/api/client', { token }), 401);
  });

  it('lets root delete a client of any tenant', async () => {
    const made = await created(beta.token, { clientId: 'beta-removed-by-root', roles: ['issuance:offer'] });
    expect((await deleteClient(root, 'beta-removed-by-root')).status).toBe(204);
    expect(await clientRow('beta-removed-by-root')).toBeUndefined();
    expect((await tokenReply('beta-removed-by-root', made.secret)).status).toBe(401);
  });
});

describe('no escalation of privilege', () => {
  it('lets a tenant client grant only roles it holds itself', async () => {
    const refused = await createClient(alphaManager, { clientId: 'alpha-would-issue', roles: ['issuance:manage'] });
    expectProblem(refused, 403);
    expect(problemOf(refused).detail).toContain('issuance:manage');
    expect(await clientRow('alpha-would-issue')).toBeUndefined();

    const peer = await createClient(alphaManager, { clientId: 'alpha-peer-manager', roles: ['clients:manage'] });
    expect(peer.status, peer.text).toBe(201);
    const raised = await patchClient(alphaManager, 'alpha-peer-manager', { roles: ['clients:manage', 'users:manage'] });
    expectProblem(raised, 403);
    expect(JSON.parse((await clientRow('alpha-peer-manager'))?.roles as string)).toEqual(['clients:manage']);
  });

  it("refuses a clients:manage client the secret of a client holding roles it lacks (the tenant admin's, say)", async () => {
    const rowBefore = await clientRow('alpha-admin');
    const reply = await rotate(alphaManager, 'alpha-admin');
    expectProblem(reply, 403);
    expect(reply.body).not.toHaveProperty('secret');
    expect(reply.text).not.toMatch(/[A-Za-z0-9_-]{43}/);
    expect(problemOf(reply).detail).toContain("client 'alpha-admin' holds more than the caller");
    expect(problemOf(reply).detail).toContain('issuance:manage');
    expect(await clientRow('alpha-admin')).toEqual(rowBefore);
    expect((await tokenReply('alpha-admin', alpha.secret)).status).toBe(200);
    expect((await svc.raw('GET', '/api/client', { token: alpha.token })).status).toBe(200);
    const entries = await auditEntries(alpha.token);
    expect(entries.some((e) => e.actionType === 'client.secret_rotated' && e.after?.clientId === 'alpha-admin')).toBe(false);
  });

  it('lets a clients:manage client rotate, change and delete clients holding no more than itself', async () => {
    const peer = await created(alphaManager, { clientId: 'alpha-peer-rotated', roles: ['clients:manage'] });
    const rotated = await rotate(alphaManager, 'alpha-peer-rotated');
    expect(rotated.status, rotated.text).toBe(200);
    expect((await tokenReply('alpha-peer-rotated', peer.secret)).status).toBe(401);
    expect((await tokenReply('alpha-peer-rotated', rotated.body.secret)).status).toBe(200);
    expect((await patchClient(alphaManager, 'alpha-peer-rotated', { roles: ['clients:manage'], description: 'peer' })).status).toBe(200);
    expect((await deleteClient(alphaManager, 'alpha-peer-rotated')).status).toBe(204);
  });

  it('refuses a clients:manage client changing or deleting a client holding roles it lacks', async () => {
    await created(alpha.token, { clientId: 'alpha-stronger', roles: ['clients:manage', 'users:manage'], description: 'strong' });
    const rowBefore = await clientRow('alpha-stronger');
    for (const body of [{ roles: ['clients:manage'] }, { roles: ['clients:manage'], description: 'taken over' }]) {
      const reply = await patchClient(alphaManager, 'alpha-stronger', body);
      expectProblem(reply, 403);
      expect(problemOf(reply).detail).toContain('users:manage');
    }
    const removed = await deleteClient(alphaManager, 'alpha-stronger');
    expectProblem(removed, 403);
    expect(await clientRow('alpha-stronger')).toEqual(rowBefore);
    expectProblem(await deleteClient(alphaManager, 'alpha-admin'), 403);
    expect(await clientRow('alpha-admin')).toBeDefined();
  });

  it('names the roles beyond the caller in the refusal of a grant', async () => {
    const reply = await createClient(alphaManager, { clientId: 'alpha-would-manage-users', roles: ['clients:manage', 'users:manage'] });
    expectProblem(reply, 403);
    expect(problemOf(reply).errors).toEqual([{ field: 'body.roles', message: 'the caller lacks users:manage' }]);
  });

  it('keeps a client restricted to some configurations from granting or unlocking others', async () => {
    const limitedSecret = (
      await created(alpha.token, {
        clientId: 'alpha-limited-manager',
        roles: ['clients:manage', 'issuance:offer', 'presentation:request'],
        allowedIssuanceConfigs: ['pid'],
      })
    ).secret;
    const limited = await svc.token('alpha-limited-manager', limitedSecret);

    const open = await createClient(limited, { clientId: 'alpha-unlocked', roles: ['issuance:offer'] });
    expectProblem(open, 403);
    expect(fieldsOf(open)).toEqual(['body.allowedIssuanceConfigs']);
    const wider = await createClient(limited, {
      clientId: 'alpha-unlocked',
      roles: ['issuance:offer'],
      allowedIssuanceConfigs: ['pid', 'mdl'],
    });
    expectProblem(wider, 403);
    expect(problemOf(wider).errors).toEqual([
      { field: 'body.allowedIssuanceConfigs', message: "outside the caller's allowedIssuanceConfigs: mdl" },
    ]);
    expect(await clientRow('alpha-unlocked')).toBeUndefined();

    // Within its own list, and with presentations (where the caller is unrestricted) left open, it may.
    const narrow = await created(limited, {
      clientId: 'alpha-narrow',
      roles: ['issuance:offer', 'presentation:request'],
      allowedIssuanceConfigs: ['pid'],
    });
    expect(narrow).toMatchObject({ allowedIssuanceConfigs: ['pid'], allowedPresentationConfigs: null });
    const unlock = await patchClient(limited, 'alpha-narrow', { roles: ['issuance:offer'], allowedIssuanceConfigs: null });
    expectProblem(unlock, 403);
    expect(fieldsOf(unlock)).toEqual(['body.allowedIssuanceConfigs']);
    expect((await patchClient(limited, 'alpha-narrow', { roles: ['issuance:offer'] })).status).toBe(200);
    expect(await clientRow('alpha-narrow')).toMatchObject({ allowed_issuance_configs: JSON.stringify(['pid']) });

    // An unrestricted client of the same roles is beyond it: its secret would unlock every configuration.
    await created(alpha.token, { clientId: 'alpha-unrestricted-offerer', roles: ['issuance:offer'] });
    const rotated = await rotate(limited, 'alpha-unrestricted-offerer');
    expectProblem(rotated, 403);
    expect(problemOf(rotated).detail).toContain('allowedIssuanceConfigs');
    expect(rotated.body).not.toHaveProperty('secret');
  });

  it('lets root rotate the secret of any client, a tenant admin included', async () => {
    await created(root, { clientId: 'alpha-admin-like', tenantId: 'alpha', roles: ['clients:manage', 'issuance:manage', 'users:manage'] });
    const rotated = await rotate(root, 'alpha-admin-like');
    expect(rotated.status, rotated.text).toBe(200);
    expect((await tokenReply('alpha-admin-like', rotated.body.secret)).status).toBe(200);
  });

  it('lets root grant any tenant role', async () => {
    const reply = await createClient(root, { clientId: 'alpha-registrar-by-root', tenantId: 'alpha', roles: ['registrar:manage'] });
    expect(reply.status, reply.text).toBe(201);
  });
});

describe('the bootstrap client', () => {
  it('cannot be deleted through the API, since AUTH_CLIENT_ID defines it', async () => {
    const reply = await deleteClient(root, ROOT_ID);
    expectProblem(reply, 409);
    expect(await clientRow(ROOT_ID)).toBeDefined();
  });
});
