import type { Kysely } from 'kysely';
import type { VersionedMigration } from './types.js';

/**
 * Settings of the service as a whole, one row per name (no tenant). The first is the check value of
 * MASTER_SECRET (master-secret-check.ts): sealed under it at the first start, so that a later start
 * with another secret stops before it serves data it cannot open.
 *
 * Numbered 0013 after 0012: no 0011 was ever released, and the migrator refuses a migration that sorts
 * before one a database has already applied.
 */
export const serviceSettings: VersionedMigration = {
  async up(db: Kysely<unknown>, t) {
    await db.schema
      .createTable('service_settings')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();
  },
};
