import type { Insertable, Selectable, Updateable } from 'kysely';
import type { CredentialConfigsTable } from '../platform/db/schema.js';
import type { TenantDb } from '../platform/db/tenant-db.js';

export type CredentialConfigRow = Selectable<CredentialConfigsTable>;
/** The columns that repeat a reference of the document, each indexed with the tenant. */
export type ReferenceColumn = 'key_chain_id' | 'attribute_provider_id' | 'webhook_endpoint_id';

export const listConfigs = (db: TenantDb) => db.selectFrom('credential_configs').selectAll().orderBy('created_at').orderBy('id').execute();

export const findConfig = (db: TenantDb, id: string) =>
  db.selectFrom('credential_configs').selectAll().where('id', '=', id).executeTakeFirst();

export async function insertConfig(db: TenantDb, row: Omit<Insertable<CredentialConfigsTable>, 'tenant_id'>) {
  await db.insertInto('credential_configs', row).execute();
}

export async function updateConfig(db: TenantDb, id: string, changes: Updateable<CredentialConfigsTable>) {
  await db.updateTable('credential_configs').set(changes).where('id', '=', id).execute();
}

export async function deleteConfig(db: TenantDb, id: string) {
  await db.deleteFrom('credential_configs').where('id', '=', id).execute();
}

/** Ids of the configurations that refer to `value` through `column`. */
export async function idsReferencing(db: TenantDb, column: ReferenceColumn, value: string): Promise<string[]> {
  const rows = await db.selectFrom('credential_configs').select('id').where(column, '=', value).orderBy('id').execute();
  return rows.map((row) => row.id);
}

/** The configuration of the tenant, other than `exceptId`, whose scope is `scope`. */
export async function configHoldingScope(db: TenantDb, scope: string, exceptId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('credential_configs')
    .select('id')
    .where('scope', '=', scope)
    .where('id', '<>', exceptId)
    .executeTakeFirst();
  return row?.id;
}
