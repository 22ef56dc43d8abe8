// A MASTER_SECRET that is not the one the database was created with stops the start with one line
// naming MASTER_SECRET and exit code 78, instead of a service that starts and answers 500 at its
// first signature (the keys sealed under the other secret do not open). On SQLite and PostgreSQL.
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { migrationsFor } from '../../src/migrations/index.js';
import { connect } from '../../src/platform/db/connect.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { StartUpError } from '../../src/platform/lifecycle/start-up-errors.js';
import { start } from '../../src/start-up/server.js';
import { engine, freshDatabase, type TestDatabase } from '../support/database.js';
import { type RequestOptions, request } from '../support/http.js';
import { run, runUntilExit, stop } from '../support/process.js';
import { ROOT_ID, startService } from '../support/service.js';

const WRONG_SECRET_LINE =
  'svc: MASTER_SECRET: not the secret this database was created with (the data sealed under that secret does not open); start with the original MASTER_SECRET';
const STACK_TRACE = /^\s+at /m;

const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const database of databases) await database.drop();
});
async function database() {
  const made = await freshDatabase();
  databases.push(made);
  return made;
}
const secret = () => randomBytes(32).toString('base64url');

const call = (port: number, method: string, path: string, options?: RequestOptions) =>
  request(`http://127.0.0.1:${port}`, method, path, options);

async function token(port: number, clientId: string, clientSecret: string): Promise<string> {
  const reply = await call(port, 'POST', '/api/oauth2/token', {
    body: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
  });
  expect(reply.status).toBe(200);
  return reply.body.access_token;
}

