import type { TenantDb } from '../platform/db/tenant-db.js';
import { isUniqueViolation } from '../platform/db/values.js';

/**
 * Remembers a published version. One the tenant had published before (deleted at the registrar and
 * published again) is already remembered: that is no failure of the publication.
 */
export async function recordPublication(
  db: TenantDb,
  row: { schema_id: string; version: string; attestation_id: string; created_at: string },
) {
  try {
    await db.insertInto('schema_metadata_publications', row).execute();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
  }
}

/** The ids the tenant published, each once, oldest first. */
export async function publishedIds(db: TenantDb): Promise<string[]> {
  const rows = await db
    .selectFrom('schema_metadata_publications')
    .select('schema_id')
    .groupBy('schema_id')
    .orderBy((eb) => eb.fn.min('created_at'))
    .execute();
  return rows.map((row) => row.schema_id);
}
