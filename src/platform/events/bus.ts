// Events that must reach subscribers on every instance (session status changes for SSE streams).
// PostgreSQL delivers them with LISTEN/NOTIFY; SQLite is single-instance, so an in-process emitter
// is enough there. Publishing takes the executor so that, on PostgreSQL, a NOTIFY sent inside a
// transaction is delivered only if that transaction commits.
import { EventEmitter } from 'node:events';
import type { Executor } from '../db/values.js';

export type Listener = (payload: unknown) => void;

export interface EventBus {
  publish(db: Executor, topic: string, payload: unknown): Promise<void>;
  /** Returns the function that unsubscribes. */
  subscribe(topic: string, listener: Listener): () => void;
  close(): Promise<void>;
}

export class InProcessBus implements EventBus {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  async publish(_db: Executor, topic: string, payload: unknown) {
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
