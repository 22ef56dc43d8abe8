import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../src/platform/auth/roles.js';
import { verifySecret } from '../../src/platform/crypto/secrets.js';
import { createdBody, expectFieldErrors, expectProblem, problemOf } from '../support/problems.js';
import { ALL_TENANT_ROLES, startService, type TestService } from '../support/service.js';

let svc: TestService;
/** Admin tokens of the two tenants most tests share. */
let acme: string;
let globex: string;

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  globex = (await svc.tenant('globex')).token;
});
afterAll(() => svc.stop());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const _PROBLEM = 'application/problem+json';

let counter = 0;
/** A username no other test uses, so tests sharing a tenant do not collide. */
const unique = (prefix: string) => `${prefix}-${++counter}`;

const createUser = (token: string, body: unknown) => svc.raw('POST', '/api/user', { token, body });
const getUser = (token: string, id: string) => svc.call('GET', `/api/user/${id}`, { token });
const patchUser = (token: string, id: string, body: unknown) => svc.raw('PATCH', `/api/user/${id}`, { token, body });
const deleteUser = (token: string, id: string) => svc.call('DELETE', `/api/user/${id}`, { token });

async function created(token: string, body: Record<string, unknown>) {
  return createdBody<{ id: string; username: string; email: string | null; temporaryPassword: string; [k: string]: unknown }>(
    await createUser(token, body),
  );
}

