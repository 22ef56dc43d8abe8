import type { Kysely } from 'kysely';
import type { VersionedMigration } from './types.js';

/**
 * Indexes for statements that scanned a table growing with the service's age (found with EXPLAIN
 * ANALYZE on a database of a year's data, bench/growth.ts):
 * - deferred_transactions(session_id): deleting a session cascades to its deferred transactions, and
 *   the cascade looked for them by scanning the whole table, once per deleted session;
 * - request_windows(window_start): the clean-up job deletes the windows that ended;
 * - webhook_deliveries(state, created_at): the clean-up job deletes finished deliveries by age.
 */
export const growthIndexes: VersionedMigration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createIndex('deferred_transactions_session_idx').on('deferred_transactions').column('session_id').execute();
    await db.schema.createIndex('request_windows_start_idx').on('request_windows').column('window_start').execute();
    await db.schema.createIndex('webhook_deliveries_finished_idx').on('webhook_deliveries').columns(['state', 'created_at']).execute();
  },
};
