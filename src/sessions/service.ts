// Sessions: one per issuance or presentation flow. The features that drive a flow create and move
// sessions through this service; it keeps personal data encrypted, logs what happened, and
// publishes every status change to subscribers on all instances.
import { createHash, randomUUID } from 'node:crypto';
import { type Insertable, type RawBuilder, type Selectable, sql, type Updateable } from 'kysely';
import type { AuditService } from '../audit/service.js';
import type { RequestContext } from '../platform/auth/principal.js';
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/sealed.js';
import type { SessionsTable } from '../platform/db/schema.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import {
  type Executor,
  fromBool,
  insertAndRead,
  insertEachAndRead,
  inTransaction,
  isPostgres,
  type OnceInsert,
  parseJson,
  toBool,
} from '../platform/db/values.js';
import type { EventBus } from '../platform/events/bus.js';
import { notFound } from '../platform/http/problem.js';
import { type BatchLimits, CLEANUP_BATCHES, deleteInBatches } from '../platform/jobs/batches.js';
import {
  ANONYMIZED_PUBLIC_KEYS,
  type RetentionPolicy,
  type SessionKind,
  type SessionState,
  type SessionStatus,
  type SessionStatusEvent,
  sessionTopic,
  statusEvent,
} from './model.js';
import * as store from './store.js';
import type { TenantSummary } from './view.js';

export interface NewSession {
  tenantId: string;
  kind: SessionKind;
  clientId: string | null;
  /** How long the wallet has to complete the flow. */
  lifetimeSeconds: number;
  public?: Record<string, unknown>;
  private?: Record<string, unknown>;
  /**
   * Where the session's webhook events go (see migration 0022): set, the database writes an event row
   * with each change that makes one. An issuance session defaults to its public webhookEndpointId.
   */
  webhookTarget?: string | null;
}

export interface SessionChange {
  status?: SessionStatus;
  consumed?: boolean;
  errorReason?: string | null;
  /** Merged key by key into the stored metadata / personal data. */
  public?: Record<string, unknown>;
  private?: Record<string, unknown>;
  /** A new expiry (a session opened for a short while that has shown it is worth keeping). */
  expiresAt?: string;
}

/** Conditions for a compare-and-set update: the change applies only while they still hold. */
export interface SessionExpectation {
  /** An expired session (past its expiry, whatever its row says) has the status `expired`. */
  statuses?: readonly SessionStatus[];
  consumed?: boolean;
  /** Any further condition on the session as locked. */
  holds?: (current: SessionState) => boolean;
}

const meets = (session: SessionState, { statuses, consumed, holds }: SessionExpectation) =>
  (statuses === undefined || statuses.includes(session.status)) &&
  (consumed === undefined || session.consumed === consumed) &&
  (holds === undefined || holds(session));

export interface SessionListOptions extends Omit<store.SessionListFilter, 'now' | 'kind' | 'postgres'> {
  kind?: SessionKind;
  sortBy: store.SessionSortKey;
  sortOrder: 'asc' | 'desc';
  /** 1-based. */
  page: number;
  pageSize: number;
}

/** A line of a session's log, as a step writes it. */
export interface SessionLogLine {
  level: 'info' | 'warn' | 'error';
  message: string;
  details?: Record<string, unknown>;
}

export interface SessionLogEntry {
  level: 'info' | 'warn' | 'error';
  message: string;
  details: Record<string, unknown> | null;
  createdAt: string;
}

/** Attempts of one update before giving up: each failed one means another write to the session won. */
const MAX_UPDATE_ATTEMPTS = 50;

/** Rows anonymized per transaction, so a large backlog never holds one long transaction. */
const ANONYMIZE_BATCH = 200;
/** Lapsed sessions marked expired per tenant and run (each is a write and an event); the rest at the next run. */
const EXPIRE_PER_RUN = 1000;

export const spentHandle = (purpose: string) => `${purpose}:spent`;

