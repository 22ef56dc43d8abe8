import type { Insertable, Selectable, Updateable } from 'kysely';
import type { HttpEndpointsTable } from '../platform/db/schema.js';
import type { TenantDb } from '../platform/db/tenant-db.js';

/** The two tables of this shape; both have the columns of HttpEndpointsTable. */
export type EndpointTable = 'attribute_providers' | 'webhook_endpoints';
export type EndpointRow = Selectable<HttpEndpointsTable>;

// Kysely types queries per table; the two tables share one row type, so one of them stands for both.
const typed = (table: EndpointTable) => table as 'attribute_providers';

export const listEndpoints = (db: TenantDb, table: EndpointTable) =>
  db.selectFrom(typed(table)).selectAll().orderBy('created_at').orderBy('id').execute();

export const findEndpoint = (db: TenantDb, table: EndpointTable, id: string) =>
  db.selectFrom(typed(table)).selectAll().where('id', '=', id).executeTakeFirst();

export async function insertEndpoint(db: TenantDb, table: EndpointTable, row: Omit<Insertable<HttpEndpointsTable>, 'tenant_id'>) {
  await db.insertInto(typed(table), row).execute();
}

export async function updateEndpoint(db: TenantDb, table: EndpointTable, id: string, changes: Updateable<HttpEndpointsTable>) {
  await db.updateTable(typed(table)).set(changes).where('id', '=', id).execute();
}

export async function deleteEndpoint(db: TenantDb, table: EndpointTable, id: string) {
  await db.deleteFrom(typed(table)).where('id', '=', id).execute();
}

/**
 * Writes the row without changing it: true when it exists. Inside a transaction the row then stays
 * locked (PostgreSQL row lock, SQLite write lock) until the transaction ends.
 */
export async function lockEndpoint(db: TenantDb, table: EndpointTable, id: string): Promise<boolean> {
  const result = await db
    .updateTable(typed(table))
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
