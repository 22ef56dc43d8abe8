import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Dialect } from '../platform/db/connect.js';

/** Column types that mean the same thing on both engines. */
export interface ColumnTypes {
  timestamp: RawBuilder<unknown>;
  bool: RawBuilder<unknown>;
  /** An auto-incrementing integer key. */
  serial: RawBuilder<unknown>;
  /** The literal a bool column holds for true, for use in index predicates. */
  true: RawBuilder<unknown>;
  /** Bytes (bytea / blob). */
  binary: RawBuilder<unknown>;
  /** For what only one engine's syntax can say (triggers). */
  dialect: Dialect;
}

export function columnTypes(dialect: Dialect): ColumnTypes {
  return dialect === 'postgres'
    ? { timestamp: sql`timestamptz`, bool: sql`boolean`, serial: sql`bigserial`, true: sql`true`, binary: sql`bytea`, dialect }
    : { timestamp: sql`text`, bool: sql`integer`, serial: sql`integer`, true: sql`1`, binary: sql`blob`, dialect };
}

export interface VersionedMigration {
  up(db: Kysely<unknown>, t: ColumnTypes): Promise<void>;
}