export const hashHandle = (secret: string) => createHash('sha256').update(secret).digest('base64url');

/** How SessionService.update applies a change, beside the change itself. */
export interface SessionUpdateOptions {
  /** The condition the session must meet when the change is written (none: any session). */
  expected?: SessionExpectation;
  /** The executor (a transaction) to write with; the service's own by default. */
  db?: Executor;
  /** The session as the caller just read it: no second read when nothing raced. */
  from?: SessionState;
  /** A log line written with the change (in the same statement on PostgreSQL, with the status event). */
  log?: SessionLogLine;
  /** Writes to other tables sent with the change (in its statement on PostgreSQL; see store.AlongWrite). */
  writes?: store.AlongWrite[];
  /** Writes made only when the change applies, atomically with it (see store.FollowingWrite), chosen from the session as read. */
  follows?: (current: SessionState) => store.FollowingWrite[];
}

export class SessionService {
  private readonly statusListeners: ((state: SessionState, previousStatus: SessionStatus | null) => void)[] = [];
  /** The row each state was made from (its version), so that an update of a state just read needs no second read. */
  private readonly rows = new WeakMap<SessionState, Selectable<SessionsTable>>();

  constructor(
    private readonly db: Executor,
    private readonly sealer: Sealer,
    private readonly bus: EventBus,
    private readonly audit: AuditService,
    /** Decides what has expired and stamps every change; the retention job reads it too. */
    readonly clock: Clock,
  ) {}

  private toState(row: Selectable<SessionsTable>): SessionState {
    const expired = row.status === 'active' || row.status === 'fetched' ? Date.parse(row.expires_at) <= this.clock.now().getTime() : false;
    const state = {
      id: row.id,
      tenantId: row.tenant_id,
      kind: row.kind as SessionKind,
      status: expired ? 'expired' : (row.status as SessionStatus),
      clientId: row.client_id,
      consumed: fromBool(row.consumed),
      consumedAt: row.consumed_at,
      txCodeFailedAttempts: row.tx_code_failed_attempts,
      errorReason: row.error_reason,
      public: JSON.parse(row.public_data) as Record<string, unknown>,
      anonymized: fromBool(row.anonymized),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      expiresAt: row.expires_at,
      webhookTarget: row.webhook_target ?? null,
    };
    // Personal data is decrypted when a step reads it, not on every lookup (most never do).
    let opened: Record<string, unknown> | null | undefined;
    Object.defineProperty(state, 'private', {
      enumerable: true,
      get: () => {
        opened ??= row.private_data ? this.sealer.openJson<Record<string, unknown>>(row.private_data, row.id) : null;
        return opened;
      },
    });
    this.rows.set(state as SessionState, row);
    return state as SessionState;
  }

  /**
   * Creates the session, with the handles given to the wallet (each expiring with the session) and
   * the log line saying why, atomically: on PostgreSQL in one statement that also sends the status event.
   */
  async create(
    input: NewSession,
    db: Executor = this.db,
    along: { handles?: { purpose: string; secret: string }[]; log?: SessionLogLine } = {},
  ): Promise<SessionState> {
    const id = randomUUID();
    const now = this.clock.now();
    const row = {
      tenant_id: input.tenantId,
      id,
      kind: input.kind,
      status: 'active',
      client_id: input.clientId,
      consumed: 0,
      consumed_at: null,
      tx_code_failed_attempts: 0,
      error_reason: null,
      public_data: JSON.stringify(input.public ?? {}),
      private_data: this.sealer.sealJson(input.private ?? {}, id),
      anonymized: 0,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
      expires_at: new Date(now.getTime() + input.lifetimeSeconds * 1000).toISOString(),
      webhook_target: input.webhookTarget ?? issuanceWebhookTarget(input),
    } satisfies Insertable<SessionsTable>;
    // The row as stored: no RETURNING needed to know it.
    const state = this.toState({ ...row, version: 0 });
    const event = statusEvent(state, null);
    const notify = this.bus.notification?.(sessionTopic(id), event);
    const handles = (along.handles ?? []).map(({ purpose, secret }) => ({
      hash: hashHandle(secret),
      purpose,
      session_id: id,
      expires_at: row.expires_at,
    }));
    const log = along.log && { ...this.logRow(along.log), session_id: id };
    await store.insertSessionWith(db, row, { handles, log, notify });
    await this.announce(db, state, null, event, notify !== undefined);
    return state;
  }

