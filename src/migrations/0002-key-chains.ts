import { type Kysely, sql } from 'kysely';
import type { ColumnTypes, VersionedMigration } from './types.js';

export const keyChains: VersionedMigration = {
  async up(db: Kysely<unknown>, t: ColumnTypes) {
    await db.schema
      .createTable('job_leases')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('lease_until', t.timestamp, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('key_chains')
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('description', 'text')
      .addColumn('usage_type', 'text', (c) => c.notNull())
      .addColumn('usage', 'text', (c) => c.notNull())
      .addColumn('kms_provider', 'text', (c) => c.notNull())
      .addColumn('external_key_id', 'text')
      .addColumn('algorithm', 'text', (c) => c.notNull())
      .addColumn('chain_type', 'text', (c) => c.notNull())
      .addColumn('is_default', t.bool, (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('root_jwk', 'text')
      .addColumn('root_certificate', 'text')
      .addColumn('active_jwk', 'text', (c) => c.notNull())
      .addColumn('active_certificate', 'text', (c) => c.notNull())
      .addColumn('previous_jwk', 'text')
      .addColumn('previous_certificate', 'text')
      .addColumn('previous_key_expiry', t.timestamp)
      .addColumn('rotation_enabled', t.bool, (c) => c.notNull())
      .addColumn('rotation_interval_days', 'integer', (c) => c.notNull())
      .addColumn('cert_validity_days', 'integer', (c) => c.notNull())
      .addColumn('last_rotated_at', t.timestamp)
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('key_chains_pk', ['tenant_id', 'id'])
      .addCheckConstraint('key_chains_external_key_id', sql`kms_provider = 'db' or external_key_id is not null`)
      .execute();
    // At most one default key chain per usage type and tenant.
    await db.schema
      .createIndex('key_chains_default_uq')
      .on('key_chains')
      .columns(['tenant_id', 'usage_type'])
      .unique()
      .where(sql.ref('is_default'), '=', t.true)
      .execute();
    await db.schema.createIndex('key_chains_rotation_idx').on('key_chains').columns(['rotation_enabled', 'last_rotated_at']).execute();
  },
};
