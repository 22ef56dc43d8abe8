import { type Kysely, PostgresAdapter } from 'kysely';
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
