import type { Kysely } from 'kysely';
import type { VersionedMigration } from './types.js';

/**
 * Failed management token attempts are counted in request_windows, the one window counter of the
 * service (rate limits and the wallet-initiated limit count there too), so auth_failures goes. Its
 * rows are counts of windows of at most minutes: none is worth carrying over.
 */
export const oneWindowCounter: VersionedMigration = {
  async up(db: Kysely<unknown>) {
    await db.schema.dropTable('auth_failures').ifExists().execute();
  },
};
