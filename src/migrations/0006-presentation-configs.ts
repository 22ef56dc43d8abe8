import type { Kysely } from 'kysely';
import type { ColumnTypes, VersionedMigration } from './types.js';

export const presentationConfigs: VersionedMigration = {
  async up(db: Kysely<unknown>, t: ColumnTypes) {
    await db.schema
      .createTable('presentation_configs')
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('id', 'text', (c) => c.notNull())
      // The settings as JSON; references live in their own indexed columns, secrets sealed apart.
      .addColumn('document', 'text', (c) => c.notNull())
      .addColumn('webhook_endpoint_id', 'text')
      .addColumn('access_key_chain_id', 'text')
      .addColumn('webhook', 'text')
      .addColumn('registration_cert_cache', 'text')
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('presentation_configs_pk', ['tenant_id', 'id'])
      .execute();
    for (const column of ['webhook_endpoint_id', 'access_key_chain_id']) {
      await db.schema.createIndex(`presentation_configs_${column}_idx`).on('presentation_configs').columns(['tenant_id', column]).execute();
    }
  },
};