  async find(tenantId: string, id: string, db: Executor = this.db): Promise<SessionState | undefined> {
    const row = await store.findSession(tenantDb(db, tenantId), id);
    return row ? this.toState(row) : undefined;
  }

  /** The session with the summary of its tenant, read together (one round trip, as the session view needs both). */
  async getWithTenant(tenantId: string, id: string): Promise<{ session: SessionState; tenant: TenantSummary }> {
    const found = await store.findSessionWithTenant(tenantDb(this.db, tenantId), id);
    if (!found) throw notFound('session', id);
    const { tenant_name: name, tenant_description: description, tenant_status: status, ...row } = found;
    return { session: this.toState(row), tenant: { id: tenantId, name, description, status } };
  }

  /**
   * `find` with `insert` (a once-only value remembered: a DPoP proof's jti, say) sent in the same round
   * trip; `inserted` is false when its row was there already.
   */
  async findInserting(tenantId: string, id: string, insert: OnceInsert): Promise<{ session?: SessionState; inserted: boolean }> {
    const { inserted, row } = await insertAndRead(this.db, insert, store.sessionQuery(tenantDb(this.db, tenantId), id));
    return { inserted, session: row && this.toState(row) };
  }

  async get(tenantId: string, id: string, db: Executor = this.db): Promise<SessionState> {
    const session = await this.find(tenantId, id, db);
    if (!session) throw notFound('session', id);
    return session;
  }

