import type { Kysely } from 'kysely';
import type { VersionedMigration } from './types.js';

/**
 * Every write to a session moves its version on by one, so a change computed from the session as
 * read applies only while the row is still at the version read (a compare-and-set in one UPDATE):
 * the same guarantee as reading under a row lock, without the transaction and the extra round trips.
 */
export const sessionVersion: VersionedMigration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('sessions')
      .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
