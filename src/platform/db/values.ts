import { type InsertQueryBuilder, type InsertResult, type Kysely, PostgresAdapter, type SelectQueryBuilder, sql } from 'kysely';
import type { Database } from './schema.js';

/** The database or an open transaction: stores take either, so services decide what is atomic. */
export type Executor = Kysely<Database>;

export const nowIso = () => new Date().toISOString();
export const fromBool = (value: number | boolean): boolean => value === true || value === 1;
export const toBool = (value: boolean): 0 | 1 => (value ? 1 : 0);
export const parseJson = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

/** True for a unique or primary key violation on either engine. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** Runs `work` in a transaction, or inside the caller's one when `db` already is a transaction. */
export function inTransaction<T>(db: Executor, work: (trx: Executor) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

/**
 * Whether the engine takes row locks (SELECT ... FOR UPDATE): PostgreSQL. SQLite has no such clause and
 * needs none: it runs one writer at a time, and this service gives it one connection, so a transaction
 * there already excludes every other.
 */
export const takesRowLocks = (db: Executor) => db.getExecutor().adapter instanceof PostgresAdapter;

/** Whether `db` is PostgreSQL, for a statement only it can run (a data-modifying CTE, say). */
export const isPostgres = (db: Executor) => db.getExecutor().adapter instanceof PostgresAdapter;

/** An INSERT ... ON CONFLICT DO NOTHING (a once-only value remembered): added its row, or found it there. */
export type OnceInsert = InsertQueryBuilder<Database, keyof Database, InsertResult>;

/**
 * Runs `insert` and reads `read`'s first row, in one round trip on PostgreSQL (a data-modifying CTE
 * beside the query; the read sees the database as it was before the insert, which the two never
 * share a table for); SQLite runs them one after the other. `inserted` is false when the insert's
 * row was there already, so a once-only rule is still decided by the one INSERT.
 */
export async function insertAndRead<R>(
  db: Executor,
  insert: OnceInsert,
  read: SelectQueryBuilder<Database, keyof Database, R>,
): Promise<{ inserted: boolean; row: R | undefined }> {
  if (!isPostgres(db)) {
    const result = await insert.executeTakeFirst();
    return { inserted: result.numInsertedOrUpdatedRows === 1n, row: await read.executeTakeFirst() };
  }
  const { rows } = await sql<R & { inserted_rows: number; found_row: number | null }>`
    with inserted as (${insert.returning(sql<number>`1`.as('one'))})
    select found.*, (select count(*) from inserted) as inserted_rows
    from (select 1) as one left join (select r.*, 1 as found_row from (${read.limit(1)}) as r) as found on true`.execute(db);
  const { inserted_rows: insertedRows, found_row: found, ...row } = rows[0] as R & { inserted_rows: number; found_row: number | null };
  return { inserted: Number(insertedRows) === 1, row: found === null ? undefined : (row as R) };
}

/**
 * insertAndRead with several once-only values (a DPoP proof's jti and a client attestation proof's,
 * say): on PostgreSQL all inserts and the read in one statement (sibling CTEs); `inserted[i]` is
 * false when the row of `inserts[i]` was there already. SQLite runs them one after the other.
 */
export async function insertEachAndRead<R>(
  db: Executor,
  inserts: OnceInsert[],
  read: SelectQueryBuilder<Database, keyof Database, R>,
): Promise<{ inserted: boolean[]; row: R | undefined }> {
  if (!isPostgres(db)) {
    const inserted: boolean[] = [];
    for (const insert of inserts) inserted.push((await insert.executeTakeFirst()).numInsertedOrUpdatedRows === 1n);
    return { inserted, row: await read.executeTakeFirst() };
  }
  const name = (i: number) => sql.raw(`inserted${i}`);
  const ctes = inserts.map((insert, i) => sql`${name(i)} as (${insert.returning(sql<number>`1`.as('one'))}), `);
  const counts = inserts.map((_, i) => sql`(select count(*) from ${name(i)}) as ${name(i)}, `);
  const { rows } = await sql<R & { found_row: number | null }>`
    with ${sql.join(ctes, sql``)}found as (select r.*, 1 as found_row from (${read.limit(1)}) as r)
    select ${sql.join(counts, sql``)}found.*
    from (select 1) as one left join found on true`.execute(db);
  const row = { ...(rows[0] as Record<string, unknown>) };
  const inserted = inserts.map((_, i) => Number(row[`inserted${i}`]) === 1);
  for (let i = 0; i < inserts.length; i++) delete row[`inserted${i}`];
  const { found_row: found, ...rest } = row as { found_row: number | null };
  return { inserted, row: found === null ? undefined : (rest as R) };
}
