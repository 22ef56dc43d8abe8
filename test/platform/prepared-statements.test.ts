// Named prepared statements on PostgreSQL (src/platform/db/prepared-statements.ts), asked of the
// server itself: pg_prepared_statements lists what the asking session holds, so each check runs on
// the pooled connection it is about. Through the real service: its flows leave their statements
// prepared, never more per connection than DB_STATEMENT_CACHE_SIZE, and none with
// DB_PREPARED_STATEMENTS=false. Through the database layer: a `select *` prepared before another
// connection adds a column still answers (outside a transaction), or fails its transaction once.
import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { connect, type Db } from '../../src/platform/db/connect.js';
import type { Database } from '../../src/platform/db/schema.js';
import { engine, freshDatabase, type TestDatabase } from '../support/database.js';
import { PID } from '../support/fixtures.js';
import { startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

/** The statements each of the pool's connections holds prepared, every connection held at once so each answers once. */
async function preparedPerConnection(db: Db): Promise<string[][]> {
  const connections = db.poolStats?.().total ?? 0;
  let arrived = 0;
  let allHeld = () => {};
  const held = new Promise<void>((resolve) => {
    allHeld = resolve;
  });
  return Promise.all(
    Array.from({ length: connections }, () =>
      db.kysely.connection().execute(async (connection) => {
        const statements = await preparedHere(connection);
        if (++arrived === connections) allHeld();
        await held;
        return statements;
      }),
    ),
  );
}

/** The statements the session of `connection` holds prepared (this query has no parameters: it is not prepared itself). */
const preparedHere = async (connection: Kysely<Database>) =>
  (await sql<{ statement: string }>`select statement from pg_prepared_statements order by prepare_time`.execute(connection)).rows.map(
    (row) => row.statement,
  );

describe.skipIf(engine !== 'postgres')('prepared statements through the service', () => {
  const services: TestService[] = [];
  afterAll(async () => {
    for (const service of services) await service.stop();
  });

  /** A service with `env` that has issued `count` credentials. */
  async function afterFlows(env: Record<string, string>, count: number) {
    const service = await startService(env);
    services.push(service);
    const admin = (await service.tenant('acme')).token;
    expect((await service.call('POST', '/api/issuer/credentials', { token: admin, body: PID })).status).toBe(201);
    for (let i = 0; i < count; i++) await issueCredential(service, admin, 'pid', { given_name: 'Erika', family_name: `Mustermann ${i}` });
    return preparedPerConnection(service.running.db);
  }

  it('prepares the statements a flow repeats, by default', async () => {
    const perConnection = await afterFlows({}, 3);
    const all = perConnection.flat();
    // The flows' own statements, with their parameters: a session looked up, a credential recorded.
    expect(all.some((statement) => /from "sessions"/.test(statement) && statement.includes('$1'))).toBe(true);
    expect(all.every((statement) => statement.includes('$1'))).toBe(true);
    for (const statements of perConnection) expect(statements.length).toBeLessThanOrEqual(200);
  });

  it('never holds more prepared statements on a connection than DB_STATEMENT_CACHE_SIZE', async () => {
    const perConnection = await afterFlows({ DB_STATEMENT_CACHE_SIZE: '4' }, 4);
    expect(Math.max(...perConnection.map((statements) => statements.length))).toBeGreaterThan(0);
    for (const statements of perConnection) expect(statements.length).toBeLessThanOrEqual(4);
  });

  it('sends every statement unnamed with DB_PREPARED_STATEMENTS=false', async () => {
    const perConnection = await afterFlows({ DB_PREPARED_STATEMENTS: 'false' }, 2);
    expect(perConnection.length).toBeGreaterThan(0);
    expect(perConnection.flat()).toEqual([]);
  });
});

describe.skipIf(engine !== 'postgres')('prepared statements of one connection', () => {
  let database: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterEach(async () => {
    await sql`drop table if exists widgets`.execute(db.kysely);
    await db.close();
  });
  afterAll(async () => {
    await database.drop();
  });

  const open = (env: Record<string, string>) =>
    connect(loadConfig({ NODE_ENV: 'test', MASTER_SECRET: randomBytes(32).toString('base64url'), ...database.env, ...env }));

  /** Another instance's migration: a column added from a connection of its own. */
  async function addColumnElsewhere() {
    const other = new pg.Client({ connectionString: database.env.DATABASE_URL });
    await other.connect();
    try {
      await other.query(`alter table widgets add column colour text not null default 'red'`);
    } finally {
      await other.end();
    }
  }

  const selectAll = (connection: Kysely<Database>, id: number) =>
    sql<Record<string, unknown>>`select * from widgets where id = ${id}`.execute(connection).then((result) => result.rows);

  it('prepares a statement from its second run, and leaves statements without parameters and DDL unnamed', async () => {
    db = await open({});
    await db.kysely.connection().execute(async (connection) => {
      await sql`create table widgets (id integer primary key, name text not null)`.execute(connection);
      await sql`insert into widgets (id, name) values (${1}, ${'bolt'})`.execute(connection);
      expect(await selectAll(connection, 1)).toEqual([{ id: 1, name: 'bolt' }]);
      expect(await preparedHere(connection)).toEqual([]);
      expect(await selectAll(connection, 1)).toEqual([{ id: 1, name: 'bolt' }]);
      expect(await selectAll(connection, 2)).toEqual([]);
      await sql`select count(*) from widgets`.execute(connection);
      await sql`select count(*) from widgets`.execute(connection);
      expect(await preparedHere(connection)).toEqual(['select * from widgets where id = $1']);
    });
  });

  it('keeps at most DB_STATEMENT_CACHE_SIZE statements prepared, and runs evicted ones again correctly', async () => {
    db = await open({ DB_STATEMENT_CACHE_SIZE: '3' });
    await db.kysely.connection().execute(async (connection) => {
      const held: number[] = [];
      for (let round = 0; round < 2; round++) {
        for (let i = 0; i < 12; i++) {
          for (let run = 0; run < 2; run++) {
            // Twelve distinct texts (the added constant differs), each run twice so that it is prepared.
            const { rows } = await sql<{ n: number }>`select ${i}::int + ${sql.lit(i)} as n`.execute(connection);
            expect(rows).toEqual([{ n: 2 * i }]);
            held.push((await preparedHere(connection)).length);
          }
        }
      }
      expect(Math.max(...held)).toBe(3);
    });
  });

  it('answers a prepared `select *` again after another connection added a column, outside a transaction', async () => {
    db = await open({});
    await db.kysely.connection().execute(async (connection) => {
      await sql`create table widgets (id integer primary key, name text not null)`.execute(connection);
      await sql`insert into widgets (id, name) values (1, 'bolt')`.execute(connection);
      await selectAll(connection, 1);
      await selectAll(connection, 1);
      expect(await preparedHere(connection)).toEqual(['select * from widgets where id = $1']);
      await addColumnElsewhere();
      expect(await selectAll(connection, 1)).toEqual([{ id: 1, name: 'bolt', colour: 'red' }]);
      // Every statement was dropped; the select is prepared again from its next run.
      expect(await preparedHere(connection)).toEqual([]);
      expect(await selectAll(connection, 1)).toEqual([{ id: 1, name: 'bolt', colour: 'red' }]);
      expect(await preparedHere(connection)).toEqual(['select * from widgets where id = $1']);
    });
  });

  it('fails the transaction that meets the changed table once, and the next one succeeds', async () => {
    db = await open({});
    await db.kysely.connection().execute(async (connection) => {
      await sql`create table widgets (id integer primary key, name text not null)`.execute(connection);
      await sql`insert into widgets (id, name) values (1, 'bolt')`.execute(connection);
      await connection.transaction().execute(async (trx) => {
        await selectAll(trx, 1);
        await selectAll(trx, 1);
      });
      expect(await preparedHere(connection)).toEqual(['select * from widgets where id = $1']);
      await addColumnElsewhere();
      const failed = connection.transaction().execute(async (trx) => {
        await sql`insert into widgets (id, name) values (${2}, ${'nut'})`.execute(trx);
        return selectAll(trx, 1);
      });
      await expect(failed).rejects.toMatchObject({
        code: '0A000',
        message: expect.stringMatching(/cached plan must not change result type/),
      });
      const rows = await connection.transaction().execute(async (trx) => {
        await sql`insert into widgets (id, name) values (${2}, ${'nut'})`.execute(trx);
        return selectAll(trx, 1);
      });
      expect(rows).toEqual([{ id: 1, name: 'bolt', colour: 'red' }]);
      // The failed transaction's insert was rolled back; the second one's is there once.
      expect((await sql<{ id: number }>`select id from widgets order by id`.execute(connection)).rows).toEqual([{ id: 1 }, { id: 2 }]);
    });
  });
});
