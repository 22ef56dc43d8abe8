import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  CompiledQuery,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  Kysely,
  type LogEvent,
  type Logger,
  PostgresAdapter,
  PostgresDialect,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';
import type pg from 'pg';
import type { Config } from '../../config.js';
import { openNodeSqlite } from './node-sqlite.js';
import { type PreparedStatementSettings, prepareStatements } from './prepared-statements.js';
import { inRequest } from './request-attribution.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';
export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /**
   * The settings of the one dedicated connection that LISTENs for events (EVENTS_DATABASE_URL, else
   * the pool's): LISTEN holds a server session, which a transaction-mode pooler does not keep.
   */
  postgres?: pg.ClientConfig;
  /**
   * Gives the pages of deleted rows back to the file system after a large delete. SQLite: in a
   * database created with auto_vacuum=incremental (every one this service creates), the free pages
   * are released and the write-ahead log is truncated. PostgreSQL: nothing to do; autovacuum makes
   * the space reusable, and only VACUUM FULL would shrink the files.
   */
  reclaimSpace(): Promise<void>;
  /** PostgreSQL: the pool's connections now, for metrics. */
  poolStats?: () => { total: number; idle: number; waiting: number };
  /**
   * Statements sent to the database since start, BEGIN and COMMIT included: on PostgreSQL each is a
   * round trip to the server (and its share of the server's CPU), so this is what a flow costs the database.
   */
  roundTrips(): number;
  /** The part of roundTrips sent while answering HTTP requests (the metrics scrape's excepted): see request-attribution.ts. */
  requestRoundTrips(): number;
  close(): Promise<void>;
}

const OWNER_ONLY = 0o600;
const TIMESTAMPTZ_OID = 1184;
const INT8_OID = 20;

export function postgresSettings(config: Config): pg.PoolConfig {
  const ssl = tls(config);
  if (config.DATABASE_URL) return { connectionString: config.DATABASE_URL, ssl };
  return {
    host: config.DB_HOST,
    port: config.DB_PORT,
    user: config.DB_USERNAME,
    password: config.DB_PASSWORD,
    database: config.DB_DATABASE,
    ssl,
  };
}

/** The listening connection's settings: EVENTS_DATABASE_URL, else the same as the pool's. */
export function eventsSettings(config: Config): pg.ClientConfig {
  if (!config.EVENTS_DATABASE_URL) return postgresSettings(config);
  return { connectionString: config.EVENTS_DATABASE_URL, ssl: tls(config) };
}

const tls = (config: Config) => (config.DB_SSL ? { rejectUnauthorized: true } : undefined);

/** Told of every finished query (for traces); absent, Kysely logs nothing and costs nothing. */
export type QueryListener = (statement: string, durationMs: number, failed: boolean) => void;

export async function connect(config: Config, onQuery?: QueryListener): Promise<Db> {
  const log = onQuery && ((event: LogEvent) => onQuery(event.query.sql, event.queryDurationMillis, event.level === 'error'));
  // The PostgreSQL driver is loaded only when it is used.
  if (config.DB_TYPE === 'postgres') {
    const prepared = config.DB_PREPARED_STATEMENTS ? { cacheSize: config.DB_STATEMENT_CACHE_SIZE } : undefined;
    return connectPostgres((await import('pg')).default, postgresSettings(config), eventsSettings(config), prepared, log);
  }
  return connectSqlite(join(config.DATA_DIR, 'svc.db'), log);
}

function connectSqlite(file: string, log?: Logger): Db {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  ownerOnly(file, { create: true });
  const database = openNodeSqlite(file);
  const pragma = (setting: string) => database.exec(`PRAGMA ${setting}`);
  // Only takes effect before the first table is created: in a database made before this line, it
  // stays off (VACUUM with the service stopped would switch it on).
  pragma('auto_vacuum = INCREMENTAL');
  pragma('journal_mode = WAL');
  // SQLite creates the -wal and -shm files with the database file's mode; those left by a start
  // before this rule are tightened here.
  for (const suffix of ['-wal', '-shm']) ownerOnly(`${file}${suffix}`, { create: false });
  pragma('synchronous = NORMAL');
  pragma('foreign_keys = ON');
  pragma('busy_timeout = 5000');
  const kysely = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database }), ...(log && { log }) });
  const reclaimSpace = async () => {
    pragma('incremental_vacuum');
    pragma('wal_checkpoint(TRUNCATE)');
  };
  return {
    kysely,
    dialect: 'sqlite',
    reclaimSpace,
    roundTrips: database.statementsRun,
    requestRoundTrips: database.statementsRunInRequests,
    close: () => kysely.destroy(),
  };
}

