import { sql } from 'kysely';
import type { Executor } from '../platform/db/values.js';

/** Adds one failure to `key`'s window (starting a new window when the old one has passed); returns the count. */
export async function countFailure(db: Executor, key: string, now: Date, windowSeconds: number): Promise<number> {
  const nowIso = now.toISOString();
  const windowOpen = new Date(now.getTime() - windowSeconds * 1000).toISOString();
  const expired = sql<boolean>`auth_failures.window_start < ${windowOpen}`;
  const row = await db
    .insertInto('auth_failures')
    .values({ key, window_start: nowIso, count: 1 })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        count: sql`case when ${expired} then 1 else auth_failures.count + 1 end`,
        window_start: sql`case when ${expired} then ${nowIso} else auth_failures.window_start end`,
      }),
    )
    .returning('count')
    .executeTakeFirstOrThrow();
  return row.count;
}

export async function failuresInWindow(db: Executor, key: string, now: Date, windowSeconds: number) {
  const windowOpen = new Date(now.getTime() - windowSeconds * 1000).toISOString();
  const row = await db
    .selectFrom('auth_failures')
    .select(['count', 'window_start'])
    .where('key', '=', key)
    .where('window_start', '>=', windowOpen)
    .executeTakeFirst();
  return row ?? { count: 0, window_start: now.toISOString() };
}
