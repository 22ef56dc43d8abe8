// The one window counter of the service: requests (or failed attempts) counted per key in fixed
// windows, one row of request_windows per key holding the count of its current window, so that every
// instance sharing the database counts into the same row. Exact limits (the wallet-initiated one,
// failed management token attempts) count each request at once in a window opened by the key's
// first request; the rate limiter adds its instances' local counts in batches to windows aligned to
// the epoch (so that all instances name the same window without asking), a later window's count
// replacing the earlier one. Redis (redis-windows.ts) takes the batches instead when REDIS_URL is set.
import { sql } from 'kysely';
import type { Executor } from '../db/values.js';
import { type BatchLimits, deleteInBatches } from '../jobs/batches.js';

export interface RequestLimit {
  requests: number;
  windowSeconds: number;
}

/** A fixed window: the one that contains `now`, aligned to multiples of its length since the epoch. */
export interface Window {
  key: string;
  /** The key with the window's start: names this window of the key (the Redis key counting it). */
  id: string;
  startMs: number;
  endMs: number;
}

export function windowOf(key: string, windowSeconds: number, nowMs: number): Window {
  const lengthMs = windowSeconds * 1000;
  const startMs = Math.floor(nowMs / lengthMs) * lengthMs;
  return { key, id: `${key}@${startMs}`, startMs, endMs: startMs + lengthMs };
}

/** What a batch adds to one window. */
export interface WindowDelta {
  window: Window;
  delta: number;
}

/** Where the counts of all instances meet: the database (below) or Redis (redis-windows.ts). */
export interface SharedWindows {
  /** Adds each delta to its window, all in one round trip; answers each window's total, by window id. */
  addAll(deltas: readonly WindowDelta[]): Promise<Map<string, number>>;
  close(): Promise<void>;
}

/** Seconds until `window` ends, at least 1 (Retry-After and the RateLimit reset say this). */
export const secondsLeft = (window: Window, nowMs: number) => Math.max(1, Math.ceil((window.endMs - nowMs) / 1000));

const startOf = (window: Window) => new Date(window.startMs).toISOString();

export class DatabaseWindows implements SharedWindows {
  constructor(private readonly db: Executor) {}

  /**
   * One upsert for the whole batch: each key's row gets the delta added when it counts the same
   * window, or starts counting the batch's (later) window with it; the statement returns the totals.
   * A row is changed at most once per statement on PostgreSQL, so a batch names each key once.
   */
  async addAll(deltas: readonly WindowDelta[]): Promise<Map<string, number>> {
    const totals = new Map<string, number>();
    const latest = new Map<string, WindowDelta>();
    for (const delta of deltas) {
      const seen = latest.get(delta.window.key);
      if (!seen || seen.window.startMs < delta.window.startMs) latest.set(delta.window.key, delta);
      else if (seen.window.startMs === delta.window.startMs) latest.set(delta.window.key, { ...seen, delta: seen.delta + delta.delta });
    }
    if (latest.size === 0) return totals;
    const rows = [...latest.values()].map(({ window, delta }) => ({ key: window.key, window_start: startOf(window), count: delta }));
    const later = sql`excluded.window_start > request_windows.window_start`;
    const same = sql`excluded.window_start = request_windows.window_start`;
    const counted = await this.db
      .insertInto('request_windows')
      .values(rows)
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          count: sql`case when ${later} then excluded.count when ${same} then request_windows.count + excluded.count else request_windows.count end`,
          window_start: sql`case when ${later} then excluded.window_start else request_windows.window_start end`,
        }),
      )
      .returning(['key', 'count'])
      .execute();
    for (const row of counted) {
      const delta = latest.get(row.key);
      if (delta) totals.set(delta.window.id, Number(row.count));
    }
    return totals;
  }

  /**
   * Counts one request under `key` unless its window has had `limit.requests` already; the window
   * opens at the key's first request (not aligned: an exact limit needs no batching, and a window
   * opened by the first request does not roll over in the middle of a burst). One conditional upsert
   * decides, so parallel requests on any number of instances admit at most the limit. Refused: the
   * seconds until the window ends (one more read, only then).
   */
  async admitOne(key: string, limit: RequestLimit, nowMs: number): Promise<{ admitted: true } | { admitted: false; retryAfter: number }> {
    const now = new Date(nowMs).toISOString();
    const lapsed = this.lapsed(limit.windowSeconds, nowMs);
    const counted = await this.db
      .insertInto('request_windows')
      .values({ key, window_start: now, count: 1 })
      .onConflict((oc) =>
        oc
          .column('key')
          .doUpdateSet({
            count: sql`case when ${lapsed} then 1 else request_windows.count + 1 end`,
            window_start: sql`case when ${lapsed} then ${now} else request_windows.window_start end`,
          })
          .where((eb) => eb.or([lapsed, eb('request_windows.count', '<', limit.requests)])),
      )
      .returning('count')
      .executeTakeFirst();
    if (counted) return { admitted: true };
    const { windowStartMs } = await this.countSince(key, limit.windowSeconds, nowMs);
    return { admitted: false, retryAfter: Math.max(1, Math.ceil((windowStartMs + limit.windowSeconds * 1000 - nowMs) / 1000)) };
  }

  /** Counts one more under `key` in its window opened at its first count (failed attempts: each counted at once). */
  async countOne(key: string, windowSeconds: number, nowMs: number): Promise<void> {
    const now = new Date(nowMs).toISOString();
    const lapsed = this.lapsed(windowSeconds, nowMs);
    await this.db
      .insertInto('request_windows')
      .values({ key, window_start: now, count: 1 })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          count: sql`case when ${lapsed} then 1 else request_windows.count + 1 end`,
          window_start: sql`case when ${lapsed} then ${now} else request_windows.window_start end`,
        }),
      )
      .execute();
  }

  /** What `countOne` counted under `key` in its current window (0, and a window opening now, when none is open). */
  async countSince(key: string, windowSeconds: number, nowMs: number): Promise<{ count: number; windowStartMs: number }> {
    const row = await this.db
      .selectFrom('request_windows')
      .select(['count', 'window_start'])
      .where('key', '=', key)
      .where('window_start', '>=', new Date(nowMs - windowSeconds * 1000).toISOString())
      .executeTakeFirst();
    return row ? { count: Number(row.count), windowStartMs: new Date(row.window_start).getTime() } : { count: 0, windowStartMs: nowMs };
  }

  private lapsed(windowSeconds: number, nowMs: number) {
    return sql<boolean>`request_windows.window_start < ${new Date(nowMs - windowSeconds * 1000).toISOString()}`;
  }

  /**
   * Deletes the rows whose window began more than `longestWindowSeconds` ago, so has ended (the
   * scheduled job 'request-windows-cleanup'): without it, addresses never seen again would pile up.
   */
  // Request windows are elapsed time (rate limits, failed attempts): the system clock by default.
  async purgeEnded(longestWindowSeconds: number, nowMs = Date.now(), limits?: BatchLimits): Promise<number> {
    const startedBefore = new Date(nowMs - longestWindowSeconds * 1000).toISOString();
    return deleteInBatches(async (size) => {
      const result = await this.db
        .deleteFrom('request_windows')
        .where('key', 'in', this.db.selectFrom('request_windows').select('key').where('window_start', '<', startedBefore).limit(size))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    }, limits);
  }

  async close(): Promise<void> {}
}
