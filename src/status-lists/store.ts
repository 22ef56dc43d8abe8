// Queries of the status-list tables; every one goes through a TenantDb.
import { type Insertable, type RawBuilder, type Selectable, sql } from 'kysely';
import type { StatusEntriesTable, StatusListsTable } from '../platform/db/schema.js';
import type { TenantDb } from '../platform/db/tenant-db.js';
import { type Executor, takesRowLocks } from '../platform/db/values.js';

export type StatusListRow = Selectable<StatusListsTable>;
/** A list without its bitset and tokens: what listings and freshness checks read. */
export type StatusListMeta = Omit<StatusListRow, 'bitset' | 'token_jwt' | 'token_cwt' | 'permutation_key'>;

const META = [
  'tenant_id',
  'id',
  'credential_configuration_id',
  'key_chain_id',
  'bits',
  'capacity',
  'ttl',
  'immediate_update',
  'enable_aggregation',
  'used_entries',
  'version',
  'token_version',
  'token_seq',
  'token_issued_at',
  'token_expires_at',
  'created_at',
  'updated_at',
] as const;

/**
 * Makes the decisions to open a tenant's lists (its limit on lists, the roll-over when all are full)
 * one at a time, until the caller's transaction ends: on PostgreSQL a transaction-scoped advisory
 * lock on the tenant, taken before the decision reads the lists. SQLite needs none: its one
 * connection runs one transaction at a time.
 */
export async function lockListOpening(trx: Executor, tenantId: string) {
  if (takesRowLocks(trx)) await sql`select pg_advisory_xact_lock(hashtext('status-list-opening'), hashtext(${tenantId}))`.execute(trx);
}

export async function insertList(db: TenantDb, row: Omit<Insertable<StatusListsTable>, 'tenant_id'>) {
  await db.insertInto('status_lists', row).execute();
}

export function listLists(db: TenantDb): Promise<StatusListMeta[]> {
  return db.selectFrom('status_lists').select(META).orderBy('created_at').orderBy('id').execute();
}

export function findMeta(db: TenantDb, id: string): Promise<StatusListMeta | undefined> {
  return db.selectFrom('status_lists').select(META).where('id', '=', id).executeTakeFirst();
}

