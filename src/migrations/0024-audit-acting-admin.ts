import type { Kysely } from 'kysely';
import type { VersionedMigration } from './types.js';

/**
 * The service administrator behind an entry written with an exchanged token (RFC 8693): the entry's
 * actor is then that administrator acting in the entry's tenant. Null for every other entry.
 */
export const auditActingAdmin: VersionedMigration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('audit_log').addColumn('acting_admin_id', 'text').execute();
  },
};
