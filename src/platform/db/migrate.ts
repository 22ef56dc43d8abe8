import { type Migration, Migrator } from 'kysely';

import type { Db } from './connect.js';

/** Brings the schema to the latest version; safe to run from several instances at once. */
export async function migrate(db: Db, migrations: Record<string, Migration>): Promise<void> {
  const migrator = new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error) {
    const detail = error instanceof Error ? error.message : String(error);
    const name = failed ? `migration ${failed.migrationName}` : 'migration';
    throw new Error(`database ${name} failed: ${detail}`, { cause: error });
  }
}
