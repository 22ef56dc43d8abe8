import type { ExpressionBuilder, Insertable, SelectQueryBuilder, Updateable } from 'kysely';
import type { Database, SessionsTable } from '../platform/db/schema.js';
import type { TenantDb } from '../platform/db/tenant-db.js';
import type { Executor } from '../platform/db/values.js';
import { OPEN_STATUSES, type SessionStatus } from './model.js';

export const findSession = (db: TenantDb, id: string) => db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();

/** The session, its row locked until the transaction ends where the engine has row locks (`forUpdate`). */
export function lockSession(db: TenantDb, id: string, forUpdate: boolean) {
  const query = db.selectFrom('sessions').selectAll().where('id', '=', id);
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

/** Inserts the session and returns the row as stored. */
export function insertSession(db: TenantDb, row: Omit<Insertable<SessionsTable>, 'tenant_id'>) {
  return db.insertInto('sessions', row).returningAll().executeTakeFirstOrThrow();
}

/** Updates only while the row still has one of `statuses`: a compare-and-set. */
export async function updateSession(db: TenantDb, id: string, changes: Updateable<SessionsTable>, statuses?: readonly string[]) {
  let query = db.updateTable('sessions').set(changes).where('id', '=', id);
  if (statuses) query = query.where('status', 'in', statuses);
  // The row as updated (undefined when the condition failed), so no second read is needed.
  return query.returningAll().executeTakeFirst();
}

/**
 * Counts one more wrong transaction code, in one statement and only while the offer has attempts
 * left and is unredeemed: the count returned is this guess's place (1 to `max`), undefined when no
 * attempt was left. So however many guesses race, at most `max` are ever counted as evaluated.
 */
export async function countTxCodeFailure(db: TenantDb, id: string, max: number) {
  const row = await db
    .updateTable('sessions')
    .set((eb) => ({ tx_code_failed_attempts: eb('tx_code_failed_attempts', '+', 1) }))
    .where('id', '=', id)
    .where('tx_code_failed_attempts', '<', max)
    .where('consumed', '=', 0)
    .returning('tx_code_failed_attempts')
    .executeTakeFirst();
  return row?.tx_code_failed_attempts;
}

export async function insertHandle(db: Executor, row: { hash: string; purpose: string; session_id: string; expires_at: string }) {
  await db.insertInto('session_handles').values(row).execute();
}

/** The session a live handle belongs to, read in the same query. */
export const findHandle = (db: Executor, hash: string, purpose: string, now: string) =>
  db
    .selectFrom('session_handles')
    .innerJoin('sessions', 'sessions.id', 'session_handles.session_id')
    .selectAll('sessions')
    .where('session_handles.hash', '=', hash)
    .where('session_handles.purpose', '=', purpose)
    .where('session_handles.expires_at', '>', now)
    .executeTakeFirst();

/** Renames a live handle's purpose, so exactly one of two racing callers succeeds; false when it was not live. */
export async function respurposeHandle(db: Executor, hash: string, purpose: string, newPurpose: string, now: string) {
  const result = await db
    .updateTable('session_handles')
    .set({ purpose: newPurpose })
    .where('hash', '=', hash)
    .where('purpose', '=', purpose)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteHandles(db: Executor, sessionId: string, purpose: string) {
  await db.deleteFrom('session_handles').where('session_id', '=', sessionId).where('purpose', '=', purpose).execute();
}

export async function insertLog(
  db: Executor,
  row: { session_id: string; level: string; message: string; details: string | null; created_at: string },
) {
  await db.insertInto('session_logs').values(row).execute();
}

export type SessionSortKey = 'createdAt' | 'updatedAt' | 'status' | 'expiresAt';
export interface SessionListFilter {
  kind?: string;
  status?: SessionStatus;
  /** The moment that decides which open sessions count as expired. */
  now: string;
}
export interface SessionPageQuery extends SessionListFilter {
  sortBy: SessionSortKey;
  sortOrder: 'asc' | 'desc';
  offset: number;
  limit: number;
}

type SessionsQuery = SelectQueryBuilder<Database, 'sessions', {}>;
const OPEN = OPEN_STATUSES as SessionStatus[];

/** The status a reader sees: an open session past its expiry is expired even before the cleanup job marks it. */
const effectiveStatus = (now: string) => (eb: ExpressionBuilder<Database, 'sessions'>) =>
  eb
    .case()
    .when(eb.and([eb('status', 'in', OPEN), eb('expires_at', '<=', now)]))
    .then('expired')
    .else(eb.ref('status'))
    .end();

function filtered(query: SessionsQuery, filter: SessionListFilter): SessionsQuery {
  const { kind, status, now } = filter;
  let q = kind ? query.where('kind', '=', kind) : query;
  if (status === 'expired') {
    q = q.where((eb) => eb.or([eb('status', '=', 'expired'), eb.and([eb('status', 'in', OPEN), eb('expires_at', '<=', now)])]));
  } else if (status && OPEN.includes(status)) {
    q = q.where('status', '=', status).where('expires_at', '>', now);
  } else if (status) {
    q = q.where('status', '=', status);
  }
  return q;
}

const SORT_COLUMNS = { createdAt: 'created_at', updatedAt: 'updated_at', expiresAt: 'expires_at' } as const;

export function listSessions(db: TenantDb, query: SessionPageQuery) {
  const base = filtered(db.selectFrom('sessions'), query).selectAll();
  const sorted =
    query.sortBy === 'status'
      ? base.orderBy(effectiveStatus(query.now), query.sortOrder)
      : base.orderBy(SORT_COLUMNS[query.sortBy], query.sortOrder);
  // The id breaks ties, so that paging over equal keys neither repeats nor skips a session.
  return sorted.orderBy('id', query.sortOrder).limit(query.limit).offset(query.offset).execute();
}

export async function countSessions(db: TenantDb, filter: SessionListFilter): Promise<number> {
  const row = await filtered(db.selectFrom('sessions'), filter)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function deleteSession(db: TenantDb, id: string) {
  const result = await db.deleteFrom('sessions').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export const listLogs = (db: Executor, sessionId: string) =>
  db.selectFrom('session_logs').selectAll().where('session_id', '=', sessionId).orderBy('seq', 'asc').execute();

/** Open sessions whose expiry has passed but whose row still says active or fetched. */
export const listLapsed = (db: TenantDb, now: string) =>
  db.selectFrom('sessions').select(['id', 'status']).where('status', 'in', OPEN).where('expires_at', '<=', now).execute();

export async function deleteCreatedBefore(db: TenantDb, cutoff: string) {
  const result = await db.deleteFrom('sessions').where('created_at', '<', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export const listToAnonymize = (db: TenantDb, cutoff: string, limit: number) =>
  db
    .selectFrom('sessions')
    .select(['id', 'public_data'])
    .where('created_at', '<', cutoff)
    .where('anonymized', '=', 0)
    .orderBy('created_at')
    .limit(limit)
    .execute();

export async function anonymizeSession(db: TenantDb, id: string, publicData: string) {
  await db.updateTable('sessions').set({ public_data: publicData, private_data: null, anonymized: 1 }).where('id', '=', id).execute();
}

export async function deleteAllHandles(db: Executor, sessionId: string) {
  await db.deleteFrom('session_handles').where('session_id', '=', sessionId).execute();
}
