// Node's own SQLite (node:sqlite) in the shape Kysely's SqliteDialect drives (better-sqlite3's: a
// statement says whether it returns rows, and takes its parameters as one array). Built into Node, it
// needs no native addon: nothing to compile at install, no binary to match a Node version, and no
// addon finalizer running when V8 collects a statement.
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { inRequest } from './request-attribution.js';

/**
 * The names the service tests SQLite errors by (better-sqlite3's `code`), by SQLite's extended result
 * code, which node:sqlite gives as `errcode` (its own `code` is ERR_SQLITE_ERROR for every one).
 */
const CODE_NAMES: Record<number, string> = {
  5: 'SQLITE_BUSY',
  14: 'SQLITE_CANTOPEN',
  19: 'SQLITE_CONSTRAINT',
  787: 'SQLITE_CONSTRAINT_FOREIGNKEY',
  1299: 'SQLITE_CONSTRAINT_NOTNULL',
  1555: 'SQLITE_CONSTRAINT_PRIMARYKEY',
  2067: 'SQLITE_CONSTRAINT_UNIQUE',
};
/** Distinct SQL texts kept prepared; past this the service is not repeating its statements, and all are dropped. */
const STATEMENT_CACHE_SIZE = 2_000;

export interface NodeSqlite extends SqliteDatabase {
  /** Runs SQL that returns nothing (pragmas, maintenance). */
  exec(sql: string): void;
  /** Statements run so far (the same count as PostgreSQL's round trips, for the benchmarks). */
  statementsRun(): number;
  /** The part of statementsRun run while answering HTTP requests (request-attribution.ts). */
  statementsRunInRequests(): number;
}

export function openNodeSqlite(file: string): NodeSqlite {
  const database = named(() => new DatabaseSync(file));
  const statements = new Map<string, SqliteStatement>();
  const counter = { run: 0, inRequests: 0 };
  // Kysely prepares every query anew, and preparing costs more than running a simple indexed query;
  // the statements of a service are few and repeat, so each SQL text is prepared once. (node:sqlite
  // runs a statement to completion synchronously, so sharing one is safe.)
  const prepare = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = kyselyStatement(
        named(() => database.prepare(sql)),
        counter,
      );
      if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear();
      statements.set(sql, statement);
    }
    return statement;
  };
  return {
    prepare,
    exec: (sql) => named(() => database.exec(sql)),
    statementsRun: () => counter.run,
    statementsRunInRequests: () => counter.inRequests,
    close: () => database.close(),
  };
}

function kyselyStatement(statement: StatementSync, counter: { run: number; inRequests: number }): SqliteStatement {
  // Kysely's parameters are values SQLite binds (strings, numbers, bigints, buffers, null), by position.
  // Each run is counted here, where a parameter list is handed over.
  const args = (parameters: ReadonlyArray<unknown>) => {
    counter.run++;
    if (inRequest()) counter.inRequests++;
    return parameters as SQLInputValue[];
  };
  return {
    // A statement returns rows when it has result columns: a SELECT, or any statement with RETURNING.
    reader: statement.columns().length > 0,
    all: (parameters) => named(() => statement.all(...args(parameters)).map((row) => withBuffers(row as Record<string, unknown>))),
    run: (parameters) => named(() => statement.run(...args(parameters))),
    *iterate(parameters) {
      for (const row of statement.iterate(...args(parameters))) yield withBuffers(row as Record<string, unknown>);
    },
  };
}

/**
 * node:sqlite reads a BLOB as a Uint8Array; the service, like the PostgreSQL driver, handles binary
 * columns as Buffers (a view of the same bytes, not a copy).
 */
function withBuffers(row: Record<string, unknown>): Record<string, unknown> {
  for (const key in row) {
    const value = row[key];
    if (value instanceof Uint8Array && !Buffer.isBuffer(value)) row[key] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  }
  return row;
}

/** Runs `work`, giving a SQLite error the name the service tests it by. */
function named<T>(work: () => T): T {
  try {
    return work();
  } catch (err) {
    const errcode = (err as { errcode?: unknown }).errcode;
    const name = typeof errcode === 'number' ? CODE_NAMES[errcode] : undefined;
    if (name) Object.assign(err as object, { code: name });
    throw err;
  }
}
