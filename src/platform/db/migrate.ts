import { type Migration, Migrator, sql } from 'kysely';

import type { Db } from './connect.js';

/** Brings the schema to the latest version; safe to run from several instances at once. */
export async function migrate(db: Db, migrations: Record<string, Migration>): Promise<void> {
  if (await allApplied(db, Object.keys(migrations))) return;
  if (db.dialect === 'postgres') return underMigrationLock(db, () => runMigrator(db, migrations));
  // SQLite: one writer at a time, and Kysely's migrator runs in a transaction of its own.
  return runMigrator(db, migrations);
}

/** Any number, the same in every instance of every version. */
const MIGRATION_LOCK = 7_316_402_118;
const LOCK_RETRY_MS = 200;

/**
 * Runs `work` (on other connections of the pool) while a transaction holds an advisory lock:
 * instances starting at once migrate one after the other, each finding the schema as the one before
 * left it. A transaction keeps one server session to its end even behind a transaction-mode pooler
 * (PgBouncer), where a session-level lock and its release can land on different sessions; and the
 * lock goes with the transaction when the process dies, as the connection closes. An instance that
 * finds the lock taken ends its transaction and tries again later, so that waiting instances do not
 * each hold one of the pooler's few server sessions while the migrating one needs two.
 */
async function underMigrationLock(db: Db, work: () => Promise<void>): Promise<void> {
  for (;;) {
    const done = await db.kysely.transaction().execute(async (trx) => {
      const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${sql.lit(MIGRATION_LOCK)}) as locked`.execute(trx);
      if (!rows[0]?.locked) return false;
      await work();
      return true;
    });
    if (done) return;
    await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
  }
}

async function runMigrator(db: Db, migrations: Record<string, Migration>): Promise<void> {
  const migrator = new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error) {
    const detail = error instanceof Error ? error.message : String(error);
    const name = failed ? `migration ${failed.migrationName}` : 'migration';
    throw new Error(`database ${name} failed: ${detail}`, { cause: error });
  }
}

/**
 * Every start after the first finds the schema current: one read of the migrator's own table says
 * so, where the migrator would first create its tables if missing, take its lock and read the same
 * rows (some 15 ms of the start on SQLite). Anything else goes to the migrator: no table yet, a
 * migration not applied, or one applied that this version does not know (a newer schema, which the
 * migrator refuses).
 */
async function allApplied(db: Db, names: string[]): Promise<boolean> {
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db.kysely);
    const applied = new Set(rows.map((row) => row.name));
    return applied.size === names.length && names.every((name) => applied.has(name));
  } catch {
    return false;
  }
}
