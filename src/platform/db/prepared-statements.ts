/**
 * Named prepared statements on PostgreSQL. Sent unnamed, every statement is parsed, analysed and
 * planned again by the server on each run; prepared once per connection under a name, its parse
 * tree is kept and, after a few runs, so is its plan (PostgreSQL's generic plan). Each pooled
 * connection keeps a bounded cache from statement text to name (least recently used out first).
 *
 * Which statements: those sent with parameters, not DDL, transaction control, LISTEN/NOTIFY or
 * other session commands (`unpreparable`), and only from their second run on the connection. The
 * texts that vary without end in this service (a multi-row insert of a variable number of rows, an
 * IN list of variable length, a migration's statements) mostly run once: they stay unnamed, so they
 * neither fill the cache nor cost an eviction, and those that do recur (a batch of three rows
 * again) earn their place like any other. The bound protects against the rest.
 *
 * The bound holds on the server: a statement evicted from the cache is deallocated before a new one
 * is prepared in its place. Eviction takes a tenth of the cache at once (the least recently used),
 * deallocated in one round trip, so that a cache that churns pays one extra round trip per tenth of
 * its size of new statements, not one per statement. The connection never holds more prepared
 * statements than the bound.
 *
 * Behind a transaction-mode pooler that does not track prepared statements itself (PgBouncer before
 * 1.21, or 1.21 and later with max_prepared_statements = 0), consecutive statements of a connection
 * reach different server sessions: a prepared name is missing on the next one or already taken by
 * another client's. There DB_PREPARED_STATEMENTS=false sends every statement unnamed (docs/operations.md,
 * "Through a connection pooler").
 */
import type pg from 'pg';

/** How the cache is sized: statements held per connection. */
export interface PreparedStatementSettings {
  cacheSize: number;
}

/** SQLSTATE feature_not_supported, raised with this message when a prepared `select *` meets a changed table. */
const FEATURE_NOT_SUPPORTED = '0A000';
const RESULT_TYPE_CHANGED = /cached plan must not change result type/;

/** Statements that never get a name: schema changes, transaction control, session commands. */
const UNPREPARABLE =
  /^\s*(create|alter|drop|truncate|comment|grant|revoke|reindex|cluster|vacuum|analyze|begin|start|commit|end|rollback|abort|savepoint|release|set|reset|show|listen|unlisten|notify|lock|prepare|execute|deallocate|discard|do|copy|explain|checkpoint|load)\b/i;

export const unpreparable = (text: string): boolean => UNPREPARABLE.test(text);

type Query = (query: string | pg.QueryConfig, values?: unknown[]) => Promise<pg.QueryResult>;

/**
 * Gives every connection the pool opens its own statement cache, by wrapping its `query`. Only the
 * form Kysely uses, `query(text, values)` with a promise, is taken; any other form (a callback, a
 * query object, a cursor) passes through as it came.
 */
export function prepareStatements(pool: pg.Pool, settings: PreparedStatementSettings): void {
  pool.on('connect', (client) => {
    const send = client.query.bind(client) as unknown as (...args: unknown[]) => unknown;
    const statements = new ConnectionStatements(client, send as Query, settings.cacheSize);
    client.query = function preparedQuery(...args: unknown[]) {
      const [text, values] = args;
      if (args.length !== 2 || typeof text !== 'string' || !Array.isArray(values)) return send(...args);
      return statements.run(text, values);
    } as typeof client.query;
  });
}

/** What pg keeps per connection about the statements it has parsed (it skips the Parse of a known name). */
interface ParsedStatements {
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
}

