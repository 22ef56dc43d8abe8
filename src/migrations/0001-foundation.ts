import type { Kysely } from 'kysely';
import type { ColumnTypes, VersionedMigration } from './types.js';

export const foundation: VersionedMigration = {
  async up(db: Kysely<unknown>, t: ColumnTypes) {
    await db.schema
      .createTable('tenants')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('session_config', 'text')
      .addColumn('status_list_config', 'text')
      .addColumn('admin_client_id', 'text')
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('clients')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.references('tenants.id').onDelete('cascade'))
      .addColumn('secret_hash', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('roles', 'text', (c) => c.notNull())
      .addColumn('allowed_presentation_configs', 'text')
      .addColumn('allowed_issuance_configs', 'text')
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('clients_tenant_idx').on('clients').column('tenant_id').execute();

    await db.schema
      .createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('username', 'text', (c) => c.notNull())
      .addColumn('email', 'text')
      .addColumn('enabled', t.bool, (c) => c.notNull())
      .addColumn('roles', 'text', (c) => c.notNull())
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .addUniqueConstraint('users_tenant_username_uq', ['tenant_id', 'username'])
      .execute();

    await db.schema
      .createTable('audit_log')
      .addColumn('seq', t.serial, (c) => c.primaryKey())
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('tenant_id', 'text', (c) => c.references('tenants.id').onDelete('cascade'))
      .addColumn('action_type', 'text', (c) => c.notNull())
      .addColumn('actor_type', 'text', (c) => c.notNull())
      .addColumn('actor_id', 'text', (c) => c.notNull())
      .addColumn('actor_display', 'text')
      .addColumn('changed_fields', 'text', (c) => c.notNull())
      .addColumn('before', 'text')
      .addColumn('after', 'text')
      .addColumn('request_id', 'text')
      .addColumn('timestamp', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('audit_log_tenant_seq_idx').on('audit_log').columns(['tenant_id', 'seq']).execute();

    await db.schema
      .createTable('auth_failures')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('window_start', t.timestamp, (c) => c.notNull())
      .addColumn('count', 'integer', (c) => c.notNull())
      .execute();
  },
};
