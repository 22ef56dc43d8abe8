import type { Kysely } from 'kysely';
import type { ColumnTypes, VersionedMigration } from './types.js';

export const statusLists: VersionedMigration = {
  async up(db: Kysely<unknown>, t: ColumnTypes) {
    // The bitset is one binary column per list (blob / bytea), changed in place; never a JSON array.
    const binary = t.binary;
    await db.schema
      .createTable('status_lists')
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('credential_configuration_id', 'text')
      .addColumn('key_chain_id', 'text')
      .addColumn('bits', 'integer', (c) => c.notNull())
      .addColumn('capacity', 'integer', (c) => c.notNull())
      .addColumn('ttl', 'integer', (c) => c.notNull())
      .addColumn('immediate_update', t.bool, (c) => c.notNull())
      .addColumn('enable_aggregation', t.bool, (c) => c.notNull())
      // Slots handed out so far; slot n maps to index permute(n) under the list's secret permutation key.
      .addColumn('used_entries', 'integer', (c) => c.notNull())
      .addColumn('permutation_key', 'text', (c) => c.notNull())
      .addColumn('bitset', binary, (c) => c.notNull())
      // Incremented by every change of the bitset.
      .addColumn('version', 'integer', (c) => c.notNull())
      // The signed token as served; token_seq is incremented by every (re)signing.
      .addColumn('token_jwt', 'text')
      .addColumn('token_cwt', binary)
      .addColumn('token_version', 'integer')
      .addColumn('token_seq', 'integer', (c) => c.notNull())
      .addColumn('token_issued_at', t.timestamp)
      .addColumn('token_expires_at', t.timestamp)
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('status_lists_pk', ['tenant_id', 'id'])
      .execute();
    await db.schema
      .createIndex('status_lists_configuration_idx')
      .on('status_lists')
      .columns(['tenant_id', 'credential_configuration_id'])
      .execute();
    await db.schema.createIndex('status_lists_key_chain_idx').on('status_lists').columns(['tenant_id', 'key_chain_id']).execute();

    // One row per allocated index: the primary key makes an index impossible to hand out twice.
    await db.schema
      .createTable('status_entries')
      .addColumn('tenant_id', 'text', (c) => c.notNull())
      .addColumn('list_id', 'text', (c) => c.notNull())
      .addColumn('idx', 'integer', (c) => c.notNull())
      .addColumn('session_id', 'text')
      .addColumn('credential_configuration_id', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('status_entries_pk', ['tenant_id', 'list_id', 'idx'])
      .addForeignKeyConstraint('status_entries_list_fk', ['tenant_id', 'list_id'], 'status_lists', ['tenant_id', 'id'], (c) =>
        c.onDelete('cascade'),
      )
      .execute();
    await db.schema.createIndex('status_entries_session_idx').on('status_entries').columns(['tenant_id', 'session_id']).execute();
  },
};
