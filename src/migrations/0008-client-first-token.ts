import type { Kysely } from 'kysely';
import type { VersionedMigration } from './types.js';

/**
 * When a client first obtained an access token. The first-run announcement of a generated bootstrap
 * client is repeated at every start until then, so a first start that failed after writing the
 * secrets does not lose the only print of them.
 */
export const clientFirstToken: VersionedMigration = {
  async up(db: Kysely<unknown>, t) {
    await db.schema.alterTable('clients').addColumn('first_token_at', t.timestamp).execute();
  },
};
