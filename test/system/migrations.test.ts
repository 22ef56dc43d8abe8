// Migrations at start-up: a current schema is left as it is (a start after the first takes a fast
// path that reads the applied migrations once); a schema newer than this version knows is refused,
// as the migrator itself refuses it, not started on silently.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { migrationsFor } from '../../src/migrations/index.js';
import { connect, type Db } from '../../src/platform/db/connect.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';

let database: TestDatabase;
let db: Db;
beforeAll(async () => {
  database = await freshDatabase();
  db = await connect(loadConfig({ NODE_ENV: 'test', MASTER_SECRET: randomBytes(32).toString('base64url'), ...database.env }));
});
afterAll(async () => {
  await db.close();
  await database.drop();
});

const applied = async () =>
  (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db.kysely)).rows.map((r) => r.name);

describe('migrations at start-up', () => {
  it('applies every migration once, and a second run on the current schema changes nothing', async () => {
    const migrations = migrationsFor(db.dialect);
    await migrate(db, migrations);
    const first = await applied();
    expect(first).toEqual(Object.keys(migrations).sort());
    await migrate(db, migrations);
    expect(await applied()).toEqual(first);
  });

  it('refuses a schema with a migration this version does not know', async () => {
    const migrations = migrationsFor(db.dialect);
    await sql`insert into kysely_migration (name, timestamp) values (${'9999_from_a_newer_version'}, ${new Date().toISOString()})`.execute(
      db.kysely,
    );
    await expect(migrate(db, migrations)).rejects.toThrow(/database migration failed: .*9999_from_a_newer_version/);
  });
});

describe('0018-status-entry-status', () => {
  it('gives each existing status entry the status its list holds for it', async () => {
    const older = await freshDatabase();
    const olderDb = await connect(loadConfig({ NODE_ENV: 'test', MASTER_SECRET: randomBytes(32).toString('base64url'), ...older.env }));
    try {
      const all = migrationsFor(olderDb.dialect);
      await migrate(olderDb, Object.fromEntries(Object.entries(all).filter(([name]) => name < '0018')));
      const now = new Date().toISOString();
      const bool = (value: boolean) => (olderDb.dialect === 'postgres' ? value : Number(value));
      await sql`insert into tenants (id, name, status, created_at, updated_at) values ('t', 'T', 'active', ${now}, ${now})`.execute(
        olderDb.kysely,
      );
      // 2 bits per entry, least significant first: entry 1 suspended (2), entry 2 revoked (1), entries 0 and 3 valid.
      const bitset = Buffer.from([0b0001_1000]);
      await sql`insert into status_lists (tenant_id, id, bits, capacity, ttl, immediate_update, enable_aggregation, used_entries,
        permutation_key, bitset, version, token_seq, created_at, updated_at)
        values ('t', 'l', 2, 4, 60, ${bool(false)}, ${bool(true)}, 4, 'k', ${bitset}, 1, 0, ${now}, ${now})`.execute(olderDb.kysely);
      for (const idx of [0, 1, 2, 3]) {
        await sql`insert into status_entries (tenant_id, list_id, idx, session_id, credential_configuration_id, created_at)
          values ('t', 'l', ${idx}, ${`s${idx}`}, 'c', ${now})`.execute(olderDb.kysely);
      }
      await migrate(olderDb, all);
      const rows = await sql<{ idx: number; status: number }>`select idx, status from status_entries order by idx`.execute(olderDb.kysely);
      expect(rows.rows.map((row) => Number(row.status))).toEqual([0, 2, 1, 0]);
    } finally {
      await olderDb.close();
      await older.drop();
    }
  });
});
