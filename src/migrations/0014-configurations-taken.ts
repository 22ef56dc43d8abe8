import { type Kysely, sql } from 'kysely';
import type { VersionedMigration } from './types.js';

/**
 * Each configuration of an offer is issued once per round: a credential request takes the configuration
 * by inserting its row here before anything is made, and the primary key lets exactly one of any number
 * of racing requests have it (the check of issued_credentials it replaces was a read before a write).
 * Round 0 is the grant of the code (or pre-authorized code); round n the n-th refresh of its tokens
 * (OpenID4VCI 1.0 section 14.5). Sessions under way keep what they were issued or deferred before
 * this version, as round 0.
 */
export const configurationsTaken: VersionedMigration = {
  async up(db: Kysely<unknown>, t) {
    await db.schema
      .createTable('configurations_taken')
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
      .addColumn('credential_configuration_id', 'text', (c) => c.notNull())
      .addColumn('round', 'integer', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('configurations_taken_pk', ['session_id', 'credential_configuration_id', 'round'])
      .execute();
    await sql`
      insert into configurations_taken (tenant_id, session_id, credential_configuration_id, round, created_at)
      select tenant_id, session_id, credential_configuration_id, 0, min(created_at) from (
        select tenant_id, session_id, credential_configuration_id, created_at from issued_credentials
        union all
        select tenant_id, session_id, credential_configuration_id, created_at from deferred_transactions
      ) handled
      group by tenant_id, session_id, credential_configuration_id
    `.execute(db);
  },
};