  /**
   * Applies `change` if the session still meets `expected`, as one compare-and-set: the change is
   * computed from the session as read and written only while its row is still at the version read
   * (store.updateSessionAt); when another write came first, the session is read again and the
   * condition checked again. So two requests racing for one offer cannot both win, and a change merged
   * into the metadata or personal data never overwrites one made meanwhile, as under a row lock, but
   * in one round trip when nothing raced. `change` may be computed from the session as read
   * (appending to a list, say). Returns the new state, or undefined when the session is gone, the
   * condition failed, or a write that guards the change touched no row.
   */
  async update(
    tenantId: string,
    id: string,
    change: SessionChange | ((current: SessionState) => SessionChange),
    options: SessionUpdateOptions = {},
  ): Promise<SessionState | undefined> {
    const { expected = {}, db = this.db } = options;
    const given = options.from && this.rows.get(options.from);
    let row = given && given.id === id && given.tenant_id === tenantId ? given : await store.findSession(tenantDb(db, tenantId), id);
    // Each lost race means another write succeeded; a session written this often is a fault, not load.
    for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
      if (!row) return undefined;
      const before = this.toState(row);
      if (!meets(before, expected)) return undefined;
      const columns = this.changedColumns(before, typeof change === 'function' ? change(before) : change);
      // The row as it will be, had nothing raced: what a RETURNING would give, without sending it back.
      const next = { ...row, ...columns, version: row.version + 1 } as Selectable<SessionsTable>;
      const after = this.toState(next);
      const event = after.status !== before.status ? statusEvent(after, before.status) : undefined;
      const notify = event && this.bus.notification?.(sessionTopic(id), event);
      const log = options.log && this.logRow(options.log);
      // A write that guards the change goes with every attempt; any other only with the first.
      const writes = (options.writes ?? []).filter((write) => write.guards || attempt === 0);
      const follows = options.follows?.(before) ?? [];
      const { updated, written } = await store.updateSessionAt(db, tenantId, id, row.version, columns, { log, notify, writes, follows });
      if (updated) {
        if (event) await this.announce(db, after, before.status, event, notify !== undefined);
        return after;
      }
      if (writes.some((write, i) => write.guards && written[i] === 0)) return undefined;
      row = await store.findSession(tenantDb(db, tenantId), id);
    }
    throw new Error(`session ${id}: changed by others on each of ${MAX_UPDATE_ATTEMPTS} attempts`);
  }

  /** The columns `change` sets on the session `before`: metadata and personal data merged key by key. */
  private changedColumns(before: SessionState, change: SessionChange): Updateable<SessionsTable> {
    const now = this.clock.now().toISOString();
    return {
      ...(change.status && { status: change.status }),
      ...(change.consumed !== undefined && {
        consumed: toBool(change.consumed),
        ...(change.consumed && !before.consumed && { consumed_at: now }),
      }),
      ...(change.errorReason !== undefined && { error_reason: change.errorReason }),
      ...(change.public && { public_data: JSON.stringify({ ...before.public, ...change.public }) }),
      ...(change.private && before.private && { private_data: this.sealer.sealJson({ ...before.private, ...change.private }, before.id) }),
      ...(change.expiresAt && { expires_at: change.expiresAt }),
      updated_at: now,
    };
  }

  /**
   * Counts one more wrong transaction code while fewer than `max` were counted (one statement); the
   * new count, or undefined when the offer had no attempt left (or was redeemed meanwhile).
   */
  countTxCodeFailure(tenantId: string, id: string, max: number, db: Executor = this.db) {
    return store.countTxCodeFailure(tenantDb(db, tenantId), id, max);
  }

  async log(
    sessionId: string,
    level: 'info' | 'warn' | 'error',
    message: string,
    details?: Record<string, unknown>,
    db: Executor = this.db,
  ) {
    await store.insertLog(db, { ...this.logRow({ level, message, details }), session_id: sessionId });
  }

  private logRow({ level, message, details }: SessionLogLine): store.LogRow {
    return { level, message, details: details ? JSON.stringify(details) : null, created_at: this.clock.now().toISOString() };
  }

  /** Registers a secret handed to a wallet (a pre-authorized code, say); only its hash is stored. */
  async addHandle(sessionId: string, purpose: string, secret: string, expiresAt: string, db: Executor = this.db) {
    await store.insertHandle(db, { hash: hashHandle(secret), purpose, session_id: sessionId, expires_at: expiresAt });
  }

  /** addHandle with a line of the session's log, in one round trip (PostgreSQL) and atomically. */
  async addHandleLogging(
    sessionId: string,
    purpose: string,
    secret: string,
    expiresAt: string,
    line: SessionLogLine,
    db: Executor = this.db,
  ) {
    const row = { hash: hashHandle(secret), purpose, session_id: sessionId, expires_at: expiresAt };
    await store.insertHandleWithLog(db, row, this.logRow(line));
  }

  /** addHandle as a write sent with a session update (`update`'s options.writes), so that the handle exists exactly when the change does. */
  handleWrite(sessionId: string, purpose: string, secret: string, expiresAt: string): store.AlongWrite {
    const row = { hash: hashHandle(secret), purpose, session_id: sessionId, expires_at: expiresAt };
    return { query: store.handleInsert(this.db, row), guards: false };
  }

  /** addHandle as a write that follows a session update (`update`'s options.follows): the handle exists exactly when the change does. */
  handleFollowing(purpose: string, secret: string, expiresAt: string): store.FollowingWrite {
    return store.addingHandle(this.db, { hash: hashHandle(secret), purpose, expires_at: expiresAt });
  }

  /** dropHandles as a write that follows a session update (`update`'s options.follows). */
  handlesDropping(purposes: readonly string[]): store.FollowingWrite {
    return store.droppingHandles(purposes);
  }

  /** A further log line written with a session update (`update`'s options.follows). */
  logFollowing(line: SessionLogLine): store.FollowingWrite {
    return store.addingLog(this.db, this.logRow(line));
  }

  /**
   * `findByHandle` with several once-only values remembered in the same round trip (a DPoP proof's
   * jti and a client attestation proof's): `inserted[i]` is false when `inserts[i]` found its row.
   */
  async findByHandleInsertingEach(
    purpose: string,
    secret: string,
    inserts: OnceInsert[],
  ): Promise<{ session?: SessionState; inserted: boolean[] }> {
    const read = store.handleQuery(this.db, hashHandle(secret), purpose, this.clock.now().toISOString());
    const { inserted, row } = await insertEachAndRead(this.db, inserts, read);
    return { inserted, session: row && this.toState(row) };
  }

  /**
   * Spends a single-use handle of the tenant (as spendHandle) and reads its session, in one statement
   * on PostgreSQL, with `inserts` (once-only values: proof jtis) remembered in it: the handle is spent
   * only if every insert added its row, so a replayed proof spends nothing. `session` is set exactly
   * for the one caller that spent the handle; `inserted[i]` tells which insert found its row.
   */
  async spendHandleReading(
    purpose: string,
    secret: string,
    tenantId: string,
    inserts: OnceInsert[] = [],
  ): Promise<{ session?: SessionState; inserted: boolean[] }> {
    const spend = { hash: hashHandle(secret), purpose, spentPurpose: spentHandle(purpose), tenantId, now: this.clock.now().toISOString() };
    const { inserted, row } = await store.spendHandleReading(this.db, spend, inserts);
    return { inserted, session: row && this.toState(row) };
  }

  /**
   * spendHandleReading (without inserts) that also gives the spender's session a new handle (an
   * authorization code for a request_uri) with its log line, in the same statement on PostgreSQL.
   * The caller decides afterwards whether the new handle is handed out; `withdraw` takes it and its
   * log line back when it is not (a no-op when nothing was spent).
   */
  async spendHandleIssuing(
    purpose: string,
    secret: string,
    tenantId: string,
    issue: { purpose: string; secret: string; expiresAt: string; log: SessionLogLine },
  ): Promise<{ session?: SessionState; withdraw(): Promise<void> }> {
    const spend = { hash: hashHandle(secret), purpose, spentPurpose: spentHandle(purpose), tenantId, now: this.clock.now().toISOString() };
    const handle = { hash: hashHandle(issue.secret), purpose: issue.purpose, expires_at: issue.expiresAt };
    const { row, loggedSeq } = await store.spendHandleReading(this.db, spend, [], { handle, log: this.logRow(issue.log) });
    const withdraw = async () => {
      if (loggedSeq !== undefined) await store.withdrawIssued(this.db, handle.hash, loggedSeq);
    };
    return { session: row && this.toState(row), withdraw };
  }

  /**
   * Uses a single-use handle of one given session of the tenant: true for exactly one caller while
   * the handle is live, decided by the one statement that spends it (the spent handle is kept, as
   * spendHandle does). A handle of another session, or of another tenant's, is not spent.
   */
  async spendHandleOfSession(purpose: string, secret: string, tenantId: string, sessionId: string): Promise<boolean> {
    const ofSession = sql<boolean>`sessions.id = ${sessionId} and sessions.tenant_id = ${tenantId}`;
    return store.respurposeHandle(this.db, hashHandle(secret), purpose, spentHandle(purpose), this.clock.now().toISOString(), ofSession);
  }

  async findByHandle(purpose: string, secret: string, db: Executor = this.db): Promise<SessionState | undefined> {
    const found = await store.findHandle(db, hashHandle(secret), purpose, this.clock.now().toISOString());
    return found && this.toState(found);
  }

  /** `findByHandle` with `insert` sent in the same round trip, as `findInserting` does. */
  async findByHandleInserting(purpose: string, secret: string, insert: OnceInsert): Promise<{ session?: SessionState; inserted: boolean }> {
    const { inserted, row } = await insertAndRead(
      this.db,
      insert,
      store.handleQuery(this.db, hashHandle(secret), purpose, this.clock.now().toISOString()),
    );
    return { inserted, session: row && this.toState(row) };
  }

  /**
   * Moves the session of a live handle from status `from` to `to` when the wallet fetches its offer or
   * request, with the log line: on PostgreSQL read, moved, logged and announced in one statement (a
   * compare-and-set on the version read, as `update` does); elsewhere `findByHandle` then `update`.
   * With `tenantId`, a session of another tenant is neither read nor moved. Returns the session as
   * read (before the move) and whether this call moved it.
   */
  async moveByHandle(
    purpose: string,
    secret: string,
    move: { from: SessionStatus; to: SessionStatus; tenantId?: string; log?: SessionLogLine },
  ): Promise<{ session?: SessionState; moved: boolean }> {
    const { from, to, tenantId } = move;
    const read = await this.moveInOne(purpose, secret, { from: [from], to, tenantId, log: move.log });
    if (read?.moved) return read;
    const session = read ? read.session : await this.findByHandle(purpose, secret);
    if (!session || (tenantId && session.tenantId !== tenantId)) return { moved: false };
    // Not read yet, or read as movable while another write came first: `update` decides, reading it again.
    if (read && session.status !== from) return { session, moved: false };
    const moved = await this.update(
      session.tenantId,
      session.id,
      { status: to },
      { expected: { statuses: [from] }, from: read ? undefined : session, log: move.log },
    );
    return { session, moved: moved !== undefined };
  }

  /**
   * PostgreSQL: redeems the session of a live handle in one statement: marks it consumed and moves it
   * to `to`, if it is unconsumed, in one of `from`, and meets `holds` (SQL over the session as read,
   * the CTE `found`), with `once` (a DPoP proof's jti, say) remembered in the same statement (and the
   * session redeemed only if that added its row), the log line and the event. Undefined elsewhere
   * (the caller reads and updates instead). Returns the session as read, whether it was redeemed, and
   * whether `once` added its row; a session not redeemed is the caller's to explain, or to try again
   * through `update` when it was merely raced.
   */
  consumeByHandle(
    purpose: string,
    secret: string,
    redeem: {
      from: SessionStatus[];
      to: SessionStatus;
      tenantId: string;
      holds?: RawBuilder<boolean>;
      once?: OnceInsert;
      log?: SessionLogLine;
    },
  ) {
    return this.moveInOne(purpose, secret, { ...redeem, consume: true });
  }

  /** The statement behind moveByHandle and consumeByHandle; undefined where it cannot be one (SQLite). */
  private async moveInOne(
    purpose: string,
    secret: string,
    move: Omit<store.StatusMove, 'now' | 'log' | 'notify'> & { from: readonly SessionStatus[]; to: SessionStatus; log?: SessionLogLine },
  ): Promise<{ session?: SessionState; moved: boolean; inserted: boolean } | undefined> {
    const now = this.clock.now().toISOString();
    const notify = this.bus.notificationOf?.(sql`'session:' || moved.id`, statusEventOfMoved(move.to, now));
    if (!isPostgres(this.db) || !notify) return undefined;
    const log = move.log && this.logRow(move.log);
    const read = await store.moveByHandle(this.db, hashHandle(secret), purpose, { ...move, now, log, notify });
    if (!read.row) return { moved: false, inserted: read.inserted };
    const before = this.toState(read.row);
    if (read.moved) {
      const consumed = move.consume ? { consumed: true, consumed_at: now } : {};
      const after = this.toState({ ...read.row, ...consumed, status: move.to, updated_at: now, version: read.row.version + 1 });
      if (after.status !== before.status) await this.announce(this.db, after, before.status, statusEvent(after, before.status), true);
    }
    return { session: before, moved: read.moved, inserted: read.inserted };
  }

  /**
   * Uses a single-use handle: true for exactly one caller while it is live. The spent handle is kept
   * until its expiry under `spentHandle(purpose)`, so that a replay can be recognised (and punished).
   */
  async spendHandle(purpose: string, secret: string, db: Executor = this.db): Promise<boolean> {
    return store.respurposeHandle(db, hashHandle(secret), purpose, spentHandle(purpose), this.clock.now().toISOString());
  }

  /**
   * `spendHandle` only while the handle's session is in use: before its expiresAt (whatever its
   * status says), not failed or expired, and meeting `holds` (SQL over the row `sessions`), all decided
   * by the statement that spends, so no change to the session can slip in between.
   */
  async spendHandleOfLiveSession(purpose: string, secret: string, holds: RawBuilder<boolean>): Promise<boolean> {
    const now = this.clock.now().toISOString();
    const live = sql<boolean>`sessions.expires_at > ${now} and sessions.status not in ('failed', 'expired') and ${holds}`;
    return store.respurposeHandle(this.db, hashHandle(secret), purpose, spentHandle(purpose), now, live);
  }

  async dropHandles(sessionId: string, purpose: string, db: Executor = this.db) {
    await store.deleteHandles(db, sessionId, purpose);
  }

  subscribe(sessionId: string, listener: (event: SessionStatusEvent) => void) {
    return this.bus.subscribe(sessionTopic(sessionId), (payload) => listener(payload as SessionStatusEvent));
  }

  /** One page of the tenant's sessions, with the number of all that match. */
  async list(tenantId: string, options: SessionListOptions): Promise<{ items: SessionState[]; total: number }> {
    const db = tenantDb(this.db, tenantId);
    const { kind, status, configurationId, createdFrom, createdTo, idPrefix } = options;
    const filter = {
      kind,
      status,
      configurationId,
      createdFrom,
      createdTo,
      idPrefix,
      now: this.clock.now().toISOString(),
      postgres: isPostgres(this.db),
    };
    const [rows, total] = await Promise.all([
      store.listSessions(db, {
        ...filter,
        sortBy: options.sortBy,
        sortOrder: options.sortOrder,
        offset: (options.page - 1) * options.pageSize,
        limit: options.pageSize,
      }),
      store.countSessions(db, filter),
    ]);
    return { items: rows.map((row) => this.toState(row)), total };
  }

  /** Deletes a session with its logs and handles. */
  async remove(ctx: RequestContext, tenantId: string, id: string): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      const before = await this.get(tenantId, id, trx);
      await store.deleteSession(tenantDb(trx, tenantId), id);
      const snapshot = { id, type: before.kind, status: before.status, createdAt: before.createdAt };
      await this.audit.record(ctx, { tenantId, actionType: 'session.deleted', before: snapshot }, trx);
    });
  }

  /** The session's log, oldest entry first. */
  async logs(tenantId: string, id: string): Promise<SessionLogEntry[]> {
    await this.get(tenantId, id);
    const rows = await store.listLogs(this.db, id);
    return rows.map((row) => ({
      level: row.level as SessionLogEntry['level'],
      message: row.message,
      details: parseJson<Record<string, unknown>>(row.details),
      createdAt: row.created_at,
    }));
  }

  /**
   * Marks open sessions past their expiry as expired and tells subscribers. Readers already see
   * them as expired; this makes the row (and filters on it) say so too.
   */
  async expireLapsed(tenantId: string): Promise<number> {
    const db = tenantDb(this.db, tenantId);
    const now = this.clock.now().toISOString();
    let expired = 0;
    for (const { id, status } of await store.listLapsed(db, now, EXPIRE_PER_RUN)) {
      // Compare-and-set on the status read, so a flow finishing at this moment is not overwritten.
      const applied = await store.updateSession(db, id, { status: 'expired', updated_at: now }, [status]);
      if (!applied) continue;
      expired++;
      const state = await this.find(tenantId, id);
      if (state) await this.publish(this.db, state, status as SessionStatus);
    }
    return expired;
  }

  /**
   * Applies the tenant's retention to sessions created more than ttlSeconds ago: `full` deletes
   * them (logs and handles go with them); `anonymize` keeps the row and its metadata, drops the
   * personal data and every public key not known to be free of it, and the handles. Logs stay:
   * they never hold personal data.
   */
  async applyRetention(
    tenantId: string,
    policy: RetentionPolicy,
    now = this.clock.now().getTime(),
    limits: BatchLimits = CLEANUP_BATCHES,
  ): Promise<{ deleted: number; anonymized: number }> {
    const cutoff = new Date(now - policy.ttlSeconds * 1000).toISOString();
    if (policy.cleanupMode === 'full') {
      const deleted = await deleteInBatches((size) => store.deleteCreatedBefore(tenantDb(this.db, tenantId), cutoff, size), limits);
      return { deleted, anonymized: 0 };
    }
    let anonymized = 0;
    // As many rows per run as the deleting mode's cap; the rest at the next run.
    const cap = limits.size * limits.maxBatches;
    while (anonymized < cap) {
      const batch = Math.min(ANONYMIZE_BATCH, cap - anonymized);
      const rows = await store.listToAnonymize(tenantDb(this.db, tenantId), cutoff, batch);
      if (rows.length === 0) break;
      await this.db.transaction().execute(async (trx) => {
        for (const row of rows) {
          const kept = pickKeys(JSON.parse(row.public_data) as Record<string, unknown>, ANONYMIZED_PUBLIC_KEYS);
          await store.anonymizeSession(tenantDb(trx, tenantId), row.id, JSON.stringify(kept));
          await store.deleteAllHandles(trx, row.id);
        }
      });
      anonymized += rows.length;
      if (rows.length < batch) break;
    }
    return { deleted: 0, anonymized };
  }

  /**
   * Hooks run in-process after a status change made by this instance (outgoing webhooks, say): every
   * change is seen by exactly one instance, the one that made it, unlike the cluster-wide bus.
   */
  onStatusChange(listener: (state: SessionState, previousStatus: SessionStatus | null) => void) {
    this.statusListeners.push(listener);
  }

  private async publish(db: Executor, state: SessionState, previousStatus: SessionStatus | null) {
    await this.announce(db, state, previousStatus, statusEvent(state, previousStatus), false);
  }

  /** Publishes the event (unless the statement that made the change sent it already) and runs the in-process hooks. */
  private async announce(
    db: Executor,
    state: SessionState,
    previousStatus: SessionStatus | null,
    event: SessionStatusEvent,
    sent: boolean,
  ) {
    if (!sent) await this.bus.publish(db, sessionTopic(state.id), event);
    for (const listener of this.statusListeners) listener(state, previousStatus);
  }
}

/** statusEvent, made in SQL from the columns of a session the statement moved (its CTE `moved`) to `to` at `now`. */
const statusEventOfMoved = (to: SessionStatus, now: string) => sql`json_build_object(
  'sessionId', moved.id, 'tenantId', moved.tenant_id, 'status', cast(${to} as text), 'previousStatus', moved.previous_status,
  'consumed', moved.consumed, 'errorReason', moved.error_reason, 'updatedAt', cast(${now} as text))`;

/** The webhook endpoint an issuance session's offer chose (its public webhookEndpointId), if any. */
function issuanceWebhookTarget(input: NewSession): string | null {
  const chosen =
    input.kind === 'issuance' && input.public && Object.hasOwn(input.public, 'webhookEndpointId') ? input.public.webhookEndpointId : null;
  return typeof chosen === 'string' ? chosen : null;
}

const pickKeys = (source: Record<string, unknown>, keys: readonly string[]) =>
  Object.fromEntries(keys.filter((key) => key in source).map((key) => [key, source[key]]));
