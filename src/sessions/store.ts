import type { Insertable, Updateable } from 'kysely';
import type { SessionsTable } from '../platform/db/schema.js';
import type { TenantDb } from '../platform/db/tenant-db.js';
import type { Executor } from '../platform/db/values.js';

export const findSession = (db: TenantDb, id: string) => db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();

export async function insertSession(db: TenantDb, row: Omit<Insertable<SessionsTable>, 'tenant_id'>) {
  await db.insertInto('sessions', row).execute();
}

/** Updates only while the row still matches `expected` (status and/or consumed): a compare-and-set. */
export async function updateSession(
  db: TenantDb,
  id: string,
  changes: Updateable<SessionsTable>,
  expected: { statuses?: readonly string[]; consumed?: boolean } = {},
) {
  let query = db.updateTable('sessions').set(changes).where('id', '=', id);
  if (expected.statuses) query = query.where('status', 'in', expected.statuses);
  if (expected.consumed !== undefined) query = query.where('consumed', '=', expected.consumed ? 1 : 0);
  const result = await query.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function incrementTxCodeFailures(db: TenantDb, id: string) {
  const row = await db
    .updateTable('sessions')
    .set((eb) => ({ tx_code_failed_attempts: eb('tx_code_failed_attempts', '+', 1) }))
    .where('id', '=', id)
    .returning('tx_code_failed_attempts')
    .executeTakeFirst();
  return row?.tx_code_failed_attempts ?? 0;
}

export async function insertHandle(db: Executor, row: { hash: string; purpose: string; session_id: string; expires_at: string }) {
  await db.insertInto('session_handles').values(row).execute();
}

export const findHandle = (db: Executor, hash: string, purpose: string, now: string) =>
  db
    .selectFrom('session_handles')
    .innerJoin('sessions', 'sessions.id', 'session_handles.session_id')
    .select(['sessions.id as session_id', 'sessions.tenant_id as tenant_id'])
    .where('session_handles.hash', '=', hash)
    .where('session_handles.purpose', '=', purpose)
    .where('session_handles.expires_at', '>', now)
    .executeTakeFirst();

export async function deleteHandles(db: Executor, sessionId: string, purpose: string) {
  await db.deleteFrom('session_handles').where('session_id', '=', sessionId).where('purpose', '=', purpose).execute();
}

export async function insertLog(db: Executor, row: { session_id: string; level: string; message: string; details: string | null; created_at: string }) {
  await db.insertInto('session_logs').values(row).execute();
}
