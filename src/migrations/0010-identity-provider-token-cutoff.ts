import type { Kysely } from 'kysely';
import type { VersionedMigration } from './types.js';

/**
 * External mode: tokens come from the identity provider and carry no generation of their client, so
 * the record keeps the moment from which the provider's tokens are its client's (the client made,
 * or its secret replaced); tokens issued before it belong to a client that is gone.
 */
export const identityProviderTokenCutoff: VersionedMigration = {
  async up(db: Kysely<unknown>, t) {
    await db.schema.alterTable('clients').addColumn('tokens_valid_from', t.timestamp).execute();
  },
};
