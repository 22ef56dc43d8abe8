// The queries of the credential endpoint: which configurations of an offer were taken (each once per
// offer) and what a session was issued (for the notification endpoint).
import { randomUUID } from 'node:crypto';
import { tenantDb } from '../../platform/db/tenant-db.js';
import { type Executor, nowIso } from '../../platform/db/values.js';

/**
 * The statement that remembers one issuance of a configuration (with RETURNING, to send along with
 * the session's update), and the notification id it gives the credential.
 */
export function issuedRecord(db: Executor, tenantId: string, sessionId: string, configurationId: string, format: string) {
  const notificationId = randomUUID();
  const query = tenantDb(db, tenantId)
    .insertInto('issued_credentials', {
      id: randomUUID(),
      session_id: sessionId,
      credential_configuration_id: configurationId,
      format,
      notification_id: notificationId,
      notification_event: null,
      created_at: nowIso(),
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
 * Takes a configuration of the offer for one credential request: true for exactly one of any number
 * of racing requests of the same round (the primary key decides, in one statement), false once taken.
 */
export async function takeConfiguration(db: Executor, tenantId: string, taken: TakenConfiguration): Promise<boolean> {
  const result = await tenantDb(db, tenantId)
    .insertInto('configurations_taken', {
      session_id: taken.sessionId,
      credential_configuration_id: taken.configurationId,
      round: taken.round,
      created_at: nowIso(),
    })
    .onConflict((conflict) => conflict.columns(['session_id', 'credential_configuration_id', 'round']).doNothing())
    .executeTakeFirst();
  return result.numInsertedOrUpdatedRows === 1n;
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
