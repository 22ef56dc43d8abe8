import type { Insertable, Selectable, Updateable } from 'kysely';
import type { KeyChainsTable } from '../platform/db/schema.js';
import type { TenantDb } from '../platform/db/tenant-db.js';
import { type Executor, takesRowLocks } from '../platform/db/values.js';

export type KeyChainRow = Selectable<KeyChainsTable>;
export type NewKeyChainRow = Omit<Insertable<KeyChainsTable>, 'tenant_id'>;

export function listKeyChains(db: TenantDb, usageType?: string) {
  let query = db.selectFrom('key_chains').selectAll().orderBy('created_at').orderBy('id');
  if (usageType) query = query.where('usage_type', '=', usageType);
  return query.execute();
}

export const findKeyChain = (db: TenantDb, id: string) => db.selectFrom('key_chains').selectAll().where('id', '=', id).executeTakeFirst();

export const findDefaultKeyChain = (db: TenantDb, usageType: string) =>
  db.selectFrom('key_chains').selectAll().where('usage_type', '=', usageType).where('is_default', '=', 1).executeTakeFirst();

export async function insertKeyChain(db: TenantDb, row: NewKeyChainRow) {
  await db.insertInto('key_chains', row).execute();
}

/** Compare-and-set on updated_at: a concurrent change (another instance rotating) makes this a no-op. */
export async function updateKeyChain(db: TenantDb, id: string, expectedUpdatedAt: string, changes: Updateable<KeyChainsTable>) {
  const result = await db
    .updateTable('key_chains')
    .set(changes)
    .where('id', '=', id)
    .where('updated_at', '=', expectedUpdatedAt)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function clearDefault(db: TenantDb, usageType: string) {
  await db.updateTable('key_chains').set({ is_default: 0 }).where('usage_type', '=', usageType).execute();
}

export async function deleteKeyChain(db: TenantDb, id: string) {
  await db.deleteFrom('key_chains').where('id', '=', id).execute();
}

/** Across tenants, for the scheduler: chains due for rotation, and previous keys past their expiry. */
export function keyChainsDue(db: Executor, now: string) {
  return db
    .selectFrom('key_chains')
    .select([
      'tenant_id',
      'id',
      'rotation_enabled',
      'rotation_interval_days',
      'last_rotated_at',
      'created_at',
      'updated_at',
      'previous_key_expiry',
    ])
    .where((eb) => eb.or([eb('rotation_enabled', '=', 1), eb('previous_key_expiry', '<', now)]))
    .execute();
}

/** One private key sealed in the database (any tenant's), or undefined when none is stored here. */
export function anySealedKey(db: Executor) {
  return db.selectFrom('key_chains').select(['tenant_id', 'id', 'active_jwk']).where('kms_provider', '=', 'db').limit(1).executeTakeFirst();
}

/** Drops a previous key once it has expired (only if it is still the one that expired). */
export async function forgetPreviousKey(db: Executor, tenantId: string, id: string, expiry: string) {
  await db
    .updateTable('key_chains')
    .set({ previous_jwk: null, previous_certificate: null, previous_key_expiry: null })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('previous_key_expiry', '=', expiry)
    .execute();
}

/**
 * When the tenant row was created: what tells this tenant from a deleted one of the same id, for
 * its key names in shared providers; undefined when there is no such tenant. Read through the
 * caller's transaction, which may be the one creating the tenant. With `lock`, the row is kept from
 * being deleted until that transaction ends (SQLite's one writer at a time needs no lock).
 */
export async function tenantCreatedAt(db: Executor, tenantId: string, lock = false): Promise<string | undefined> {
  let query = db.selectFrom('tenants').select('created_at').where('id', '=', tenantId);
  if (lock && takesRowLocks(db)) query = query.forShare();
  return (await query.executeTakeFirst())?.created_at;
}
