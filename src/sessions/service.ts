// Sessions: one per issuance or presentation flow. The features that drive a flow create and move
// sessions through this service; it keeps personal data encrypted, logs what happened, and
// publishes every status change to subscribers on all instances.
import { createHash, randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Sealer } from '../platform/crypto/sealed.js';
import type { SessionsTable } from '../platform/db/schema.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import { type Executor, fromBool, nowIso, toBool } from '../platform/db/values.js';
import type { EventBus } from '../platform/events/bus.js';
import { notFound } from '../platform/http/problem.js';
import { type SessionKind, type SessionState, type SessionStatus, type SessionStatusEvent, sessionTopic } from './model.js';
import * as store from './store.js';

export interface NewSession {
  tenantId: string;
  kind: SessionKind;
  clientId: string | null;
  /** How long the wallet has to complete the flow. */
  lifetimeSeconds: number;
  public?: Record<string, unknown>;
  private?: Record<string, unknown>;
}

export interface SessionChange {
  status?: SessionStatus;
  consumed?: boolean;
  errorReason?: string | null;
  /** Merged key by key into the stored metadata / personal data. */
  public?: Record<string, unknown>;
  private?: Record<string, unknown>;
}

/** Conditions for a compare-and-set update: the change applies only while they still hold. */
export interface SessionExpectation {
  statuses?: readonly SessionStatus[];
  consumed?: boolean;
}

export const hashHandle = (secret: string) => createHash('sha256').update(secret).digest('base64url');

export class SessionService {
  constructor(
    private readonly db: Executor,
    private readonly sealer: Sealer,
    private readonly bus: EventBus,
  ) {}

  private toState(row: Selectable<SessionsTable>): SessionState {
    const expired = row.status === 'active' || row.status === 'fetched' ? Date.parse(row.expires_at) <= Date.now() : false;
    return {
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
      private: row.private_data ? this.sealer.openJson<Record<string, unknown>>(row.private_data, row.id) : null,
      anonymized: fromBool(row.anonymized),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      expiresAt: row.expires_at,
    };
  }

  async create(input: NewSession, db: Executor = this.db): Promise<SessionState> {
    const id = randomUUID();
    const now = new Date();
    await store.insertSession(tenantDb(db, input.tenantId), {
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
    });
    const state = (await this.find(input.tenantId, id, db)) as SessionState;
    await this.publish(db, state, null);
    return state;
  }

  async find(tenantId: string, id: string, db: Executor = this.db): Promise<SessionState | undefined> {
    const row = await store.findSession(tenantDb(db, tenantId), id);
    return row ? this.toState(row) : undefined;
  }

  async get(tenantId: string, id: string, db: Executor = this.db): Promise<SessionState> {
    const session = await this.find(tenantId, id, db);
    if (!session) throw notFound('session', id);
    return session;
  }

  /**
   * Applies `change` if the session still meets `expected` (a compare-and-set, so two wallets racing
   * for one offer cannot both win). Returns the new state, or undefined when the condition failed.
   */
  async update(tenantId: string, id: string, change: SessionChange, expected: SessionExpectation = {}, db: Executor = this.db) {
    const before = await this.find(tenantId, id, db);
    if (!before) return undefined;
    const now = nowIso();
    const applied = await store.updateSession(
      tenantDb(db, tenantId),
      id,
      {
        ...(change.status && { status: change.status }),
        ...(change.consumed !== undefined && { consumed: toBool(change.consumed), ...(change.consumed && !before.consumed && { consumed_at: now }) }),
        ...(change.errorReason !== undefined && { error_reason: change.errorReason }),
        ...(change.public && { public_data: JSON.stringify({ ...before.public, ...change.public }) }),
        ...(change.private && before.private && { private_data: this.sealer.sealJson({ ...before.private, ...change.private }, id) }),
        updated_at: now,
      },
      expected,
    );
    if (!applied) return undefined;
    const after = (await this.find(tenantId, id, db)) as SessionState;
    if (after.status !== before.status) await this.publish(db, after, before.status);
    return after;
  }

  /** Counts one more wrong transaction code; returns the new count. */
  incrementTxCodeFailures(tenantId: string, id: string, db: Executor = this.db) {
    return store.incrementTxCodeFailures(tenantDb(db, tenantId), id);
  }

  async log(sessionId: string, level: 'info' | 'warn' | 'error', message: string, details?: Record<string, unknown>, db: Executor = this.db) {
    await store.insertLog(db, { session_id: sessionId, level, message, details: details ? JSON.stringify(details) : null, created_at: nowIso() });
  }

  /** Registers a secret handed to a wallet (a pre-authorized code, say); only its hash is stored. */
  async addHandle(sessionId: string, purpose: string, secret: string, expiresAt: string, db: Executor = this.db) {
    await store.insertHandle(db, { hash: hashHandle(secret), purpose, session_id: sessionId, expires_at: expiresAt });
  }

  async findByHandle(purpose: string, secret: string, db: Executor = this.db): Promise<SessionState | undefined> {
    const found = await store.findHandle(db, hashHandle(secret), purpose, nowIso());
    return found ? this.find(found.tenant_id, found.session_id, db) : undefined;
  }

  async dropHandles(sessionId: string, purpose: string, db: Executor = this.db) {
    await store.deleteHandles(db, sessionId, purpose);
  }

  subscribe(sessionId: string, listener: (event: SessionStatusEvent) => void) {
    return this.bus.subscribe(sessionTopic(sessionId), (payload) => listener(payload as SessionStatusEvent));
  }

  private async publish(db: Executor, state: SessionState, previousStatus: SessionStatus | null) {
    const event: SessionStatusEvent = {
      sessionId: state.id,
      tenantId: state.tenantId,
      status: state.status,
      previousStatus,
      consumed: state.consumed,
      errorReason: state.errorReason,
      updatedAt: state.updatedAt,
    };
    await this.bus.publish(db, sessionTopic(state.id), event);
  }
}
