// A token belongs to one incarnation of its client: it dies when the client is deleted, for good
// (a client re-created under the same id does not revive it), and when the client's secret is
// replaced (rotate-secret, a new AUTH_CLIENT_SECRET for the bootstrap client).
import { randomBytes } from 'node:crypto';
import { decodeJwt, SignJWT } from 'jose';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { migrationsFor } from '../../src/migrations/index.js';
import { deriveKey } from '../../src/platform/crypto/derive.js';
import { connect } from '../../src/platform/db/connect.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { freshDatabase } from '../support/database.js';
import { expectProblem, problemOf } from '../support/problems.js';
import { ROOT_ID, startService, type TestService } from '../support/service.js';

let svc: TestService;
let admin: string;
beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('gen')).token;
});
afterAll(() => svc.stop());

const generationOf = async (service: TestService, clientId: string) =>
  (await service.db.selectFrom('clients').select('token_generation').where('id', '=', clientId).executeTakeFirst())?.token_generation;

async function createClient(token: string, body: Record<string, unknown>) {
  const reply = await svc.raw('POST', '/api/client', { token, body });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as { secret: string };
}

async function rotate(token: string, id: string): Promise<string> {
  const reply = await svc.call('POST', `/api/client/${id}/rotate-secret`, { token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.secret;
}

/** The answer a stale token gets: 401 with an invalid_token challenge. */
async function expectStale(service: TestService, token: string, path = '/api/client') {
  const reply = await service.raw('GET', path, { token });
  expectProblem(reply, 401);
  expect(reply.headers.get('www-authenticate')).toContain('error="invalid_token"');
  return reply;
}

describe('a deleted client', () => {
  it('does not come back to life in a client re-created under its id, whatever roles that one gets', async () => {
    const first = await createClient(admin, { clientId: 'gen-reborn', roles: ['issuance:offer'] });
    const oldToken = await svc.token('gen-reborn', first.secret);
    expect((await svc.call('GET', '/api/session', { token: oldToken })).status).toBe(200);

    expect((await svc.call('DELETE', '/api/client/gen-reborn', { token: admin })).status).toBe(204);
    const second = await createClient(admin, { clientId: 'gen-reborn', roles: ['clients:manage', 'issuance:manage', 'users:manage'] });
    for (const path of ['/api/client', '/api/session', '/api/user']) {
      const reply = await expectStale(svc, oldToken, path);
      expect(problemOf(reply).detail).toBe('the access token was issued before its client was re-created or its secret replaced');
    }
    const newToken = await svc.token('gen-reborn', second.secret);
    expect((await svc.call('GET', '/api/client', { token: newToken })).status).toBe(200);
    expect(decodeJwt(newToken).client_gen).toBe(await generationOf(svc, 'gen-reborn'));
    expect(decodeJwt(oldToken).client_gen).not.toBe(decodeJwt(newToken).client_gen);
  });

  it('stays dead when its tenant is deleted and re-created with an admin of the same id', async () => {
    const tenant = await svc.tenant('gen-tenant');
    expect((await svc.call('GET', '/api/client', { token: tenant.token })).status).toBe(200);
    expect((await svc.call('DELETE', '/api/tenant/gen-tenant', { token: await svc.rootToken() })).status).toBe(204);
    const again = await svc.tenant('gen-tenant');
    expect(again.clientId).toBe(tenant.clientId);
    await expectStale(svc, tenant.token);
    expect((await svc.call('GET', '/api/client', { token: again.token })).status).toBe(200);
  });
});

describe('rotate-secret', () => {
  it('ends the tokens issued under the old secret; a token under the new one works', async () => {
    const made = await createClient(admin, { clientId: 'gen-rotated', roles: ['issuance:offer'] });
    const before = await svc.token('gen-rotated', made.secret);
    expect((await svc.call('GET', '/api/session', { token: before })).status).toBe(200);

    const secret = await rotate(admin, 'gen-rotated');
    await expectStale(svc, before, '/api/session');
    const after = await svc.token('gen-rotated', secret);
    expect((await svc.call('GET', '/api/session', { token: after })).status).toBe(200);
    expect(decodeJwt(after).client_gen).toBe(await generationOf(svc, 'gen-rotated'));
    expect(decodeJwt(before).client_gen).not.toBe(decodeJwt(after).client_gen);
  });

  it("ends the caller's own token when it rotates its own secret", async () => {
    const made = await createClient(admin, { clientId: 'gen-self', roles: ['clients:manage'] });
    const own = await svc.token('gen-self', made.secret);
    const secret = await rotate(own, 'gen-self');
    await expectStale(svc, own);
    expect((await svc.call('GET', '/api/client', { token: await svc.token('gen-self', secret) })).status).toBe(200);
  });

  it('leaves the tokens of a client whose roles or description change', async () => {
    const made = await createClient(admin, { clientId: 'gen-patched', roles: ['issuance:offer'] });
    const token = await svc.token('gen-patched', made.secret);
    const generation = await generationOf(svc, 'gen-patched');
    const patched = await svc.call('PATCH', '/api/client/gen-patched', {
      token: admin,
      body: { roles: ['issuance:offer', 'presentation:request'], description: 'changed' },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(await generationOf(svc, 'gen-patched')).toBe(generation);
    expect((await svc.call('GET', '/api/session', { token })).status).toBe(200);
  });
});

describe('across instances', () => {
  it('ends the token of a rotated client on the instance that rotated at once, on another within a second', async () => {
    const other = await startService({}, { besides: svc });
    try {
      const made = await createClient(admin, { clientId: 'gen-elsewhere', roles: ['issuance:offer'] });
      const token = await svc.token('gen-elsewhere', made.secret);
      expect((await other.call('GET', '/api/session', { token })).status).toBe(200);
      expect((await svc.call('GET', '/api/session', { token })).status).toBe(200);

      const secret = await rotate(admin, 'gen-elsewhere');
      // A token under the new secret is good at once on the other instance, though it cached the client a moment ago.
      const fresh = await svc.token('gen-elsewhere', secret);
      expect((await other.call('GET', '/api/session', { token: fresh })).status).toBe(200);
      await expectStale(svc, token, '/api/session');
      const rotatedAt = Date.now();
      await expect
        .poll(async () => (await other.call('GET', '/api/session', { token })).status, { timeout: 2000, interval: 100 })
        .toBe(401);
      expect(Date.now() - rotatedAt).toBeLessThan(1500);
    } finally {
      await other.stop();
    }
  });
});

describe('the bootstrap client', () => {
  it('keeps its tokens across a restart with the same secret, and loses them to a new AUTH_CLIENT_SECRET', async () => {
    const own = await startService();
    const started: TestService[] = [];
    try {
      const token = await own.rootToken();
      const same = await startService({}, { besides: own });
      started.push(same);
      expect((await same.call('GET', '/api/tenant', { token })).status).toBe(200);

      const newSecret = randomBytes(24).toString('base64url');
      const changed = await startService({ AUTH_CLIENT_SECRET: newSecret }, { besides: own });
      started.push(changed);
      await expectStale(changed, token, '/api/tenant');
      const fresh = await changed.token(ROOT_ID, newSecret);
      expect((await changed.call('GET', '/api/tenant', { token: fresh })).status).toBe(200);
      expect(decodeJwt(fresh).client_gen).toBe(await generationOf(own, ROOT_ID));
      expect(decodeJwt(token).client_gen).not.toBe(decodeJwt(fresh).client_gen);
    } finally {
      for (const instance of started) await instance.stop();
      await own.stop();
    }
  });
});

describe('upgrading a database from before token generations', () => {
  it('gives every existing client a generation of its own and refuses the tokens of the earlier version', async () => {
    const database = await freshDatabase();
    const masterSecret = randomBytes(32).toString('base64url');
    const rootSecret = randomBytes(24).toString('base64url');
    const env = { MASTER_SECRET: masterSecret, AUTH_CLIENT_ID: ROOT_ID, AUTH_CLIENT_SECRET: rootSecret, ...database.env };
    const old = await connect(loadConfig({ NODE_ENV: 'test', ...env }));
    const before = Object.fromEntries(Object.entries(migrationsFor(old.dialect)).filter(([name]) => name < '0007'));
    await migrate(old, before);
    for (const id of ['legacy-a', 'legacy-b']) {
      await sql`insert into clients (id, tenant_id, secret_hash, roles, created_at, updated_at)
        values (${id}, null, ${'scrypt$1$1$1$x$y'}, ${'["tenants:manage"]'}, ${new Date().toISOString()}, ${new Date().toISOString()})`.execute(
        old.kysely,
      );
    }
    await old.close();

    const upgraded = await startService({}, { besides: { shared: { env, rootSecret } } });
    try {
      const rows = await upgraded.db.selectFrom('clients').select(['id', 'token_generation']).orderBy('id').execute();
      const generations = rows.map((r) => r.token_generation);
      expect(rows.map((r) => r.id)).toEqual(['legacy-a', 'legacy-b', ROOT_ID]);
      for (const generation of generations) expect(generation).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(new Set(generations).size).toBe(3);

      // A token as the earlier version signed it: no client_gen claim.
      const legacy = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
        .setIssuer('svc-service')
        .setAudience('svc-service')
        .setSubject(ROOT_ID)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(deriveKey(masterSecret, 'management-token'));
      const refused = await expectStale(upgraded, legacy, '/api/tenant');
      expect(problemOf(refused).detail).toBe('the access token has no client_gen claim; get a new token');
      expect((await upgraded.call('GET', '/api/tenant', { token: await upgraded.rootToken() })).status).toBe(200);
    } finally {
      await upgraded.stop();
      await database.drop();
    }
  });
});