const userRow = (id: string) => svc.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
const countUsers = async () =>
  Number(
    (
      await svc.db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
const isTrue = (value: unknown) => value === true || value === 1;
const isFalse = (value: unknown) => value === false || value === 0;

describe('POST /api/user', () => {
  it('creates an enabled user with a generated temporary password, stored only as a scrypt hash', async () => {
    const username = unique('alice');
    const before = Date.now();
    const reply = await createUser(acme, { username, roles: ['issuance:offer'] });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.headers.get('content-type')).toContain('application/json');
    expect(reply.body).toEqual({
      id: expect.stringMatching(UUID),
      username,
      email: null,
      enabled: true,
      roles: ['issuance:offer'],
      tenantId: 'acme',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      temporaryPassword: expect.any(String),
    });
    const { id, temporaryPassword, createdAt, updatedAt } = reply.body;
    expect(temporaryPassword.length).toBeGreaterThanOrEqual(16);
    expect(Date.parse(createdAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(createdAt)).toBeLessThanOrEqual(Date.now() + 1000);
    expect(updatedAt).toBe(createdAt);

    const row = await userRow(id);
    expect(row).toMatchObject({ id, tenant_id: 'acme', username, email: null, roles: JSON.stringify(['issuance:offer']) });
    expect(isTrue(row?.enabled)).toBe(true);
    expect(row?.password_hash.startsWith('scrypt$')).toBe(true);
    expect(row?.password_hash).not.toContain(temporaryPassword);
    expect(await verifySecret(temporaryPassword, row?.password_hash as string)).toBe(true);
    expect(await verifySecret(`${temporaryPassword}x`, row?.password_hash as string)).toBe(false);
  });

  it('generates a different password for every user', async () => {
    const a = await created(acme, { username: unique('gen'), roles: [] });
    const b = await created(acme, { username: unique('gen'), roles: [] });
    expect(a.temporaryPassword).not.toBe(b.temporaryPassword);
    const [rowA, rowB] = [await userRow(a.id), await userRow(b.id)];
    expect(rowA?.password_hash).not.toBe(rowB?.password_hash);
  });

  it('returns the supplied temporary password and hashes exactly it', async () => {
    const temporaryPassword = 'Supplied-Passw0rd-4-bob';
    const reply = await createUser(acme, { username: unique('bob'), roles: ['users:manage'], temporaryPassword });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body.temporaryPassword).toBe(temporaryPassword);
    const row = await userRow(reply.body.id);
    expect(row?.password_hash.startsWith('scrypt$')).toBe(true);
    expect(row?.password_hash).not.toContain(temporaryPassword);
    expect(await verifySecret(temporaryPassword, row?.password_hash as string)).toBe(true);
  });

  it('stores the e-mail address encrypted and returns it decrypted', async () => {
    const email = 'carol.secret-mailbox@example.org';
    const user = await created(acme, { username: unique('carol'), roles: ['presentation:request'], email, enabled: false });
    expect(user).toMatchObject({ email, enabled: false, roles: ['presentation:request'], tenantId: 'acme' });

    const row = await userRow(user.id);
    expect(row?.email).toEqual(expect.any(String));
    expect(row?.email?.startsWith('v1.')).toBe(true);
    expect(row?.email).not.toContain(email);
    expect(row?.email).not.toContain('carol.secret-mailbox');
    expect(row?.email).not.toContain('example.org');
    expect(isFalse(row?.enabled)).toBe(true);

    const fetched = await getUser(acme, user.id);
    expect(fetched.status).toBe(200);
    expect(fetched.body.email).toBe(email);
    expect(fetched.body.enabled).toBe(false);
  });

  it('encrypts the same address differently for different users', async () => {
    const email = 'shared@example.org';
    const a = await created(acme, { username: unique('same-mail'), roles: [], email });
    const b = await created(acme, { username: unique('same-mail'), roles: [], email });
    expect((await userRow(a.id))?.email).not.toBe((await userRow(b.id))?.email);
  });

  it('accepts a user with every tenant role and with an explicit null e-mail', async () => {
    const roles: Role[] = ALL_TENANT_ROLES;
    const user = await created(acme, { username: unique('all-roles'), roles, email: null, enabled: true });
    expect(user).toMatchObject({ roles, email: null, enabled: true });
    expect((await userRow(user.id))?.email).toBeNull();
  });

  it('rejects a duplicate username in the same tenant with 409 and stores nothing', async () => {
    const username = unique('dupe');
    await created(acme, { username, roles: [] });
    const rows = await countUsers();
    const reply = await createUser(acme, { username, roles: ['issuance:offer'], email: 'dupe@example.org' });
    expectProblem(reply, 409);
    expect(problemOf(reply).title).toBe('Conflict');
    expect(reply.text).not.toContain('temporaryPassword');
    expect(await countUsers()).toBe(rows);
    const same = await svc.db.selectFrom('users').selectAll().where('tenant_id', '=', 'acme').where('username', '=', username).execute();
    expect(same).toHaveLength(1);
    expect(same[0]?.roles).toBe('[]');
  });

  it('allows the same username in another tenant', async () => {
    const username = unique('shared-name');
    const a = await created(acme, { username, roles: [] });
    const b = await created(globex, { username, roles: [] });
    expect(a.tenantId).toBe('acme');
    expect(b.tenantId).toBe('globex');
    expect(b.id).not.toBe(a.id);
    expect((await userRow(b.id))?.tenant_id).toBe('globex');
  });

  describe('validation', () => {
    const cases: [string, Record<string, unknown>, string[]][] = [
      ['a missing username', { roles: [] }, ['body.username']],
      ['an empty username', { username: '', roles: [] }, ['body.username']],
      ['a username that is not a string', { username: 42, roles: [] }, ['body.username']],
      ['missing roles', { username: 'nobody' }, ['body.roles']],
      ['roles that are not an array', { username: 'nobody', roles: 'users:manage' }, ['body.roles']],
      ['an unknown role', { username: 'nobody', roles: ['users:manage', 'superuser'] }, ['body.roles.1']],
      ['an invalid e-mail address', { username: 'nobody', roles: [], email: 'not-an-address' }, ['body.email']],
      ['an enabled flag that is not a boolean', { username: 'nobody', roles: [], enabled: 'yes' }, ['body.enabled']],
      [
        'a temporary password shorter than 8 characters',
        { username: 'nobody', roles: [], temporaryPassword: 'short' },
        ['body.temporaryPassword'],
      ],
      ['an unknown body field', { username: 'nobody', roles: [], nickname: 'nob' }, ['body.nickname']],
      ['a tenantId in the body', { username: 'nobody', roles: [], tenantId: 'globex' }, ['body.tenantId']],
    ];
    for (const [name, body, fields] of cases) {
      it(`rejects ${name} with a 400 problem naming the field`, async () => {
        const rows = await countUsers();
        const reply = await createUser(acme, body);
        expectFieldErrors(reply, fields);
        expect(problemOf(reply).title).toBe('Bad Request');
        expect(await countUsers()).toBe(rows);
      });
    }

    it('names every invalid field at once', async () => {
      const reply = await createUser(acme, { username: '', email: 'nope' });
      expectProblem(reply, 400);
      const fields = (reply.body.errors as { field: string }[]).map((e) => e.field).sort();
      expect(fields).toEqual(['body.email', 'body.roles', 'body.username']);
    });

    it('rejects a body that is not an object', async () => {
      expectProblem(await createUser(acme, ['username']), 400);
      expectProblem(await svc.call('POST', '/api/user', { token: acme }), 400);
    });

    it('refuses tenants:manage for a user of a tenant', async () => {
      const rows = await countUsers();
      const reply = await createUser(acme, { username: unique('wannabe-root'), roles: ['users:manage', 'tenants:manage'] });
      expectFieldErrors(reply, ['body.roles']);
      expect(problemOf(reply).detail).toContain('tenants:manage');
      expect(await countUsers()).toBe(rows);
    });
  });
});

describe('temporaryPassword is shown only on creation', () => {
  it('is absent from list, get and patch responses', async () => {
    const temporaryPassword = 'Only-Once-Passw0rd';
    const user = await created(acme, { username: unique('once'), roles: [], temporaryPassword });

    const list = await svc.call('GET', '/api/user', { token: acme });
    expect(list.status).toBe(200);
    const listed = (list.body as Record<string, unknown>[]).find((u) => u.id === user.id);
    expect(listed).toBeDefined();
    for (const u of list.body as Record<string, unknown>[]) expect(u).not.toHaveProperty('temporaryPassword');
    expect(list.text).not.toContain(temporaryPassword);
    expect(list.text).not.toContain('temporaryPassword');
    expect(list.text).not.toContain('password');

    const one = await getUser(acme, user.id);
    expect(one.status).toBe(200);
    expect(Object.keys(one.body).sort()).toEqual(['createdAt', 'email', 'enabled', 'id', 'roles', 'tenantId', 'updatedAt', 'username']);
    expect(one.text).not.toContain(temporaryPassword);

    const patched = await patchUser(acme, user.id, { enabled: false });
    expect(patched.status).toBe(200);
    expect(Object.keys(patched.body).sort()).toEqual(['createdAt', 'email', 'enabled', 'id', 'roles', 'tenantId', 'updatedAt', 'username']);
    expect(patched.text).not.toContain(temporaryPassword);
  });

  it('cannot be changed through PATCH', async () => {
    const user = await created(acme, { username: unique('no-reset'), roles: [], temporaryPassword: 'First-Passw0rd' });
    const hash = (await userRow(user.id))?.password_hash;
    const reply = await patchUser(acme, user.id, { temporaryPassword: 'Second-Passw0rd' });
    expectFieldErrors(reply, ['body.temporaryPassword']);
    expect((await userRow(user.id))?.password_hash).toBe(hash);
  });
});

describe('GET /api/user', () => {
  it("lists exactly the caller tenant's users, never another tenant's", async () => {
    const one = (await svc.tenant('list-one')).token;
    const two = (await svc.tenant('list-two')).token;
    expect((await svc.call('GET', '/api/user', { token: one })).body).toEqual([]);

    const a1 = await created(one, { username: 'anna', roles: ['issuance:offer'], email: 'anna@example.org' });
    const a2 = await created(one, { username: 'arno', roles: [] });
    const b1 = await created(two, { username: 'anna', roles: ['users:manage'] });

    const listOne = await svc.call('GET', '/api/user', { token: one });
    expect(listOne.status).toBe(200);
    const expected = [a1, a2].map(({ temporaryPassword: _t, ...user }) => user);
    expect([...listOne.body].sort((x, y) => x.username.localeCompare(y.username))).toEqual(expected);

    const listTwo = await svc.call('GET', '/api/user', { token: two });
    expect(listTwo.body).toHaveLength(1);
    expect(listTwo.body[0]).toMatchObject({ id: b1.id, username: 'anna', tenantId: 'list-two', roles: ['users:manage'], email: null });
  });
});

describe('GET, PATCH and DELETE /api/user/{id}', () => {
  it('gets a user by id', async () => {
    const user = await created(acme, { username: unique('getme'), roles: ['issuance:manage'], email: 'getme@example.org' });
    const reply = await getUser(acme, user.id);
    expect(reply.status).toBe(200);
    const { temporaryPassword: _t, ...expected } = user;
    expect(reply.body).toEqual(expected);
  });

  it('answers 404 for an unknown id', async () => {
    const id = crypto.randomUUID();
    for (const reply of [await getUser(acme, id), await patchUser(acme, id, { enabled: false }), await deleteUser(acme, id)]) {
      expectProblem(reply, 404);
      expect(problemOf(reply).detail).toContain(id);
    }
  });

  it('updates username, email, enabled and roles, and only those', async () => {
    const user = await created(acme, { username: unique('dave'), roles: ['issuance:offer'], email: 'dave@example.org' });
    const rowBefore = await userRow(user.id);
    svc.clock.advance(5);
    const username = unique('david');
    const reply = await patchUser(acme, user.id, {
      username,
      email: 'david@example.com',
      enabled: false,
      roles: ['presentation:manage', 'users:manage'],
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({
      id: user.id,
      username,
      email: 'david@example.com',
      enabled: false,
      roles: ['presentation:manage', 'users:manage'],
      tenantId: 'acme',
      createdAt: user.createdAt,
      updatedAt: expect.any(String),
    });
    expect(Date.parse(reply.body.updatedAt)).toBeGreaterThan(Date.parse(user.createdAt as string));

    const row = await userRow(user.id);
    expect(row).toMatchObject({
      username,
      roles: JSON.stringify(['presentation:manage', 'users:manage']),
      password_hash: rowBefore?.password_hash,
    });
    expect(isFalse(row?.enabled)).toBe(true);
    expect(row?.email?.startsWith('v1.')).toBe(true);
    expect(row?.email).not.toBe(rowBefore?.email);
    expect(row?.email).not.toContain('david@example.com');
    expect((await getUser(acme, user.id)).body).toEqual(reply.body);
  });

  it('changes one field and leaves the others as they were', async () => {
    const user = await created(acme, { username: unique('erin'), roles: ['issuance:offer'], email: 'erin@example.org' });
    const rowBefore = await userRow(user.id);

    const reply = await patchUser(acme, user.id, { enabled: false });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ username: user.username, email: 'erin@example.org', enabled: false, roles: ['issuance:offer'] });
    const row = await userRow(user.id);
    expect(row?.email).toBe(rowBefore?.email);
    expect(row?.username).toBe(rowBefore?.username);
    expect(row?.roles).toBe(rowBefore?.roles);

    const again = await patchUser(acme, user.id, { enabled: true, roles: [] });
    expect(again.body).toMatchObject({ username: user.username, email: 'erin@example.org', enabled: true, roles: [] });
    expect(isTrue((await userRow(user.id))?.enabled)).toBe(true);
  });

  it('clears the e-mail address with null', async () => {
    const user = await created(acme, { username: unique('frank'), roles: [], email: 'frank@example.org' });
    const reply = await patchUser(acme, user.id, { email: null });
    expect(reply.status).toBe(200);
    expect(reply.body.email).toBeNull();
    expect((await userRow(user.id))?.email).toBeNull();
    expect((await getUser(acme, user.id)).body.email).toBeNull();
  });

  it('rejects invalid updates with a 400 problem naming the field and changes nothing', async () => {
    const user = await created(acme, { username: unique('gina'), roles: ['issuance:offer'], email: 'gina@example.org' });
    const rowBefore = await userRow(user.id);
    const cases: [Record<string, unknown>, string[]][] = [
      [{ username: '' }, ['body.username']],
      [{ email: 'gina-at-example' }, ['body.email']],
      [{ roles: ['issuance:offer', 'root'] }, ['body.roles.1']],
      [{ enabled: 'no' }, ['body.enabled']],
      [{ nickname: 'gigi' }, ['body.nickname']],
      [{ id: 'another-id' }, ['body.id']],
      [{ roles: ['tenants:manage'] }, ['body.roles']],
    ];
    for (const [body, fields] of cases) {
      const reply = await patchUser(acme, user.id, body);
      expectFieldErrors(reply, fields);
    }
    expect(await userRow(user.id)).toEqual(rowBefore);
  });

  it('rejects renaming to a username taken in the same tenant with 409', async () => {
    const taken = await created(acme, { username: unique('taken'), roles: [] });
    const user = await created(acme, { username: unique('renamer'), roles: [] });
    const rowBefore = await userRow(user.id);
    const reply = await patchUser(acme, user.id, { username: taken.username, enabled: false });
    expectProblem(reply, 409);
    expect(await userRow(user.id)).toEqual(rowBefore);

    const shared = await created(globex, { username: unique('other-tenant-name'), roles: [] });
    const renamed = await patchUser(acme, user.id, { username: shared.username });
    expect(renamed.status).toBe(200);
    expect(renamed.body.username).toBe(shared.username);
  });

  it('deletes a user', async () => {
    const user = await created(acme, { username: unique('gone'), roles: [], email: 'gone@example.org' });
    const reply = await deleteUser(acme, user.id);
    expect(reply.status).toBe(204);
    expect(reply.text).toBe('');
    expect(await userRow(user.id)).toBeUndefined();
    expectProblem(await getUser(acme, user.id), 404);
    expectProblem(await deleteUser(acme, user.id), 404);
    const list = await svc.call('GET', '/api/user', { token: acme });
    expect((list.body as { id: string }[]).map((u) => u.id)).not.toContain(user.id);

    // the username is free again
    const again = await created(acme, { username: user.username, roles: [] });
    expect(again.id).not.toBe(user.id);
  });

  it("treats another tenant's user as missing: 404 on get, patch and delete, and leaves it unchanged", async () => {
    const user = await created(globex, { username: unique('hidden'), roles: ['issuance:offer'], email: 'hidden@example.org' });
    const rowBefore = await userRow(user.id);

    const got = await getUser(acme, user.id);
    expectProblem(got, 404);
    expect(got.text).not.toContain('hidden@example.org');
    expect(got.text).not.toContain(user.username);
    expectProblem(await patchUser(acme, user.id, { username: 'stolen', enabled: false, roles: ['users:manage'], email: null }), 404);
    expectProblem(await deleteUser(acme, user.id), 404);

    expect(await userRow(user.id)).toEqual(rowBefore);
    const own = await getUser(globex, user.id);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ username: user.username, email: 'hidden@example.org', enabled: true, roles: ['issuance:offer'] });
  });
});

