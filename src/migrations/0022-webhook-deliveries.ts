import { type Kysely, sql } from 'kysely';
import type { ColumnTypes, VersionedMigration } from './types.js';

/**
 * Webhooks that are never lost: every event is a row of `webhook_deliveries` (the outbox), written by
 * a trigger on `sessions` in the very statement that changes the session, so no write path (a
 * compare-and-set update, a handle's CTE, the expiry job) can change a session without its event,
 * nor make an event for a change that rolled back. Only sessions whose `webhook_target` was set when
 * they were made (the endpoint their events go to) fire it; the others cost one null test.
 *
 * Events:
 * - `issuance.status`: every status change of an issuance session (status and previous status kept
 *   in the row, as the session moves on).
 * - `presentation.completed`: a presentation session completing, unless its result waits for the
 *   response code of a redirect (`responseCodeRequired`); then when that code releases it
 *   (`resultReleasedAt` set): before that, the webhook would hand the result out without the code.
 *
 * `webhook_secrets` holds the signing secrets (Standard Webhooks), sealed, per owner (a webhook
 * endpoint, a presentation configuration's inline webhook), with the previous one during its grace.
 */
export const webhookDeliveries: VersionedMigration = {
  async up(db: Kysely<unknown>, t: ColumnTypes) {
    await db.schema.alterTable('sessions').addColumn('webhook_target', 'text').execute();

    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('seq', t.serial, (c) => c.primaryKey())
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      // No foreign key: a delivery outlives its session (retention), and then fails saying so.
      .addColumn('session_id', 'text', (c) => c.notNull())
      .addColumn('session_kind', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('endpoint', 'text', (c) => c.notNull())
      .addColumn('status', 'text')
      .addColumn('previous_status', 'text')
      .addColumn('error_reason', 'text')
      .addColumn('occurred_at', t.timestamp, (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', t.timestamp, (c) => c.notNull())
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', t.timestamp)
      .addColumn('last_status', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('delivered_at', t.timestamp)
      .execute();
    await db.schema.createIndex('webhook_deliveries_due_idx').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
    await db.schema.createIndex('webhook_deliveries_session_idx').on('webhook_deliveries').columns(['session_id', 'seq']).execute();
    await db.schema.createIndex('webhook_deliveries_tenant_idx').on('webhook_deliveries').columns(['tenant_id', 'seq']).execute();

    await db.schema
      .createTable('webhook_secrets')
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('previous_secret', 'text')
      .addColumn('previous_until', t.timestamp)
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_secrets_pk', ['tenant_id', 'owner'])
      .execute();

    if (t.dialect === 'postgres') await postgresTrigger(db);
    else await sqliteTriggers(db);
  },
};

const COLUMNS = sql.raw(
  'id, tenant_id, session_id, session_kind, type, endpoint, status, previous_status, error_reason, occurred_at, created_at, state, next_attempt_at',
);

async function postgresTrigger(db: Kysely<unknown>) {
  await sql`create function sessions_webhook_event() returns trigger language plpgsql as $$
    declare
      event_type text;
    begin
      if new.kind = 'issuance' and new.status is distinct from old.status then
        event_type := 'issuance.status';
      elsif new.kind = 'presentation' and (
        (new.status = 'completed' and old.status <> 'completed'
          and coalesce((new.public_data::jsonb ->> 'responseCodeRequired')::boolean, false) = false)
        or (old.public_data::jsonb ->> 'resultReleasedAt' is null and new.public_data::jsonb ->> 'resultReleasedAt' is not null)
      ) then
        event_type := 'presentation.completed';
      else
        return null;
      end if;
      insert into webhook_deliveries (${COLUMNS})
      values ('msg_' || replace(gen_random_uuid()::text, '-', ''), new.tenant_id, new.id, new.kind, event_type, new.webhook_target,
        new.status, old.status, new.error_reason, new.updated_at, now(), 'pending', now());
      return null;
    end $$`.execute(db);
  await sql`create trigger sessions_webhook_event after update on sessions for each row
    when (new.webhook_target is not null and (new.status is distinct from old.status or new.public_data is distinct from old.public_data))
    execute function sessions_webhook_event()`.execute(db);
  await sql`update sessions set webhook_target = public_data::jsonb ->> 'webhookEndpointId'
    where kind = 'issuance' and status in ('active', 'fetched')`.execute(db);
}

async function sqliteTriggers(db: Kysely<unknown>) {
  const now = sql.raw(`strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`);
  const insert = (type: string) => sql`insert into webhook_deliveries (${COLUMNS})
    values ('msg_' || lower(hex(randomblob(16))), new.tenant_id, new.id, new.kind, ${sql.lit(type)}, new.webhook_target,
      new.status, old.status, new.error_reason, new.updated_at, ${now}, 'pending', ${now})`;
  await sql`create trigger sessions_webhook_issuance after update of status on sessions
    when new.webhook_target is not null and new.kind = 'issuance' and new.status <> old.status
    begin ${insert('issuance.status')}; end`.execute(db);
  await sql`create trigger sessions_webhook_presentation after update on sessions
    when new.webhook_target is not null and new.kind = 'presentation' and (
      (new.status = 'completed' and old.status <> 'completed' and coalesce(json_extract(new.public_data, '$.responseCodeRequired'), 0) = 0)
      or (json_extract(old.public_data, '$.resultReleasedAt') is null and json_extract(new.public_data, '$.resultReleasedAt') is not null))
    begin ${insert('presentation.completed')}; end`.execute(db);
  await sql`update sessions set webhook_target = json_extract(public_data, '$.webhookEndpointId')
    where kind = 'issuance' and status in ('active', 'fetched')`.execute(db);
}
