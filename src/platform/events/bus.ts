// Events that must reach subscribers on every instance (session status changes for SSE streams).
// PostgreSQL delivers them with LISTEN/NOTIFY; SQLite is single-instance, so an in-process emitter
// is enough there. Publishing takes the executor so that, on PostgreSQL, a NOTIFY sent inside a
// transaction is delivered only if that transaction commits.
import { EventEmitter } from 'node:events';
import type { RawBuilder } from 'kysely';
import type { Executor } from '../db/values.js';

export type Listener = (payload: unknown) => void;

export interface EventBus {
  publish(db: Executor, topic: string, payload: unknown): Promise<void>;
  /**
   * PostgreSQL: the event as a SQL expression (pg_notify), for a statement to send along with the
   * change it announces, in the same round trip; sent when that statement's transaction commits,
   * and only if the statement evaluates it. Absent where publishing needs no database.
   */
  notification?(topic: string, payload: unknown): RawBuilder<unknown>;
  /**
   * `notification` for an event that the statement itself makes from the rows it writes: `topic` a
   * SQL text expression, `payload` a SQL json expression (of a few short columns: well under the
   * size limit, which is not checked here).
   */
  notificationOf?(topic: RawBuilder<string>, payload: RawBuilder<unknown>): RawBuilder<unknown>;
  /** Returns the function that unsubscribes. */
  subscribe(topic: string, listener: Listener): () => void;
  close(): Promise<void>;
}

/**
 * Heard locally (never published) when events may have been missed: the PostgreSQL bus's listening
 * connection was lost and is back. Caches that rely on change events forget everything then.
 */
export const EVENTS_MISSED_TOPIC = 'events:missed';

/**
 * Calls `listener` with the tenant named by each `{ tenantId }` event of `topic` (the change events
 * caches forget by). A payload from the wire is not trusted to have that shape: anything else is
 * ignored.
 */
export function onTenantEvent(bus: EventBus, topic: string, listener: (tenantId: string) => void): void {
  bus.subscribe(topic, (payload) => {
    const tenantId = (payload as { tenantId?: unknown } | null)?.tenantId;
    if (typeof tenantId === 'string') listener(tenantId);
  });
}

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more; both buses keep to it, so SQLite tests catch a breach. */
export const MAX_EVENT_BYTES = 7999;

/** The wire form of an event: the envelope both buses check, and the one PostgreSQL carries. */
export function encodeEvent(topic: string, payload: unknown): string {
  const text = JSON.stringify({ topic, payload });
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_EVENT_BYTES) {
    throw new Error(
      `event on ${topic} is ${bytes} bytes; events carry at most ${MAX_EVENT_BYTES} (publish an id and let subscribers read the rest)`,
    );
  }
  return text;
}

export class InProcessBus implements EventBus {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  async publish(_db: Executor, topic: string, payload: unknown) {
    encodeEvent(topic, payload);
    this.emitter.emit(topic, payload);
  }

  subscribe(topic: string, listener: Listener) {
    this.emitter.on(topic, listener);
    return () => this.emitter.off(topic, listener);
  }

  async close() {
    this.emitter.removeAllListeners();
  }
}