describe('access', () => {
  it('refuses requests without an access token', async () => {
    expect((await svc.call('GET', '/api/user')).status).toBe(401);
    expect((await svc.call('POST', '/api/user', { body: { username: 'x', roles: [] } })).status).toBe(401);
  });

  it('refuses a client without users:manage with 403 on every operation', async () => {
    const target = await created(acme, { username: unique('target'), roles: [] });
    const rowBefore = await userRow(target.id);
    const rows = await countUsers();
    const token = await svc.client(acme, unique('acme-no-users'), [
      'clients:manage',
      'issuance:manage',
      'presentation:manage',
      'registrar:manage',
    ]);
    const replies = [
      await svc.call('GET', '/api/user', { token }),
      await createUser(token, { username: unique('sneaky'), roles: [] }),
      await getUser(token, target.id),
      await patchUser(token, target.id, { enabled: false }),
      await deleteUser(token, target.id),
    ];
    for (const reply of replies) {
      expectProblem(reply, 403);
      expect(problemOf(reply).title).toBe('Forbidden');
    }
    expect(await countUsers()).toBe(rows);
    expect(await userRow(target.id)).toEqual(rowBefore);
  });

  it('lets a non-admin client with users:manage manage users', async () => {
    const token = await svc.client(acme, unique('acme-user-admin'), ['users:manage']);
    const user = await created(token, { username: unique('by-manager'), roles: [] });
    expect(user.tenantId).toBe('acme');
    expect((await getUser(acme, user.id)).status).toBe(200);
  });

  it('lets a users:manage client give a user only roles it holds itself', async () => {
    const token = await svc.client(acme, unique('acme-user-manager'), ['users:manage', 'issuance:offer']);
    const rows = await countUsers();
    const username = unique('would-be-admin');
    const refused = await createUser(token, { username, roles: ['issuance:offer', 'clients:manage', 'issuance:manage'] });
    expectProblem(refused, 403);
    expect(problemOf(refused).errors).toEqual([{ field: 'body.roles', message: 'the caller lacks clients:manage, issuance:manage' }]);
    expect(await countUsers()).toBe(rows);

    const user = await created(token, { username, roles: ['issuance:offer', 'users:manage'] });
    const rowBefore = await userRow(user.id);
    const raised = await patchUser(token, user.id, { roles: ['issuance:offer', 'registrar:manage'] });
    expectProblem(raised, 403);
    expect(problemOf(raised).errors).toEqual([{ field: 'body.roles', message: 'the caller lacks registrar:manage' }]);
    expect(await userRow(user.id)).toEqual(rowBefore);
    expect((await patchUser(token, user.id, { roles: ['issuance:offer'], enabled: false })).status).toBe(200);
  });

  it('lets a users:manage client change or delete only users whose roles it holds itself', async () => {
    const token = await svc.client(acme, unique('acme-user-clerk'), ['users:manage']);
    const stronger = await created(acme, { username: unique('stronger'), roles: ['users:manage', 'clients:manage'] });
    const rowBefore = await userRow(stronger.id);
    for (const reply of [
      await patchUser(token, stronger.id, { roles: ['users:manage'] }),
      await patchUser(token, stronger.id, { enabled: false }),
      await deleteUser(token, stronger.id),
    ]) {
      expectProblem(reply, 403);
      expect(problemOf(reply).detail).toContain('clients:manage');
    }
    expect(await userRow(stronger.id)).toEqual(rowBefore);

    const peer = await created(acme, { username: unique('peer'), roles: ['users:manage'] });
    expect((await patchUser(token, peer.id, { enabled: false })).status).toBe(200);
    expect((await deleteUser(token, peer.id)).status).toBe(204);
    expect(await userRow(peer.id)).toBeUndefined();
  });

  it('refuses the root client, which belongs to no tenant, with 403', async () => {
    const root = await svc.rootToken();
    const target = await created(acme, { username: unique('root-target'), roles: [] });
    const rows = await countUsers();
    const replies = [
      await svc.call('GET', '/api/user', { token: root }),
      await createUser(root, { username: unique('root-made'), roles: [] }),
      await getUser(root, target.id),
      await patchUser(root, target.id, { enabled: false }),
      await deleteUser(root, target.id),
    ];
    for (const reply of replies) expectProblem(reply, 403);
    expect(await countUsers()).toBe(rows);
    expect(isTrue((await userRow(target.id))?.enabled)).toBe(true);
  });
});
