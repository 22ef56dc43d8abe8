// Rate limits counted locally and shared in batches. A round trip to the shared store per request
// would cost more than the requests it guards, so each instance counts what it admits in memory and
// adds those counts to the shared windows (database or Redis) in one statement per batch: every
// SYNC_INTERVAL_MS while a key has unsynced counts, at once when a key nears its limit, and at once
// when an instance holds a tenth of a key's limit unsynced (its local share: requests beyond it
// wait for that batch, one round trip shared by all of them, instead of being decided blind).
//
// Fixed windows aligned to the epoch (windows.ts). A request is admitted while (the shared total at
// the last sync + what this instance admitted since) stays below the limit. On one instance that is
// exact: the shared total holds only its own counts. With N instances, each decides without the
// counts the others have not synced yet, at most a local share each, and its own view of the shared
// total is refreshed before it admits more than one local share; so a window admits at most
// limit + N x ceil(limit / 10) (two instances, limit 100: at most 120).

import { outsideRequests } from '../db/request-attribution.js';
import { type SharedWindows, secondsLeft, type Window, type WindowDelta, windowOf } from './windows.js';

/** How long admitted requests may stay counted only locally. */
export const SYNC_INTERVAL_MS = 250;
/** The share of a limit one instance may admit before the shared store has it. */
const LOCAL_SHARE = 0.1;

export interface Limit {
  requests: number;
  windowSeconds: number;
}

export interface Verdict {
  admitted: boolean;
  /** Requests left in the window after this one (0 when refused). */
  remaining: number;
  /** Seconds until the window ends. */
  resetSeconds: number;
}

interface Counter {
  window: Window;
  /** The window's total in the shared store at the last sync (this instance's synced counts included). */
  shared: number;
  /** Admitted here and not yet sent. */
  unsynced: number;
  /** Sent in the batch under way, not yet in `shared`. */
  sending: number;
}

export class RateLimiter {
  private readonly counters = new Map<string, Counter>();
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<boolean> | undefined;
  /** A key neared its limit while a batch was under way: the next batch goes at once. */
  private urgent = false;

  constructor(
    private readonly shared: SharedWindows,
    private readonly onSyncFailure: (err: unknown) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Counts one request under `key` if the window has room. Decided in memory; waits only when this
   * instance already holds its local share of the key unsynced (then for the batch that sends it).
   */
  async admit(key: string, limit: Limit): Promise<Verdict> {
    const share = Math.max(1, Math.ceil(limit.requests * LOCAL_SHARE));
    let counter = this.counterOf(key, limit.windowSeconds, this.now());
    while (counter.unsynced + counter.sending >= share) {
      // The store out of reach: the instance goes on alone, on its own counts.
      if (!(await this.syncSoon())) break;
      counter = this.counterOf(key, limit.windowSeconds, this.now());
    }
    const nowMs = this.now();
    const used = counter.shared + counter.sending + counter.unsynced;
    const resetSeconds = secondsLeft(counter.window, nowMs);
    if (used >= limit.requests) return { admitted: false, remaining: 0, resetSeconds };
    counter.unsynced++;
    const remaining = limit.requests - used - 1;
    if (remaining < share || counter.unsynced >= share) this.syncUrgently();
    else this.scheduleSync();
    return { admitted: true, remaining, resetSeconds };
  }

  /** Sends every unsynced count now (tests and shutdown). */
  async flush(): Promise<void> {
    while (this.syncing) await this.syncing;
    await this.syncSoon();
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
    await this.shared.close();
  }

  private counterOf(key: string, windowSeconds: number, nowMs: number): Counter {
    const window = windowOf(key, windowSeconds, nowMs);
    let counter = this.counters.get(window.id);
    if (!counter) {
      counter = { window, shared: 0, unsynced: 0, sending: 0 };
      this.counters.set(window.id, counter);
    }
    return counter;
  }

  private scheduleSync() {
    if (this.timer || this.syncing) return;
    // Background work, though a request schedules it: not that request's round trips.
    this.timer = outsideRequests(() =>
      setTimeout(() => {
        this.timer = undefined;
        void this.syncSoon();
      }, SYNC_INTERVAL_MS),
    );
    this.timer.unref();
  }

  private syncUrgently() {
    if (this.syncing) this.urgent = true;
    else void this.syncSoon();
  }

  /** The batch under way, or a new one: one at a time. Resolves false when the store could not be reached. */
  private syncSoon(): Promise<boolean> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.syncing ??= this.sync()
      .then(
        () => true,
        (err) => {
          this.onSyncFailure(err);
          return false;
        },
      )
      .finally(() => {
        this.syncing = undefined;
        const urgent = this.urgent;
        this.urgent = false;
        if (!this.hasUnsynced()) return;
        if (urgent) void this.syncSoon();
        else this.scheduleSync();
      });
    return this.syncing;
  }

  private hasUnsynced(): boolean {
    for (const counter of this.counters.values()) if (counter.unsynced > 0) return true;
    return false;
  }

  private async sync(): Promise<void> {
    const nowMs = this.now();
    const batch: Counter[] = [];
    const deltas: WindowDelta[] = [];
    for (const [id, counter] of this.counters) {
      // A window that has ended counts nothing any more: what it still had unsent is dropped with it.
      if (counter.window.endMs <= nowMs) {
        this.counters.delete(id);
        continue;
      }
      if (counter.unsynced === 0) continue;
      counter.sending = counter.unsynced;
      counter.unsynced = 0;
      batch.push(counter);
      deltas.push({ window: counter.window, delta: counter.sending });
    }
    if (deltas.length === 0) return;
    try {
      const totals = await this.shared.addAll(deltas);
      for (const counter of batch) {
        counter.shared = Math.max(counter.shared + counter.sending, totals.get(counter.window.id) ?? 0);
        counter.sending = 0;
      }
    } catch (err) {
      // Unsent counts go back to wait for the next batch; admissions meanwhile go on from the local count.
      for (const counter of batch) {
        counter.unsynced += counter.sending;
        counter.sending = 0;
      }
      throw err;
    }
  }
}
