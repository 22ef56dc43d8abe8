// The queries of the credential endpoint: what a session was issued (for the notification endpoint
// and so that each configuration is issued once per offer) and the deferred transactions it opens.
import { randomUUID } from 'node:crypto';
import { tenantDb } from '../../platform/db/tenant-db.js';
import { type Executor, nowIso } from '../../platform/db/values.js';

/** Remembers one issuance of a configuration; returns its notification id. */
export async function recordIssued(db: Executor, tenantId: string, sessionId: string, configurationId: string, format: string) {
  const notificationId = randomUUID();
  await tenantDb(db, tenantId)
    .insertInto('issued_credentials', {
      id: randomUUID(),
      session_id: sessionId,
      credential_configuration_id: configurationId,
      format,
      notification_id: notificationId,
      notification_event: null,
      created_at: nowIso(),
    })
    .execute();
  return notificationId;
}

/** Configurations of the session already issued or deferred: each is issued once per offer. */
export async function handledConfigurations(db: Executor, tenantId: string, sessionId: string): Promise<Set<string>> {
  const scoped = tenantDb(db, tenantId);
  const rows = await scoped
    .selectFrom('issued_credentials')
    .select('credential_configuration_id')
    .where('session_id', '=', sessionId)
    .unionAll(scoped.selectFrom('deferred_transactions').select('credential_configuration_id').where('session_id', '=', sessionId))
    .execute();
  return new Set(rows.map((r) => r.credential_configuration_id));
}

/** Records the wallet's notification event on the credential it names; false when the id is not this session's. */
export async function setNotificationEvent(db: Executor, tenantId: string, sessionId: string, notificationId: string, event: string) {
  const updated = await tenantDb(db, tenantId)
    .updateTable('issued_credentials')
    .set({ notification_event: event })
    .where('notification_id', '=', notificationId)
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}