/** Signs with the tenant's trust list key (opened from its sealed JWK): the first signature a wrong secret used to fail. */
async function signTrustList(port: number, tenantToken: string, id: string) {
  return call(port, 'POST', '/api/trust-list', {
    token: tenantToken,
    body: { id, entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
  });
}

describe('npm start with another MASTER_SECRET than the database was created with', () => {
  it('exits 78 with one line naming MASTER_SECRET; the original secret starts and signs as before', async () => {
    const { env } = await database();
    const rootSecret = secret();
    const original = secret();
    const envWith = (masterSecret: string) => ({
      ...env,
      PORT: '0',
      MASTER_SECRET: masterSecret,
      AUTH_CLIENT_ID: ROOT_ID,
      AUTH_CLIENT_SECRET: rootSecret,
    });

    const first = await run(envWith(original));
    const tenant = await call(first.port, 'POST', '/api/tenant', {
      token: await token(first.port, ROOT_ID, rootSecret),
      body: { id: 'acme', name: 'Acme', roles: ['issuance:manage'] },
    });
    expect(tenant.status).toBe(201);
    const { clientId, secret: clientSecret } = tenant.body.client;
    expect((await signTrustList(first.port, await token(first.port, clientId, clientSecret), 'first')).status).toBe(201);
    expect(await stop(first)).toBe(0);

    const failure = await runUntilExit(envWith(secret()));
    expect(failure.code).toBe(78);
    expect(failure.output.trim()).toBe(WRONG_SECRET_LINE);
    expect(failure.output).not.toMatch(STACK_TRACE);

    const again = await run(envWith(original));
    try {
      const signed = await signTrustList(again.port, await token(again.port, clientId, clientSecret), 'again');
      expect(signed.status).toBe(201);
    } finally {
      expect(await stop(again)).toBe(0);
    }
  });
});

// A PostgreSQL database outlives the DATA_DIR whose generated secret it was created with. SQLite keeps
// its database in DATA_DIR (svc.db), so there it takes the file copied into a fresh DATA_DIR.
describe('npm start on a database of another DATA_DIR, with a fresh DATA_DIR and no MASTER_SECRET', () => {
  it('exits 78 saying a secret was generated for this start and how to pass the original, and removes the generated one', async () => {
    const { env } = await database();
    const firstDir = mkdtempSync(join(tmpdir(), 'svc-first-data-'));
    const freshDir = mkdtempSync(join(tmpdir(), 'svc-fresh-data-'));
    try {
      const first = await run({ ...env, PORT: '0', DATA_DIR: firstDir });
      expect(await stop(first)).toBe(0);
      if (engine === 'sqlite') copyFileSync(join(firstDir, 'svc.db'), join(freshDir, 'svc.db'));

      const failure = await runUntilExit({ ...env, PORT: '0', DATA_DIR: freshDir });
      expect(failure.code).toBe(78);
      expect(failure.output.trim().split('\n').at(-1)).toBe(
        `svc: MASTER_SECRET: not set, so a new one was generated into ${join(freshDir, 'master-secret')} for this start, but this database was created with another secret (the data sealed under it does not open); the generated secret was removed again: start with MASTER_SECRET set to the original secret, or with the DATA_DIR (its master-secret file) the database was first started with`,
      );
      expect(failure.output).not.toMatch(STACK_TRACE);
      expect(existsSync(join(freshDir, 'master-secret'))).toBe(false);

      // A secret file of its own in DATA_DIR (another database's, say) is named, and kept: the user put it there.
      writeFileSync(join(freshDir, 'master-secret'), `${secret()}\n`, { mode: 0o600 });
      const fromFile = await runUntilExit({ ...env, PORT: '0', DATA_DIR: freshDir });
      expect(fromFile.code).toBe(78);
      expect(fromFile.output.trim().split('\n').at(-1)).toContain(
        `svc: MASTER_SECRET: not set, so the one in ${join(freshDir, 'master-secret')} was used, but this database was created with another secret`,
      );
      expect(existsSync(join(freshDir, 'master-secret'))).toBe(true);

      // What the message says works: the original secret, passed in the environment.
      const original = readFileSync(join(firstDir, 'master-secret'), 'utf8').trim();
      const again = await run({ ...env, PORT: '0', DATA_DIR: freshDir, MASTER_SECRET: original });
      expect(await stop(again)).toBe(0);
    } finally {
      for (const dir of [firstDir, freshDir]) rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the master secret check at start-up', () => {
  const attempt = (env: Record<string, string>) =>
    start({ NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...env }, () => {});
  const refusal = (started: Promise<{ stop(): Promise<void> }>) =>
    started.then(
      async (instance) => {
        await instance.stop();
        return 'started';
      },
      (err: unknown) => (err instanceof StartUpError ? `${err.exitCode} ${err.message}` : `not a start-up error: ${String(err)}`),
    );
  const WRONG = `78 ${WRONG_SECRET_LINE.replace(/^svc: /, '')}`;

  it('judges a database of an earlier version (no check value) by its sealed keys, and then stores the check value', async () => {
    const base = await startService();
    try {
      await base.tenant('acme');
      // As an earlier version left it: sealed keys, no check value.
      await base.db.deleteFrom('service_settings').execute();

      expect(await refusal(startService({ MASTER_SECRET: secret() }, { besides: base }))).toBe(WRONG);
      expect(await base.db.selectFrom('service_settings').selectAll().execute()).toEqual([]);

      const upgraded = await startService({}, { besides: base });
      await upgraded.stop();
      const stored = await base.db.selectFrom('service_settings').select('name').execute();
      expect(stored).toEqual([{ name: 'master-secret-check' }]);
      // Now the check value decides, without the keys.
      expect(await refusal(startService({ MASTER_SECRET: secret() }, { besides: base }))).toBe(WRONG);
    } finally {
      await base.stop();
    }
  });

  it('leaves the bootstrap client as it was when the start is refused', async () => {
    const base = await startService();
    try {
      const bootstrapHash = async () =>
        (await base.db.selectFrom('clients').select('secret_hash').where('id', '=', ROOT_ID).executeTakeFirstOrThrow()).secret_hash;
      const before = await bootstrapHash();
      const refused = startService({ MASTER_SECRET: secret(), AUTH_CLIENT_SECRET: secret() }, { besides: base });
      expect(await refusal(refused)).toBe(WRONG);
      expect(await bootstrapHash()).toBe(before);
    } finally {
      await base.stop();
    }
  });

  it('lets exactly one of two instances started at once on a new database with different secrets run', async () => {
    const { env } = await database();
    // Migrated first: the race under test is the one for the check value.
    const db = await connect(loadConfig({ NODE_ENV: 'test', ...env }));
    await migrate(db, migrationsFor(db.dialect));
    await db.close();

    // Root clients of their own, so that nothing but the master secret sets the two apart.
    const starts = ['root-a', 'root-b'].map((rootId) =>
      attempt({ ...env, MASTER_SECRET: secret(), AUTH_CLIENT_ID: rootId, AUTH_CLIENT_SECRET: secret() }),
    );
    const outcomes = await Promise.allSettled(starts);
    for (const outcome of outcomes) if (outcome.status === 'fulfilled') await outcome.value.close();
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const [failed] = outcomes.filter((o) => o.status === 'rejected') as PromiseRejectedResult[];
    expect(failed?.reason).toBeInstanceOf(StartUpError);
    expect(`${failed?.reason.exitCode} ${failed?.reason.message}`).toBe(WRONG);
  });
});
