import { type Kysely, sql } from 'kysely';
import type { VersionedMigration } from './types.js';

/**
 * Each status entry keeps the status last set on it, beside the bit in its list: so one SQL condition
 * can ask whether a session's credentials are all valid, in the statement that spends a refresh token
 * (a revoked or suspended session is not refreshed). Entries changed before this version take their
 * value from the bitset, read once here; only non-zero values are written.
 */
export const statusEntryStatus: VersionedMigration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('status_entries')
      .addColumn('status', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    const lists = await sql<{ tenant_id: string; id: string; bits: number; bitset: Uint8Array }>`
      select tenant_id, id, bits, bitset from status_lists where exists (
        select 1 from status_entries e where e.tenant_id = status_lists.tenant_id and e.list_id = status_lists.id)`.execute(db);
    for (const list of lists.rows) {
      const entries = await sql<{ idx: number }>`
        select idx from status_entries where tenant_id = ${list.tenant_id} and list_id = ${list.id}`.execute(db);
      const bytes = new Uint8Array(list.bitset);
      for (const { idx } of entries.rows) {
        // The Token Status List layout: least significant bits first (status-lists/bitset.ts).
        const bit = idx * list.bits;
        const status = ((bytes[bit >> 3] as number) >> (bit & 7)) & ((1 << list.bits) - 1);
        if (status === 0) continue;
        await sql`update status_entries set status = ${status}
          where tenant_id = ${list.tenant_id} and list_id = ${list.id} and idx = ${idx}`.execute(db);
      }
    }
  },
};
