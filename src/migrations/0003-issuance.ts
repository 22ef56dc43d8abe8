import type { Kysely } from 'kysely';
import type { ColumnTypes, VersionedMigration } from './types.js';

/** Configuration rows keyed by (tenant_id, id), owned by the tenant. */
function tenantOwned(db: Kysely<unknown>, table: string, t: ColumnTypes) {
  return db.schema
    .createTable(table)
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint(`${table}_pk`, ['tenant_id', 'id']);
}

export const issuance: VersionedMigration = {
  async up(db: Kysely<unknown>, t: ColumnTypes) {
    await tenantOwned(db, 'credential_configs', t)
      .addColumn('document', 'text', (c) => c.notNull())
      .addColumn('key_chain_id', 'text')
      .addColumn('attribute_provider_id', 'text')
      .addColumn('webhook_endpoint_id', 'text')
      .execute();
    for (const column of ['key_chain_id', 'attribute_provider_id', 'webhook_endpoint_id']) {
      await db.schema.createIndex(`credential_configs_${column}_idx`).on('credential_configs').columns(['tenant_id', column]).execute();
    }

    for (const table of ['attribute_providers', 'webhook_endpoints']) {
      await tenantOwned(db, table, t)
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('auth', 'text', (c) => c.notNull())
        .execute();
    }

    await db.schema
      .createTable('issuer_settings')
      .addColumn('tenant_id', 'text', (c) => c.primaryKey().references('tenants.id').onDelete('cascade'))
      .addColumn('document', 'text', (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text')
      .addColumn('consumed', t.bool, (c) => c.notNull())
      .addColumn('consumed_at', t.timestamp)
      .addColumn('tx_code_failed_attempts', 'integer', (c) => c.notNull())
      .addColumn('error_reason', 'text')
      .addColumn('public_data', 'text', (c) => c.notNull())
      .addColumn('private_data', 'text')
      .addColumn('anonymized', t.bool, (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .addColumn('expires_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('sessions_tenant_created_idx').on('sessions').columns(['tenant_id', 'created_at']).execute();
    await db.schema.createIndex('sessions_tenant_status_idx').on('sessions').columns(['tenant_id', 'status']).execute();
    await db.schema.createIndex('sessions_expires_idx').on('sessions').column('expires_at').execute();

    // Secrets handed to wallets (pre-authorized codes, request handles), stored only as hashes.
    await db.schema
      .createTable('session_handles')
      .addColumn('hash', 'text', (c) => c.primaryKey())
      .addColumn('purpose', 'text', (c) => c.notNull())
      .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
      .addColumn('expires_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('session_handles_session_idx').on('session_handles').column('session_id').execute();

    await db.schema
      .createTable('session_logs')
      .addColumn('seq', t.serial, (c) => c.primaryKey())
      .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
      .addColumn('level', 'text', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull())
      .addColumn('details', 'text')
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('session_logs_session_idx').on('session_logs').columns(['session_id', 'seq']).execute();

    // One-time values (c_nonce): consumed by deleting the row, so a replay finds nothing.
    await db.schema
      .createTable('nonces')
      .addColumn('hash', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('purpose', 'text', (c) => c.notNull())
      .addColumn('expires_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('nonces_expires_idx').on('nonces').column('expires_at').execute();

    await db.schema
      .createTable('deferred_transactions')
      .addColumn('hash', 'text', (c) => c.primaryKey())
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
      .addColumn('credential_configuration_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('message', 'text')
      .addColumn('request', 'text', (c) => c.notNull())
      .addColumn('credentials', 'text')
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .addColumn('expires_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('deferred_tenant_idx').on('deferred_transactions').columns(['tenant_id', 'id']).execute();

    await db.schema
      .createTable('issued_credentials')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
      .addColumn('credential_configuration_id', 'text', (c) => c.notNull())
      .addColumn('format', 'text', (c) => c.notNull())
      .addColumn('notification_id', 'text', (c) => c.notNull())
      .addColumn('notification_event', 'text')
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('issued_credentials_session_idx').on('issued_credentials').column('session_id').execute();
    await db.schema
      .createIndex('issued_credentials_notification_idx')
      .on('issued_credentials')
      .columns(['tenant_id', 'notification_id'])
      .execute();
  },
};
