import type { Insertable, Selectable, Updateable } from 'kysely';
import type { PresentationConfigsTable } from '../platform/db/schema.js';
import type { TenantDb } from '../platform/db/tenant-db.js';

export type PresentationConfigRow = Selectable<PresentationConfigsTable>;
/** The columns that hold a reference, each indexed with the tenant. */
export type ReferenceColumn = 'webhook_endpoint_id' | 'access_key_chain_id';

export const listConfigs = (db: TenantDb) =>
  db.selectFrom('presentation_configs').selectAll().orderBy('created_at').orderBy('id').execute();

export const findConfig = (db: TenantDb, id: string) =>
  db.selectFrom('presentation_configs').selectAll().where('id', '=', id).executeTakeFirst();

/** False when a row with the id exists already (created concurrently): the caller updates it instead. */
export async function insertConfigIfAbsent(db: TenantDb, row: Omit<Insertable<PresentationConfigsTable>, 'tenant_id'>) {
  const result = await db
    .insertInto('presentation_configs', row)
    .onConflict((oc) => oc.columns(['tenant_id', 'id']).doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export async function updateConfig(db: TenantDb, id: string, changes: Updateable<PresentationConfigsTable>) {
  await db.updateTable('presentation_configs').set(changes).where('id', '=', id).execute();
}

export async function deleteConfig(db: TenantDb, id: string) {
  await db.deleteFrom('presentation_configs').where('id', '=', id).execute();
}

/** Ids of the configurations that refer to `value` through `column`. */
export async function idsReferencing(db: TenantDb, column: ReferenceColumn, value: string): Promise<string[]> {
  const rows = await db.selectFrom('presentation_configs').select('id').where(column, '=', value).orderBy('id').execute();
  return rows.map((row) => row.id);
}

/**
 * Writes the row without changing it: true when it exists. Inside a transaction the row then stays
 * locked (PostgreSQL row lock, SQLite write lock) until it ends, so that changes of one configuration
 * (and of its webhook's signing secret) follow one another instead of deciding on the same old row.
 */
export async function lockConfig(db: TenantDb, id: string): Promise<boolean> {
  const result = await db
    .updateTable('presentation_configs')
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
