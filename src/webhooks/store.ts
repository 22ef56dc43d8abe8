// The webhook outbox (table webhook_deliveries, filled by the trigger of migration 0022).
import { type Selectable, sql } from 'kysely';
import type { WebhookDeliveriesTable } from '../platform/db/schema.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import { type Executor, isPostgres } from '../platform/db/values.js';

export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/**
 * Leases up to `limit` due deliveries to `owner` until `leaseUntil`, in one statement, so that two
 * instances never hold one delivery at once: PostgreSQL picks the rows FOR UPDATE SKIP LOCKED (a row
 * another instance is leasing is skipped, and one it leased meanwhile fails the lease test when
 * re-checked); SQLite runs one writer at a time. A lease that lapsed (its instance died) counts as
 * none. Of a session's deliveries only the oldest pending one is due, so a receiver hears of a
 * session's changes in the order they happened.
 */
export async function claimDue(db: Executor, owner: string, now: string, leaseUntil: string, limit: number): Promise<DeliveryRow[]> {
  // A read first: an idle poll writes nothing, so it never takes SQLite's write lock from another
  // instance on the same file (whose open transaction would then fail as "database is locked").
  const due = await db
    .selectFrom('webhook_deliveries')
    .select('seq')
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)]))
    .limit(1)
    .executeTakeFirst();
  if (!due) return [];
  const lock = isPostgres(db) ? sql`for update skip locked` : sql``;
  const free = sql`(lease_expires_at is null or lease_expires_at <= ${now})`;
  const { rows } = await sql<DeliveryRow>`
    update webhook_deliveries set lease_owner = ${owner}, lease_expires_at = ${leaseUntil}
    where seq in (
      select d.seq from webhook_deliveries d
      where d.state = 'pending' and d.next_attempt_at <= ${now} and (d.lease_expires_at is null or d.lease_expires_at <= ${now})
        and not exists (select 1 from webhook_deliveries e where e.session_id = d.session_id and e.seq < d.seq and e.state = 'pending')
      order by d.next_attempt_at, d.seq
      limit ${limit} ${lock})
      and state = 'pending' and ${free}
    returning *`.execute(db);
  return rows;
}

export interface AttemptOutcome {
  state: DeliveryState;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt?: string;
  deliveredAt?: string;
}

/** Records an attempt made under `owner`'s lease and lets the lease go; false when the lease was lost meanwhile. */
export async function recordAttempt(db: Executor, seq: number, owner: string, outcome: AttemptOutcome): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      state: outcome.state,
      attempts: eb('attempts', '+', 1),
      last_status: outcome.lastStatus,
      last_error: outcome.lastError,
      ...(outcome.nextAttemptAt && { next_attempt_at: outcome.nextAttemptAt }),
      ...(outcome.deliveredAt && { delivered_at: outcome.deliveredAt }),
      lease_owner: null,
      lease_expires_at: null,
    }))
    .where('seq', '=', seq)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Lets every lease of `owner` go (on a clean stop), so that another instance need not wait for them to lapse. */
export async function releaseLeases(db: Executor, owner: string) {
  await db.updateTable('webhook_deliveries').set({ lease_owner: null, lease_expires_at: null }).where('lease_owner', '=', owner).execute();
}

export interface DeliveryFilter {
  sessionId?: string;
  state?: DeliveryState;
  endpoint?: string;
  /** The session kinds the caller may see. */
  kinds: readonly string[];
}

export function listDeliveries(db: Executor, tenantId: string, filter: DeliveryFilter, offset: number, limit: number) {
  let query = tenantDb(db, tenantId).selectFrom('webhook_deliveries').selectAll().where('session_kind', 'in', filter.kinds);
  if (filter.sessionId) query = query.where('session_id', '=', filter.sessionId);
  if (filter.state) query = query.where('state', '=', filter.state);
  if (filter.endpoint) query = query.where('endpoint', '=', filter.endpoint);
  return query.orderBy('seq', 'desc').offset(offset).limit(limit).execute();
}

export async function countDeliveries(db: Executor, tenantId: string, filter: DeliveryFilter): Promise<number> {
  let query = tenantDb(db, tenantId).selectFrom('webhook_deliveries').where('session_kind', 'in', filter.kinds);
  if (filter.sessionId) query = query.where('session_id', '=', filter.sessionId);
  if (filter.state) query = query.where('state', '=', filter.state);
  if (filter.endpoint) query = query.where('endpoint', '=', filter.endpoint);
  const row = await query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * Sends a delivery of the tenant (of a kind the caller may see) again: pending, due now, with a new
 * horizon from now (its created_at moves, so a failed one gets its full series of retries again).
 * False for an unknown id, another tenant's, or one of a kind the caller may not see.
 */
export async function retryDelivery(db: Executor, tenantId: string, id: string, kinds: readonly string[], now: string): Promise<boolean> {
  const result = await tenantDb(db, tenantId)
    .updateTable('webhook_deliveries')
    .set({ state: 'pending', next_attempt_at: now, created_at: now, last_error: null })
    .where('id', '=', id)
    .where('session_kind', 'in', kinds)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Counts by state and the creation time of the oldest pending delivery, over all tenants (for the metrics). */
/** Deliveries by state and the oldest of each state's events, in one statement (a scrape reads both gauges from it). */
export async function outboxStats(db: Executor) {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => ['state', eb.fn.countAll<number>().as('count'), eb.fn.min('created_at').as('oldest')])
    .groupBy('state')
    .execute();
  return {
    counts: rows.map((row) => ({ state: row.state, count: Number(row.count) })),
    oldestPending: rows.find((row) => row.state === 'pending')?.oldest ?? null,
  };
}

/** Deletes at most `batch` delivered or failed deliveries whose event came before `cutoff`; answers how many it deleted. */
export async function purgeFinished(db: Executor, cutoff: string, batch: number): Promise<number> {
  const deleted = await db
    .deleteFrom('webhook_deliveries')
    .where('seq', 'in', (eb) =>
      eb
        .selectFrom('webhook_deliveries')
        .select('seq')
        .where('state', 'in', ['delivered', 'failed'])
        .where('created_at', '<', cutoff)
        .limit(batch),
    )
    .executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
