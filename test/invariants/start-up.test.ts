// Issue 24: instances that start at the same moment on a new PostgreSQL database (as a deployment's
// replicas do) all start: what the first start makes (the schema, the master secret's check value, the
// bootstrap client) is made once, by whichever instance gets there first, and the others take it.
// SQLite is one process's file, so this is PostgreSQL's alone.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { engine, freshDatabase, type TestDatabase } from '../support/database.js';
import { startService, type TestService } from '../support/service.js';

const started: TestService[] = [];
let database: TestDatabase | undefined;
afterAll(async () => {
  await Promise.all(started.map((instance) => instance.stop()));
  await database?.drop();
});

describe.runIf(engine === 'postgres')('instances starting together on a new database', () => {
  it('three start at once: all answer, with one bootstrap client whose token works on each', async () => {
    database = await freshDatabase();
    const rootSecret = randomBytes(24).toString('base64url');
    const env = {
      MASTER_SECRET: randomBytes(32).toString('base64url'),
      AUTH_CLIENT_ID: 'root',
      AUTH_CLIENT_SECRET: rootSecret,
      ...database.env,
    };
    const shared = { env, rootSecret };
    started.push(...(await Promise.all([1, 2, 3].map(() => startService({}, { besides: { shared } })))));
    const [first] = started as [TestService];
    const clients = await first.db.selectFrom('clients').select('id').where('id', '=', 'root').execute();
    expect(clients).toHaveLength(1);
    for (const instance of started) {
      const token = await instance.rootToken();
      expect((await instance.call('GET', '/api/tenant', { token })).status).toBe(200);
    }
  });
});
