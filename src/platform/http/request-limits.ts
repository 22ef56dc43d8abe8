// Limits on requests that make the service keep something (a session, say), counted per key in
// fixed windows in the database, so that they hold however many instances share it. A request is
// admitted by one conditional upsert: its key's row counts it while the window has room (or starts a
// new window when the old one has passed), and a request the row did not count is refused, so any
// number of parallel requests admit at most `requests` per window.
import { sql } from 'kysely';
import type { Executor } from '../db/values.js';
import { OAuthError } from './problem.js';

export interface RequestLimit {
  requests: number;
  windowSeconds: number;
}

export class RequestLimits {
  constructor(private readonly db: Executor) {}

  /** Deletes the windows of keys starting with `prefix` that began more than `windowSeconds` ago (they count nothing any more). */
  async purgeLapsed(prefix: string, windowSeconds: number): Promise<void> {
    const windowOpen = new Date(Date.now() - windowSeconds * 1000).toISOString();
    await this.db.deleteFrom('request_windows').where('key', 'like', `${prefix}%`).where('window_start', '<', windowOpen).execute();
  }

  /** Counts the request under `key`; past the limit, a 429 (OAuth error shape) with Retry-After and `what` saying which limit. */
  async admit(key: string, limit: RequestLimit, what: string): Promise<void> {
    const now = new Date();
    const windowOpen = new Date(now.getTime() - limit.windowSeconds * 1000).toISOString();
    const lapsed = sql<boolean>`request_windows.window_start < ${windowOpen}`;
    const counted = await this.db
      .insertInto('request_windows')
      .values({ key, window_start: now.toISOString(), count: 1 })
      .onConflict((oc) =>
        oc
          .column('key')
          .doUpdateSet({
            count: sql`case when ${lapsed} then 1 else request_windows.count + 1 end`,
            window_start: sql`case when ${lapsed} then ${now.toISOString()} else request_windows.window_start end`,
          })
          .where((eb) => eb.or([lapsed, eb('request_windows.count', '<', limit.requests)])),
      )
      .returning('count')
      .executeTakeFirst();
    if (counted) return;
    // Refused: the row is this window's; read only to say when it ends.
    const row = await this.db.selectFrom('request_windows').select('window_start').where('key', '=', key).executeTakeFirst();
    throw tooManyRequests(what, String(row?.window_start ?? now.toISOString()), limit.windowSeconds, now);
  }
}

/** 429 (OAuth error shape) saying `what`, with Retry-After: the seconds until the window opened at `windowStart` ends. */
export function tooManyRequests(what: string, windowStart: string, windowSeconds: number, now: Date): OAuthError {
  const retryAfter = Math.max(1, Math.ceil((Date.parse(windowStart) + windowSeconds * 1000 - now.getTime()) / 1000));
  return new OAuthError(429, 'invalid_request', `${what}; retry in ${retryAfter} s`, { 'retry-after': String(retryAfter) });
}
