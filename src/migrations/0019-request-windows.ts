import type { Kysely } from 'kysely';
import type { VersionedMigration } from './types.js';

/**
 * Requests counted per key (an issuer and an address, say) in fixed windows, so that a limit holds
 * across instances: each request is admitted by one conditional upsert of its key's row.
 */
export const requestWindows: VersionedMigration = {
  async up(db: Kysely<unknown>, t) {
    await db.schema
      .createTable('request_windows')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('window_start', t.timestamp, (c) => c.notNull())
      .addColumn('count', 'integer', (c) => c.notNull())
      .execute();
  },
};