/** The prepared statements of one connection: its cache, and what the server holds. */
class ConnectionStatements {
  /** Statement text to name, least recently used first (a Map keeps insertion order). */
  private readonly named = new Map<string, string>();
  /** Texts run once, unnamed: the second run names them. Bounded like the cache, oldest out first. */
  private readonly seenOnce = new Set<string>();
  /** Names evicted from the cache that the server still holds, until the next deallocation. */
  private evicted: string[] = [];
  /** Set when the server may hold statements the cache no longer knows: DEALLOCATE ALL before the next prepare. */
  private resetPending = false;
  private sequence = 0;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly send: Query,
    private readonly capacity: number,
  ) {}

  async run(text: string, values: unknown[]): Promise<pg.QueryResult> {
    // pg reports the status of the last ReadyForQuery, and rejects a failed statement before its
    // ReadyForQuery arrives: right after an error inside a transaction it still says 'T' where the
    // server is in 'E'. 'I' is never stale so (a statement failing outside a transaction leaves
    // 'I'), so the deallocations that must run outside a transaction wait for an 'I'.
    const status = this.client.getTransactionStatus();
    const inTransaction = status !== 'I';
    if (this.resetPending && !inTransaction) await this.deallocateAll();
    const unnamed = status === 'E' || values.length === 0 || unpreparable(text) || this.resetPending;
    const name = unnamed ? undefined : await this.nameFor(text, inTransaction);
    if (name === undefined) return this.send(text, values);
    try {
      return await this.send({ name, text, values });
    } catch (error) {
      return this.recover(error, name, text, values, inTransaction);
    }
  }

  /**
   * A named statement failed. Its plan's result type changed (another instance's migration added a
   * column to a table it selects `*` from): every prepared statement of the connection may be stale,
   * so all are dropped; outside a transaction the statement had no effect and runs once more, inside
   * one the transaction has failed and the caller's error stands (the next transaction prepares
   * afresh). Any other error: the statement stays, unless it never got prepared.
   */
  private async recover(error: unknown, name: string, text: string, values: unknown[], inTransaction: boolean) {
    const { code, message } = error as { code?: string; message?: string };
    if (code === FEATURE_NOT_SUPPORTED && RESULT_TYPE_CHANGED.test(message ?? '')) {
      this.forgetAll();
      this.resetPending = true;
      if (inTransaction) throw error;
      await this.deallocateAll();
      // Counted as a run: the statement is prepared again from its next one.
      this.remember(text);
      return this.send(text, values);
    }
    // Without an SQLSTATE the error is pg's own (a value it could not encode), after which it closes
    // the statement on the server; with one, the statement exists if its Parse completed.
    if (code === undefined || this.parsed().parsedStatements[name] === undefined) this.forget(text, name);
    throw error;
  }

  /** The name to run `text` under, or undefined to run it unnamed (its first run on this connection). */
  private async nameFor(text: string, inTransaction: boolean): Promise<string | undefined> {
    const known = this.named.get(text);
    if (known !== undefined) {
      this.named.delete(text);
      this.named.set(text, known);
      return known;
    }
    if (!this.seenOnce.delete(text)) {
      this.remember(text);
      return undefined;
    }
    if (this.named.size + this.evicted.length >= this.capacity) await this.evictOldest(inTransaction);
    const name = `svc_${this.sequence++}`;
    this.named.set(text, name);
    return name;
  }

  /** Makes room for one statement: the least recently used tenth of the cache out, deallocated in one round trip. */
  private async evictOldest(inTransaction: boolean): Promise<void> {
    const batch = Math.max(1, Math.ceil(this.capacity / 10));
    for (const [text, name] of this.named) {
      if (this.evicted.length >= batch) break;
      this.named.delete(text);
      delete this.parsed().parsedStatements[name];
      this.evicted.push(name);
    }
    const names = this.evicted;
    try {
      await this.send(names.map((name) => `deallocate ${name}`).join('; '));
      this.evicted = [];
    } catch (error) {
      // The server holds other statements than the cache thinks (one of these names is missing), or
      // the transaction had failed already: start over from nothing, as after a migration; inside a
      // transaction, which the failed DEALLOCATE has aborted, once it has ended.
      this.forgetAll();
      this.resetPending = true;
      if ((error as { code?: string }).code === undefined || inTransaction) throw error;
      await this.deallocateAll();
    }
  }

  /** Notes a text run unnamed once, so that its next run names it. */
  private remember(text: string) {
    this.seenOnce.add(text);
    if (this.seenOnce.size > this.capacity) this.seenOnce.delete(this.seenOnce.values().next().value as string);
  }

  private async deallocateAll(): Promise<void> {
    await this.send('deallocate all');
    this.forgetAll();
    this.resetPending = false;
  }

  private forget(text: string, name: string) {
    if (this.named.get(text) === name) this.named.delete(text);
    delete this.parsed().parsedStatements[name];
    delete this.parsed().submittedNamedStatements[name];
  }

  private forgetAll() {
    this.named.clear();
    this.evicted = [];
    const parsed = this.parsed();
    parsed.parsedStatements = {};
    parsed.submittedNamedStatements = {};
  }

  private parsed(): ParsedStatements {
    return (this.client as unknown as { connection: ParsedStatements }).connection;
  }
}
