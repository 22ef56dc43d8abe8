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