export function findList(db: TenantDb, id: string): Promise<StatusListRow | undefined> {
  return db.selectFrom('status_lists').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A stored token and what decides whether it may be served. */
export type StoredTokens = Pick<StatusListRow, 'token_jwt' | 'token_cwt' | 'token_seq' | 'token_expires_at' | 'token_version' | 'version'>;

export function findTokens(db: TenantDb, id: string): Promise<StoredTokens | undefined> {
  return db
    .selectFrom('status_lists')
    .select(['token_jwt', 'token_cwt', 'token_seq', 'token_expires_at', 'token_version', 'version'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * The lists with free entries a credential of `configurationId` may use, in the order they are used:
 * with `keyChainId` (its issuer signs its lists), only lists bound to it and signed by that key chain,
 * oldest first; else its own lists first, then shared ones.
 */
export function usableLists(db: TenantDb, configurationId: string, keyChainId?: string) {
  const free = db.selectFrom('status_lists').select('id').where(sql<boolean>`used_entries < capacity`);
  if (keyChainId) {
    return free.where('credential_configuration_id', '=', configurationId).where('key_chain_id', '=', keyChainId).orderBy('created_at');
  }
  return free
    .where((eb) => eb.or([eb('credential_configuration_id', '=', configurationId), eb('credential_configuration_id', 'is', null)]))
    .orderBy(sql`case when credential_configuration_id is null then 1 else 0 end`)
    .orderBy('created_at');
}

export type ClaimedSlot = { id: string; used_entries: number; capacity: number; permutation_key: string };

/** Takes the next free slot of a list atomically; undefined when the list is full (or gone). */
export function claimSlot(db: TenantDb, id: string) {
  return db
    .updateTable('status_lists')
    .set({ used_entries: sql`used_entries + 1` })
    .where('id', '=', id)
    .where(sql<boolean>`used_entries < capacity`)
    .returning(['id', 'used_entries', 'capacity', 'permutation_key'])
    .executeTakeFirst();
}

/**
 * Takes the next free slot of the first usable list in one statement (the list chosen and its counter
 * moved on together); undefined when that list filled meanwhile or none has room.
 */
export function claimFirstSlot(db: TenantDb, configurationId: string, keyChainId?: string) {
  return db
    .updateTable('status_lists')
    .set({ used_entries: sql`used_entries + 1` })
    .where('id', '=', usableLists(db, configurationId, keyChainId).limit(1))
    .where(sql<boolean>`used_entries < capacity`)
    .returning(['id', 'used_entries', 'capacity', 'permutation_key'])
    .executeTakeFirst();
}

export type EntryRow = Omit<Insertable<StatusEntriesTable>, 'tenant_id'>;
export type EntriesInsert = ReturnType<typeof insertEntries>;

/** The INSERT of allocated entries' rows, each with the tenant, with RETURNING (so that it can go in another statement as a CTE). */
export function insertEntries(db: Executor, tenantId: string, rows: EntryRow[]) {
  return db
    .insertInto('status_entries')
    .values(rows.map((row) => ({ ...row, tenant_id: tenantId })))
    .returning('idx');
}

/** Records `status` on the session's entries (or those of one configuration), as their bits are set; the entries. */
export function setEntriesStatus(db: TenantDb, sessionId: string, configurationId: string | undefined, status: number) {
  let query = db.updateTable('status_entries').set({ status }).where('session_id', '=', sessionId);
  if (configurationId !== undefined) query = query.where('credential_configuration_id', '=', configurationId);
  return query.returning(['list_id', 'idx']).execute();
}

/**
 * SQL that holds while no credential of the session `sessionId` (an SQL expression naming a session
 * id of the tenant `tenantId`) has a status other than 0 (valid): revoked, suspended or any other.
 */
export const credentialsAllValid = (tenantId: RawBuilder<string>, sessionId: RawBuilder<string>) =>
  sql<boolean>`not exists (select 1 from status_entries where status_entries.tenant_id = ${tenantId}
    and status_entries.session_id = ${sessionId} and status_entries.status <> 0)`;

/** Every entry of a session, with the configuration of its credential, in the order they were handed out. */
export function entriesOfSessionWithConfiguration(db: TenantDb, sessionId: string) {
  return db
    .selectFrom('status_entries')
    .select(['list_id', 'idx', 'credential_configuration_id'])
    .where('session_id', '=', sessionId)
    .orderBy('created_at')
    .orderBy('list_id')
    .orderBy('idx')
    .execute();
}

/** Writes a changed bitset if nobody else changed it since `version` was read; false otherwise. */
export async function writeBitset(db: TenantDb, id: string, version: number, bitset: Uint8Array, now: string): Promise<boolean> {
  const result = await db
    .updateTable('status_lists')
    .set({ bitset: Buffer.from(bitset.buffer, bitset.byteOffset, bitset.byteLength), version: version + 1, updated_at: now })
    .where('id', '=', id)
    .where('version', '=', version)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Stores a signed token made from `version`, unless a token of a later version is stored already; the new sequence number. */
export async function storeTokens(
  db: TenantDb,
  id: string,
  token: { version: number; jwt: string; cwt: Uint8Array; issuedAt: string; expiresAt: string },
): Promise<number | undefined> {
  const row = await db
    .updateTable('status_lists')
    .set({
      token_jwt: token.jwt,
      token_cwt: Buffer.from(token.cwt),
      token_version: token.version,
      token_seq: sql`token_seq + 1`,
      token_issued_at: token.issuedAt,
      token_expires_at: token.expiresAt,
    })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('token_version', 'is', null), eb('token_version', '<=', token.version)]))
    .returning('token_seq')
    .executeTakeFirst();
  return row?.token_seq;
}

/** Drops the stored token (after a change of key chain): the next request signs a new one. */
export async function forgetTokens(db: TenantDb, id: string) {
  await db.updateTable('status_lists').set({ token_expires_at: null, token_version: null }).where('id', '=', id).execute();
}

export async function updateList(
  db: TenantDb,
  id: string,
  change: { credential_configuration_id?: string | null; key_chain_id?: string | null; updated_at: string },
) {
  await db.updateTable('status_lists').set(change).where('id', '=', id).execute();
}

export async function deleteList(db: TenantDb, id: string) {
  await db.deleteFrom('status_lists').where('id', '=', id).execute();
}

export async function countLists(db: TenantDb): Promise<number> {
  const row = await db
    .selectFrom('status_lists')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function countEntries(db: TenantDb, listId: string): Promise<number> {
  const row = await db
    .selectFrom('status_entries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('list_id', '=', listId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export function listsUsingKeyChain(db: TenantDb, keyChainId: string) {
  return db.selectFrom('status_lists').select('id').where('key_chain_id', '=', keyChainId).execute();
}