/**
 * The database holds sealed keys, hashed secrets and personal data: like the generated secret files,
 * it is readable by its owner only (0600), whatever the umask. A file that is there is tightened, never loosened.
 */
function ownerOnly(file: string, { create }: { create: boolean }) {
  if (create) closeSync(openSync(file, 'a', OWNER_ONLY));
  else if (!existsSync(file)) return;
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, OWNER_ONLY);
}

function connectPostgres(
  driver: typeof pg,
  settings: pg.PoolConfig,
  events: pg.ClientConfig,
  prepared: PreparedStatementSettings | undefined,
  log?: Logger,
): Db {
  // Same values on both engines: timestamps as ISO strings, counts as numbers.
  const types = {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === TIMESTAMPTZ_OID) return (v: string) => new Date(v).toISOString();
      if (oid === INT8_OID) return (v: string) => Number(v);
      return driver.types.getTypeParser(oid, format);
    },
  } as pg.CustomTypesConfig;
  const pool = new driver.Pool({ ...settings, types, max: 10 });
  // An idle connection the server closes (a restart, a failover, an administrator) is dropped from
  // the pool and replaced on next use; without a listener its 'error' event would end the process.
  pool.on('error', () => {});
  const { roundTrips, requestRoundTrips } = countQueries(pool);
  // After the count: the DEALLOCATEs the statement cache sends are round trips too.
  if (prepared) prepareStatements(pool, prepared);
  const kysely = new Kysely<Database>({ dialect: new PooledPostgresDialect({ pool }), ...(log && { log }) });
  const poolStats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
  return {
    kysely,
    dialect: 'postgres',
    postgres: events,
    poolStats,
    roundTrips,
    requestRoundTrips,
    reclaimSpace: async () => {},
    close: () => kysely.destroy(),
  };
}

/**
 * Counts every query a pooled connection sends, the BEGIN, COMMIT and ROLLBACK that Kysely's driver
 * issues itself included (they never pass its log), by wrapping `query` on each new connection.
 */
function countQueries(pool: pg.Pool): { roundTrips: () => number; requestRoundTrips: () => number } {
  let sent = 0;
  let sentInRequests = 0;
  pool.on('connect', (client) => {
    const query = client.query;
    client.query = function countedQuery(this: pg.PoolClient, ...args: unknown[]) {
      sent++;
      if (inRequest()) sentInRequests++;
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof client.query;
  });
  return { roundTrips: () => sent, requestRoundTrips: () => sentInRequests };
}

/**
 * PostgreSQL as Kysely speaks it, but for the migrator's lock. Kysely's is a session-level advisory
 * lock taken and released by two statements outside any transaction: behind a transaction-mode
 * pooler (PgBouncer) they reach different server sessions, the release fails and the lock stays
 * held by a session nobody owns, so the next migration waits for it for an hour. migrate.ts takes a
 * transaction-level lock instead, which any pooler keeps on one server session until its commit.
 */
/**
 * SQLite transactions that take the write lock when they begin (BEGIN IMMEDIATE). A deferred
 * transaction that reads and then writes fails at once with "database is locked" when another
 * connection wrote in between (SQLite cannot wait there: its snapshot is stale); an immediate one
 * waits for the lock (busy_timeout) instead. Within one process the connection is shared and
 * transactions run one at a time anyway; this matters when a second process opens the same file
 * (a second instance during a restart, a configuration import, a backup tool).
 */
class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly settings: SqliteDialectConfig) {
    super(settings);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class PooledPostgresDialect extends PostgresDialect {
  override createAdapter(): DialectAdapter {
    return new MigrationLockedByCaller();
  }
}

class MigrationLockedByCaller extends PostgresAdapter {
  override async acquireMigrationLock(): Promise<void> {}
  override async releaseMigrationLock(): Promise<void> {}
}
