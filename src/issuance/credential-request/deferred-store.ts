// The deferred_transactions table: a credential whose claims were not ready, found by the hash of
// its transaction id (the id itself is a bearer secret of the wallet). The credential endpoint opens
// a transaction here; the deferred credential endpoint (deferred/) redeems it.
import { tenantDb } from '../../platform/db/tenant-db.js';
import type { Executor } from '../../platform/db/values.js';
import { hashHandle } from '../../sessions/service.js';

export type DeferredStatus = 'pending' | 'ready' | 'retrieved' | 'expired' | 'failed';
/** How long the integrator has to complete a deferred transaction. */
const DEFERRED_LIFETIME_MS = 30 * 86_400_000;

export interface NewDeferredTransaction {
  id: string;
  sessionId: string;
  configurationId: string;
  message: string | null;
  /** The sealed holder keys. */
  request: string;
}

export async function insertTransaction(db: Executor, tenantId: string, transaction: NewDeferredTransaction, at: Date) {
  const now = at.toISOString();
  await tenantDb(db, tenantId)
    .insertInto('deferred_transactions', {
      hash: hashHandle(transaction.id),
      id: transaction.id,
      session_id: transaction.sessionId,
      credential_configuration_id: transaction.configurationId,
      status: 'pending',
      message: transaction.message,
      request: transaction.request,
      credentials: null,
      created_at: now,
      updated_at: now,
      expires_at: new Date(at.getTime() + DEFERRED_LIFETIME_MS).toISOString(),
    })
    .execute();
}

/** The transaction, with a pending one past its expiry reported as expired. */
export async function findTransaction(db: Executor, tenantId: string, transactionId: string, now: Date) {
  const row = await tenantDb(db, tenantId)
    .selectFrom('deferred_transactions')
    .selectAll()
    .where('hash', '=', hashHandle(transactionId))
    .executeTakeFirst();
  if (!row) return undefined;
  const expired = row.status === 'pending' && Date.parse(row.expires_at) <= now.getTime();
  return { ...row, status: (expired ? 'expired' : row.status) as DeferredStatus };
}

/**
 * Moves the transaction on from `from` (and, from pending, only before its expiry), in one statement:
 * of racing moves exactly one applies (true).
 */
export async function moveTransaction(
  db: Executor,
  tenantId: string,
  transactionId: string,
  from: DeferredStatus,
  to: DeferredStatus,
  at: Date,
  extra: { credentials?: string | null; message?: string } = {},
) {
  const now = at.toISOString();
  let query = tenantDb(db, tenantId)
    .updateTable('deferred_transactions')
    .set({ status: to, updated_at: now, ...extra })
    .where('hash', '=', hashHandle(transactionId))
    .where('status', '=', from);
  if (from === 'pending') query = query.where('expires_at', '>', now);
  const result = await query.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
