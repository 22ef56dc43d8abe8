import type { Insertable, Updateable } from 'kysely';
import type { TenantsTable } from '../platform/db/schema.js';
import type { Executor } from '../platform/db/values.js';

export const findTenant = (db: Executor, id: string) => db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
/** Every tenant's session storage overrides, for the retention job. */
export const listSessionConfigs = (db: Executor) => db.selectFrom('tenants').select(['id', 'session_config']).orderBy('id').execute();
export const listTenants = (db: Executor) => db.selectFrom('tenants').selectAll().orderBy('created_at').orderBy('id').execute();

export async function insertTenant(db: Executor, row: Insertable<TenantsTable>) {
  await db.insertInto('tenants').values(row).execute();
}
export async function updateTenant(db: Executor, id: string, changes: Updateable<TenantsTable>) {
  await db.updateTable('tenants').set(changes).where('id', '=', id).execute();
}
/** Everything the tenant owns goes with it, by ON DELETE CASCADE. */
export async function deleteTenant(db: Executor, id: string) {
  await db.deleteFrom('tenants').where('id', '=', id).execute();
}
