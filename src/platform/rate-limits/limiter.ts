// Rate limits counted locally and shared in batches. A round trip to the shared store per request
// would cost more than the requests it guards, so each instance counts what it admits in memory and
// adds those counts to the shared windows (database or Redis) in one statement per batch: every
// SYNC_INTERVAL_MS while a key has unsynced counts, and at once when a key nears its limit.
//
// A request is admitted while (the shared total at the last sync + what this instance admitted since)
// stays below the limit. On one instance that is exact: the shared total holds only its own counts.
// With N instances, each may admit, before it hears of the others' counts, what it admits between
// two of its syncs; near the limit every admission is synced at once, so the overshoot of one window
// is at most what the other N-1 instances admit in one sync interval (250 ms) plus one round trip.
import { type SharedWindows, secondsLeft, type Window, type WindowDelta, windowOf } from './windows.js';

/** How long admitted requests may stay counted only locally. */
export const SYNC_INTERVAL_MS = 250;
/** Below this share of the limit left (as seen locally), each admission is synced at once. */
const NEAR_LIMIT_SHARE = 0.1;

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
  private syncing: Promise<void> | undefined;
  private syncAgain = false;

  constructor(
    private readonly shared: SharedWindows,
    private readonly onSyncFailure: (err: unknown) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request under `key` if the window has room. Decided in memory: never waits for the store. */
  admit(key: string, limit: Limit): Verdict {
    const nowMs = this.now();
    const counter = this.counterOf(key, limit.windowSeconds, nowMs);
    const used = counter.shared + counter.sending + counter.unsynced;
    const resetSeconds = secondsLeft(counter.window, nowMs);
    if (used >= limit.requests) return { admitted: false, remaining: 0, resetSeconds };
    counter.unsynced++;
    const remaining = limit.requests - used - 1;
    this.scheduleSync(remaining < Math.max(1, limit.requests * NEAR_LIMIT_SHARE));
    return { admitted: true, remaining, resetSeconds };
  }

  /** Sends every unsynced count now (tests and shutdown). */
  async flush(): Promise<void> {
    while (this.syncing) await this.syncing;
    await this.sync();
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush().catch(this.onSyncFailure);
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

  private scheduleSync(now: boolean) {
    if (now) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      this.startSync();
      return;
    }
    if (this.timer || this.syncing) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.startSync();
    }, SYNC_INTERVAL_MS);
    this.timer.unref();
  }

  /** One batch at a time; admissions during a batch go into the next, started when this one ends. */
  private startSync() {
    if (this.syncing) {
      this.syncAgain = true;
      return;
    }
    this.syncing = this.sync()
      .catch(this.onSyncFailure)
      .finally(() => {
        this.syncing = undefined;
        if (this.syncAgain) {
          this.syncAgain = false;
          this.startSync();
        } else if (this.hasUnsynced()) this.scheduleSync(false);
      });
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
