import type { Insertable, Updateable } from 'kysely';
import type { UsersTable } from '../platform/db/schema.js';
import type { TenantDb } from '../platform/db/tenant-db.js';

export const listUsers = (db: TenantDb) => db.selectFrom('users').selectAll().orderBy('created_at').orderBy('id').execute();
export const findUser = (db: TenantDb, id: string) => db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();

export async function insertUser(db: TenantDb, row: Omit<Insertable<UsersTable>, 'tenant_id'>) {
  await db.insertInto('users', row).execute();
}
export async function updateUser(db: TenantDb, id: string, changes: Updateable<UsersTable>) {
  await db.updateTable('users').set(changes).where('id', '=', id).execute();
}
export async function deleteUser(db: TenantDb, id: string) {
  await db.deleteFrom('users').where('id', '=', id).execute();
}
