// The shared windows in Redis (REDIS_URL): the same fixed windows as in the database, one Redis key
// per key and window, each batch one MULTI of INCRBY and PEXPIREAT (the window's end, plus a second
// for clocks that differ a little) per window: one round trip, and Redis drops ended windows itself.
// The redis package is loaded only here, and this module only when REDIS_URL is set.
import { createClient } from 'redis';
import type { SharedWindows, WindowDelta } from './windows.js';

const EXPIRY_GRACE_MS = 1000;

export async function connectRedisWindows(url: string, prefix: string): Promise<SharedWindows> {
  const client = createClient({ url });
  // Without a listener, a lost connection would crash the process; the client reconnects by itself,
  // and meanwhile each failed batch is reported by the limiter.
  client.on('error', () => {});
  await client.connect();
  return {
    async addAll(deltas: readonly WindowDelta[]) {
      const totals = new Map<string, number>();
      if (deltas.length === 0) return totals;
      const multi = client.multi();
      for (const { window, delta } of deltas) {
        const key = prefix + window.id;
        multi.incrBy(key, delta).pExpireAt(key, window.endMs + EXPIRY_GRACE_MS);
      }
      const replies = await multi.exec();
      deltas.forEach(({ window }, i) => {
        totals.set(window.id, Number(replies[i * 2]));
      });
      return totals;
    },
    async close() {
      await client.close();
    },
  };
}
