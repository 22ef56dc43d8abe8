// Two instances through a real PgBouncer in transaction mode, as a deployment with a pooler runs
// them: every statement outside a transaction, and every transaction, may reach a different server
// session. Started at once on an empty database, they migrate it once and leave no lock behind
// (Kysely's own migration lock is session-level and would stay held by a session nobody owns); a
// credential issued through one is seen by the other; session events still cross instances, as
// EVENTS_DATABASE_URL gives LISTEN a connection of its own straight to PostgreSQL. Debian's
// PgBouncer is 1.18, which passes named prepared statements through to whichever server session a
// statement lands on: the instances run with DB_PREPARED_STATEMENTS=false, and the last test shows
// what breaks with them on.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { migrationsFor } from '../../src/migrations/index.js';
import { connect } from '../../src/platform/db/connect.js';
import { engine, freshDatabase, type TestDatabase } from '../support/database.js';
import { PID } from '../support/fixtures.js';
import { type Pgbouncer, pgbouncerBinary, startPgbouncer } from '../support/pgbouncer.js';
import { ROOT_ID, startService, type TestService } from '../support/service.js';
import { openStream } from '../support/sse.js';
import { issueCredential } from '../support/wallet.js';

const serverUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

describe.skipIf(engine !== 'postgres' || !pgbouncerBinary())('behind PgBouncer in transaction mode', () => {
  let bouncer: Pgbouncer;
  let database: TestDatabase;
  let direct: string;
  let a: TestService;
  let b: TestService;
  let admin: string;

  beforeAll(async () => {
    // Two server sessions: the migrating instance needs both (its lock, its migration), so a waiting
    // instance must not hold one while it waits.
    bouncer = await startPgbouncer(serverUrl, 2);
    database = await freshDatabase();
    direct = database.env.DATABASE_URL as string;
    const rootSecret = randomBytes(24).toString('base64url');
    const shared = {
      rootSecret,
      env: {
        ...database.env,
        DATABASE_URL: bouncer.through(direct),
        EVENTS_DATABASE_URL: direct,
        DB_PREPARED_STATEMENTS: 'false',
        MASTER_SECRET: randomBytes(32).toString('base64url'),
        AUTH_CLIENT_ID: ROOT_ID,
        AUTH_CLIENT_SECRET: rootSecret,
      },
    };
    // Both at once, on an empty database: both find migrations to run.
    [a, b] = await Promise.all([startService({}, { besides: { shared } }), startService({}, { besides: { shared } })]);
    admin = (await a.tenant('acme')).token;
    expect((await a.call('POST', '/api/issuer/credentials', { token: admin, body: PID })).status).toBe(201);
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await database?.drop();
    await bouncer?.stop();
  });

  /** A query on the service's database, straight to PostgreSQL (not through the pooler). */
  const directly = async <T extends pg.QueryResultRow>(text: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: direct });
    await client.connect();
    try {
      return (await client.query<T>(text, values)).rows;
    } finally {
      await client.end();
    }
  };

  it('migrates once when two instances start at once, and leaves no advisory lock held', async () => {
    const applied = await directly<{ name: string }>('select name from kysely_migration order by name');
    expect(applied.map((row) => row.name)).toEqual(Object.keys(migrationsFor('postgres')).sort());
    const locks = await directly<{ count: number }>(
      `select count(*)::int as count from pg_locks l join pg_database d on d.oid = l.database
       where l.locktype = 'advisory' and d.datname = current_database()`,
    );
    expect(locks[0]?.count).toBe(0);
  });

  it('issues a credential through one instance that the other then finds completed', async () => {
    const { session } = await issueCredential(a, admin, 'pid', { given_name: 'Erika', family_name: 'Mustermann' });
    const seen = await b.call('GET', `/api/session/${session}`, { token: admin });
    expect(seen.status, seen.text).toBe(200);
    expect(seen.body.status).toBe('completed');
  });

  it('delivers a session change made on one instance to an event stream on the other', async () => {
    const created = await a.running.services.sessions.create({ tenantId: 'acme', kind: 'issuance', clientId: null, lifetimeSeconds: 600 });
    const stream = await openStream(`${b.url}/api/session/${created.id}/events?token=${admin}`);
    await stream.waitFor(() => stream.statuses().length === 1);
    await a.running.services.sessions.update('acme', created.id, { status: 'fetched' });
    await stream.waitFor(() => stream.statuses().length === 2);
    expect(stream.statuses().map((event) => event.status)).toEqual(['active', 'fetched']);
    stream.close();
  });

  it('keeps the listening connection out of the pooler', async () => {
    // Straight to PostgreSQL, a session that has run nothing but its LISTEN; through the pooler the
    // LISTEN would land on a server session that goes on to serve other clients' statements.
    const listeners = await directly<{ query: string }>(
      `select query from pg_stat_activity where datname = current_database() and application_name = 'svc-events'`,
    );
    expect(listeners.map((row) => row.query)).toEqual(['LISTEN "svc_events"', 'LISTEN "svc_events"']);
  });

  it('fails with prepared statements on, as PgBouncer 1.18 does not track them', async () => {
    // One server session behind the pooler: two pooled connections of the service each prepare
    // their statement under their first name, on that one session.
    const single = await startPgbouncer(serverUrl, 1);
    const db = await connect(
      loadConfig({ NODE_ENV: 'test', ...database.env, DATABASE_URL: single.through(direct), DB_PREPARED_STATEMENTS: 'true' }),
    );
    try {
      // Each statement's second run prepares it (the first runs unnamed).
      const both = db.kysely.connection().execute((first) =>
        db.kysely.connection().execute(async (second) => {
          for (let run = 0; run < 2; run++) await sql`select ${run}::int as n`.execute(first);
          for (let run = 0; run < 2; run++) await sql`select ${run}::int + 1 as n`.execute(second);
        }),
      );
      await expect(both).rejects.toMatchObject({ code: '42P05', message: 'prepared statement "svc_0" already exists' });
    } finally {
      await db.close();
      await single.stop();
    }
  });
});
