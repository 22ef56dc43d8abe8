import type { Insertable, Updateable } from 'kysely';
import type { ClientsTable } from '../platform/db/schema.js';
import type { Executor } from '../platform/db/values.js';

/**
 * Clients are the one table whose rows may belong to no tenant (the service's own managers), so it
 * takes an explicit scope instead of a TenantDb: a tenant id, or null for "every client".
 */
export type ClientScope = string | null;

function scoped(db: Executor, scope: ClientScope) {
  const query = db.selectFrom('clients').selectAll();
  return scope === null ? query : query.where('tenant_id', '=', scope);
}

export const findClient = (db: Executor, scope: ClientScope, id: string) => scoped(db, scope).where('id', '=', id).executeTakeFirst();

export const listClients = (db: Executor, scope: ClientScope) => scoped(db, scope).orderBy('created_at').orderBy('id').execute();

export const listClientsOfTenants = (db: Executor, tenantIds: string[]) =>
  tenantIds.length === 0
    ? Promise.resolve([])
    : db.selectFrom('clients').selectAll().where('tenant_id', 'in', tenantIds).orderBy('created_at').orderBy('id').execute();

export async function insertClient(db: Executor, row: Insertable<ClientsTable>) {
  await db.insertInto('clients').values(row).execute();
}

export async function updateClient(db: Executor, scope: ClientScope, id: string, changes: Updateable<ClientsTable>) {
  let query = db.updateTable('clients').set(changes).where('id', '=', id);
  if (scope !== null) query = query.where('tenant_id', '=', scope);
  const result = await query.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteClient(db: Executor, scope: ClientScope, id: string) {
  let query = db.deleteFrom('clients').where('id', '=', id);
  if (scope !== null) query = query.where('tenant_id', '=', scope);
  const result = await query.executeTakeFirst();
  return result.numDeletedRows > 0n;
}
