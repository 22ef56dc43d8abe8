// A small per-instance cache for values that other instances may change: each entry lives at most
// `ttlMs`, so a change made elsewhere is seen within that bound; a change made on this instance calls
// `forget` and is seen at once. Concurrent misses for one key share a single load. Bounded in size,
// least recently loaded first out. A failed load is forgotten at once, or, with `failureTtlMs`, kept
// that long (for what a request can make the service fetch again and again from a failing server).

export class TtlCache<V> {
  private readonly entries = new Map<string, { until: number; value: Promise<V> }>();

  private readonly maxEntries: number;
  private readonly failureTtlMs: number;

  constructor(
    private readonly ttlMs: number,
    options: { maxEntries?: number; failureTtlMs?: number } = {},
  ) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.failureTtlMs = options.failureTtlMs ?? 0;
  }

  get(key: string, load: () => Promise<V>): Promise<V> {
    // An in-process cache's freshness is how long ago this instance filled it (elapsed time), so it
    // runs on the system clock, not the injected one; so do the services' own small caches.
    const now = Date.now();
    const entry = this.entries.get(key);
    if (entry && entry.until > now) return entry.value;
    const value = load();
    this.entries.delete(key);
    this.entries.set(key, { until: now + this.ttlMs, value });
    value.catch(() => {
      const entry = this.entries.get(key);
      if (entry?.value !== value) return;
      if (this.failureTtlMs > 0) entry.until = Math.min(entry.until, Date.now() + this.failureTtlMs);
      else this.entries.delete(key);
    });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    return value;
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  forgetAll(): void {
    this.entries.clear();
  }

  /** Forgets every key that starts with `prefix`. */
  forgetPrefix(prefix: string): void {
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}
