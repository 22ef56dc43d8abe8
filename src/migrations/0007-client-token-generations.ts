import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { VersionedMigration } from './types.js';

/**
 * Binds management tokens to one incarnation of their client: a token carries the client's
 * token_generation and dies when it changes (the client re-created under the same id, its secret
 * replaced). Existing clients get a generation of their own, so tokens issued before this version,
 * which carry none, end with the upgrade.
 */
export const clientTokenGenerations: VersionedMigration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('clients')
      .addColumn('token_generation', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    const { rows } = await sql<{ id: string }>`select id from clients`.execute(db);
    for (const { id } of rows) {
      await sql`update clients set token_generation = ${randomBytes(16).toString('base64url')} where id = ${id}`.execute(db);
    }
  },
};
