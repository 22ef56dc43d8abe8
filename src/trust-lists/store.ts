import type { Insertable, Selectable, Updateable } from 'kysely';
import type { TrustListsTable, TrustListVersionsTable } from '../platform/db/schema.js';
import type { TenantDb } from '../platform/db/tenant-db.js';
import type { Executor } from '../platform/db/values.js';

export type TrustListRow = Selectable<TrustListsTable>;
export type TrustListVersionRow = Selectable<TrustListVersionsTable>;

export const listTrustLists = (db: TenantDb) => db.selectFrom('trust_lists').selectAll().orderBy('created_at').orderBy('id').execute();

export const findTrustList = (db: TenantDb, id: string) => db.selectFrom('trust_lists').selectAll().where('id', '=', id).executeTakeFirst();

/** The key chain references of every list of the tenant (few rows; filtered by the caller). */
export const keyChainReferences = (db: TenantDb) =>
  db.selectFrom('trust_lists').select(['id', 'key_chain_id', 'entity_key_chains']).orderBy('id').execute();

export async function insertTrustList(db: TenantDb, row: Omit<Insertable<TrustListsTable>, 'tenant_id'>) {
  await db.insertInto('trust_lists', row).execute();
}

/**
 * Compare-and-set on the signed state (sequence number and issue time): a concurrent update or
 * re-signing makes this a no-op, reported as false.
 */
export async function updateTrustList(
  db: TenantDb,
  id: string,
  expected: { sequenceNumber: number; issuedAt: string },
  changes: Updateable<TrustListsTable>,
) {
  const result = await db
    .updateTable('trust_lists')
    .set(changes)
    .where('id', '=', id)
    .where('sequence_number', '=', expected.sequenceNumber)
    .where('issued_at', '=', expected.issuedAt)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteTrustList(db: TenantDb, id: string) {
  await db.deleteFrom('trust_list_versions').where('trust_list_id', '=', id).execute();
  await db.deleteFrom('trust_lists').where('id', '=', id).execute();
}

export async function insertVersion(db: TenantDb, row: Omit<Insertable<TrustListVersionsTable>, 'tenant_id'>) {
  await db.insertInto('trust_list_versions', row).execute();
}

export const listVersions = (db: TenantDb, trustListId: string) =>
  db.selectFrom('trust_list_versions').selectAll().where('trust_list_id', '=', trustListId).orderBy('sequence_number', 'desc').execute();

export const findVersion = (db: TenantDb, trustListId: string, id: string) =>
  db.selectFrom('trust_list_versions').selectAll().where('trust_list_id', '=', trustListId).where('id', '=', id).executeTakeFirst();

/** Across tenants, for the scheduler: lists whose re-signing time has come. */
export const listsDue = (db: Executor, now: string) =>
  db.selectFrom('trust_lists').select(['tenant_id', 'id']).where('resign_at', '<=', now).orderBy('resign_at').limit(1000).execute();

/** Makes the scheduler re-sign a list at its next round (after a failed re-signing on rotation). */
export async function resignSoon(db: TenantDb, id: string, now: string) {
  await db.updateTable('trust_lists').set({ resign_at: now }).where('id', '=', id).execute();
}
