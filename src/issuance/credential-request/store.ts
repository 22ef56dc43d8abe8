// The queries of the credential endpoint: which configurations of an offer were taken (each once per
// offer) and what a session was issued (for the notification endpoint).
import { randomUUID } from 'node:crypto';
import { type OperationNodeSource, sql } from 'kysely';
import { tenantDb } from '../../platform/db/tenant-db.js';
import { type Executor, isPostgres } from '../../platform/db/values.js';

/**
 * The statement that remembers one issuance of a configuration (with RETURNING, to send along with
 * the session's update), and the notification id it gives the credential.
 */
export function issuedRecord(db: Executor, tenantId: string, sessionId: string, configurationId: string, format: string, now: Date) {
  const notificationId = randomUUID();
  const query = tenantDb(db, tenantId)
    .insertInto('issued_credentials', {
      id: randomUUID(),
      session_id: sessionId,
      credential_configuration_id: configurationId,
      format,
      notification_id: notificationId,
      notification_event: null,
      created_at: now.toISOString(),
    })
    .returning('id');
  return { notificationId, query };
}

/** A configuration of an offer in one round of its grant (0: the code's, n: the n-th refresh's). */
export interface TakenConfiguration {
  sessionId: string;
  configurationId: string;
  round: number;
}

/**
 * Takes a configuration of the offer for one credential request: `taken` true for exactly one of any
 * number of racing requests of the same round (the primary key decides, in one statement), false once
 * taken. With `spend` (the DELETE ... RETURNING that consumes the request's c_nonce), the nonce is
 * spent in the same statement on PostgreSQL (before it on SQLite), and the configuration taken only
 * if it was: `spent` false means neither happened.
 */
export async function takeConfiguration(
  db: Executor,
  tenantId: string,
  taken: TakenConfiguration,
  now: Date,
  spend?: OperationNodeSource & { execute(): Promise<unknown[]> },
): Promise<{ spent: boolean; taken: boolean }> {
  const row = {
    session_id: taken.sessionId,
    credential_configuration_id: taken.configurationId,
    round: taken.round,
    created_at: now.toISOString(),
    tenant_id: tenantId,
  };
  if (spend && isPostgres(db)) {
    // INSERT ... SELECT takes the parameters' types from the columns they go to.
    const { rows } = await sql<{ spent: number; taken: number }>`
      with spent as (${spend}), taken as (
        insert into configurations_taken (session_id, credential_configuration_id, round, created_at, tenant_id)
        select ${row.session_id}, ${row.credential_configuration_id}, ${row.round}, ${row.created_at}, ${row.tenant_id}
        where exists (select 1 from spent)
        on conflict (session_id, credential_configuration_id, round) do nothing
        returning 1)
      select (select count(*) from spent) as spent, (select count(*) from taken) as taken`.execute(db);
    return { spent: Number(rows[0]?.spent) > 0, taken: Number(rows[0]?.taken) > 0 };
  }
  if (spend && (await spend.execute()).length === 0) return { spent: false, taken: false };
  const result = await db
    .insertInto('configurations_taken')
    .values(row)
    .onConflict((conflict) => conflict.columns(['session_id', 'credential_configuration_id', 'round']).doNothing())
    .executeTakeFirst();
  return { spent: true, taken: result.numInsertedOrUpdatedRows === 1n };
}

/** Gives a configuration back when its request failed before anything was made for it, so the wallet may ask again. */
export async function releaseConfiguration(db: Executor, tenantId: string, taken: TakenConfiguration) {
  await tenantDb(db, tenantId)
    .deleteFrom('configurations_taken')
    .where('session_id', '=', taken.sessionId)
    .where('credential_configuration_id', '=', taken.configurationId)
    .where('round', '=', taken.round)
    .execute();
}

/** Configurations of the session taken so far, in any round (issued, deferred, or being made). */
export async function takenConfigurations(db: Executor, tenantId: string, sessionId: string): Promise<Set<string>> {
  const rows = await tenantDb(db, tenantId)
    .selectFrom('configurations_taken')
    .select('credential_configuration_id')
    .where('session_id', '=', sessionId)
    .execute();
  return new Set(rows.map((r) => r.credential_configuration_id));
}

/**
 * The statement that records the wallet's notification event on the credential it names (with
 * RETURNING: it touches no row when the id is not this session's). Idempotent, as a write guarding
 * a session update must be.
 */
export const notificationEventUpdate = (db: Executor, tenantId: string, sessionId: string, notificationId: string, event: string) =>
  tenantDb(db, tenantId)
    .updateTable('issued_credentials')
    .set({ notification_event: event })
    .where('notification_id', '=', notificationId)
    .where('session_id', '=', sessionId)
    .returning('id');
