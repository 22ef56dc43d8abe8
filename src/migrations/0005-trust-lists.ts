import type { Kysely } from 'kysely';
import type { ColumnTypes, VersionedMigration } from './types.js';

export const trustLists: VersionedMigration = {
  async up(db: Kysely<unknown>, t: ColumnTypes) {
    await db.schema
      .createTable('trust_lists')
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      // The signing key chain; a key chain in use cannot be deleted (usage check), so no foreign key here.
      .addColumn('key_chain_id', 'text', (c) => c.notNull())
      // JSON: the caller's extra ListAndSchemeInformation fields, and the entity input as given.
      .addColumn('scheme_data', 'text')
      .addColumn('entity_config', 'text', (c) => c.notNull())
      // JSON array of the key chains the entities refer to, for usage checks and rotation.
      .addColumn('entity_key_chains', 'text', (c) => c.notNull())
      // JSON: the generated list of trusted entities as signed, and its JWS.
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('jwt', 'text', (c) => c.notNull())
      .addColumn('sequence_number', 'integer', (c) => c.notNull())
      .addColumn('issued_at', t.timestamp, (c) => c.notNull())
      .addColumn('next_update', t.timestamp, (c) => c.notNull())
      // When the scheduled job re-signs the list: a margin before next_update, or at once after a failure.
      .addColumn('resign_at', t.timestamp, (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('trust_lists_pk', ['tenant_id', 'id'])
      .execute();
    await db.schema.createIndex('trust_lists_resign_idx').on('trust_lists').column('resign_at').execute();

    // One row per content version (sequence number), the current one included; immutable once written.
    await db.schema
      .createTable('trust_list_versions')
      .addColumn('tenant_id', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('trust_list_id', 'text', (c) => c.notNull())
      .addColumn('sequence_number', 'integer', (c) => c.notNull())
      .addColumn('key_chain_id', 'text', (c) => c.notNull())
      .addColumn('entity_config', 'text', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('jwt', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('trust_list_versions_pk', ['tenant_id', 'id'])
      .addUniqueConstraint('trust_list_versions_sequence_uq', ['tenant_id', 'trust_list_id', 'sequence_number'])
      .addForeignKeyConstraint('trust_list_versions_list_fk', ['tenant_id', 'trust_list_id'], 'trust_lists', ['tenant_id', 'id'], (c) =>
        c.onDelete('cascade'),
      )
      .execute();
  },
};
