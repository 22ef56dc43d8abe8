// In-memory caches of signed artefacts, safe across instances: every entry carries the stamp of what
// it was made from (a status list's token sequence number, a trust list's version), and is served
// only while the database still holds that stamp. A change on any instance changes the stamp.

export interface CacheStats {
  entries: number;
  hits: number;
  misses: number;
  maxEntries: number;
}

export class StampedCache<V> {
  private readonly entries = new Map<string, { stamp: string; value: V }>();
  private hits = 0;
  private misses = 0;

  constructor(private readonly maxEntries = 10_000) {}

  /** The value cached under `key`, if it was made from `stamp`. */
  get(key: string, stamp: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.stamp === stamp) {
      this.hits++;
      // Map order is insertion order: re-inserting keeps the most recently used last.
      this.entries.delete(key);
      this.entries.set(key, entry);
      return entry.value;
    }
    this.misses++;
    if (entry) this.entries.delete(key);
    return undefined;
  }

  set(key: string, stamp: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { stamp, value });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  /** Removes every entry, or those whose key starts with `prefix` (for example one tenant's). */
  clear(prefix?: string): number {
    if (prefix === undefined) {
      const size = this.entries.size;
      this.entries.clear();
      return size;
    }
    let removed = 0;
    for (const key of [...this.entries.keys()]) {
      if (key.startsWith(prefix)) {
        this.entries.delete(key);
        removed++;
      }
    }
    return removed;
  }

  size(prefix?: string): number {
    if (prefix === undefined) return this.entries.size;
    let count = 0;
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) count++;
    return count;
  }

  stats(prefix?: string): CacheStats {
    return { entries: this.size(prefix), hits: this.hits, misses: this.misses, maxEntries: this.maxEntries };
  }
}

/** A signed status list token in both forms. */
export interface CachedStatusToken {
  jwt: string;
  cwt: Uint8Array;
  expiresAt: string;
}

/**
 * A status list token this instance fetched and verified as a verifier (filled by the verification
 * feature). Not stamped (it comes from elsewhere): kept until `until`, the earlier of its exp and ttl.
 */
export interface FetchedStatusList {
  bits: number;
  /** The decompressed list. */
  list: Uint8Array;
  /** The signer's chain, checked again against the tenant's trust anchors on every use. */
  x5c: string[];
  /** Milliseconds since the epoch. */
  until: number;
}

/** The status list caches behind /api/cache (the trust list cache is the trust-list feature's own). */
export class Caches {
  readonly statusList = new StampedCache<CachedStatusToken>();
  /** Cleared with the status list cache. */
  readonly fetchedStatusList = new StampedCache<FetchedStatusList>(1_000);
}

/** Cache keys start with the tenant, so that one tenant's entries can be cleared alone. */
export const tenantKey = (tenantId: string, id: string) => `${tenantId}\u0000${id}`;
export const tenantPrefix = (tenantId: string) => `${tenantId}\u0000`;
