// The signed status list tokens: which stored token is served, when a list is signed again, and the
// re-signing after a key rotation. Every instance serves the token its row holds; this one signs a
// changed list once, however many fetch it at the same time.

import type { KeyChainService } from '../key-chains/service.js';
import type { SigningService } from '../key-chains/signing.js';
import type { Clock } from '../platform/clock.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import { type Executor, fromBool } from '../platform/db/values.js';
import { notFound } from '../platform/http/problem.js';
import type { Metrics } from '../platform/observability/metrics.js';
import { type CachedStatusToken, type Caches, tenantKey } from './cache.js';
import * as store from './store.js';
import { signStatusList } from './token.js';

export interface StatusListPublisherDeps {
  db: Executor;
  keyChains: KeyChainService;
  signing: SigningService;
  caches: Caches;
  metrics: Pick<Metrics, 'statusListSigned'>;
  /** A token's iat, and whether a stored one is still servable. */
  clock: Clock;
  /** The list's uri, and the tenant's aggregation uri: the token names them. */
  uri(tenantId: string, listId: string): string;
  aggregationUri(tenantId: string): string;
}

/** A token and the list version it was signed from. */
interface VersionedToken {
  token: CachedStatusToken;
  version: number;
}

export class StatusListPublisher {
  /** Signings under way on this instance, by list: concurrent fetches of a changed list sign it once. */
  private readonly signings = new Map<string, Promise<VersionedToken>>();

  constructor(private readonly deps: StatusListPublisherDeps) {}

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  private scoped(tenantId: string) {
    return tenantDb(this.deps.db, tenantId);
  }

  /**
   * The token to serve: the stored one while it is unexpired and signed from the list's current
   * version (from the cache when its stamp matches), else one signed now. So every status change
   * committed before the request is in the answer, whatever immediateUpdate says.
   */
  async token(tenantId: string, listId: string): Promise<CachedStatusToken> {
    const scoped = this.scoped(tenantId);
    const meta = await store.findMeta(scoped, listId);
    if (!meta) throw notFound('status list', listId);
    if (!isServable(meta, this.now())) return this.signedAtLeast(tenantId, listId, meta.version);
    const key = tenantKey(tenantId, listId);
    const cached = this.deps.caches.statusList.get(key, String(meta.token_seq));
    if (cached) return cached;
    const stored = await store.findTokens(scoped, listId);
    if (!stored || !hasServableTokens(stored, this.now())) return this.signedAtLeast(tenantId, listId, meta.version);
    return this.remember(tenantId, listId, stored);
  }

  /**
   * A token signed from `version` or later. Concurrent callers share one signing per list on this
   * instance; one that joins a signing begun before its version was written waits for the next.
   */
  async signedAtLeast(tenantId: string, listId: string, version: number): Promise<CachedStatusToken> {
    for (;;) {
      const signed = await this.signing(tenantId, listId);
      if (signed.version >= version) return signed.token;
    }
  }

  private signing(tenantId: string, listId: string): Promise<VersionedToken> {
    const key = tenantKey(tenantId, listId);
    let pending = this.signings.get(key);
    if (!pending) {
      pending = this.signUnlessStored(tenantId, listId).finally(() => this.signings.delete(key));
      this.signings.set(key, pending);
    }
    return pending;
  }

  /** Across instances the row decides: a token another instance stored for the current version is served, not signed again. */
  private async signUnlessStored(tenantId: string, listId: string): Promise<VersionedToken> {
    const row = await store.findList(this.scoped(tenantId), listId);
    if (!row) throw notFound('status list', listId);
    if (hasServableTokens(row, this.now())) return { token: this.remember(tenantId, listId, row), version: row.version };
    return { token: await this.sign(tenantId, row), version: row.version };
  }

  private remember(tenantId: string, listId: string, stored: ServableTokens): CachedStatusToken {
    const token = { jwt: stored.token_jwt, cwt: new Uint8Array(stored.token_cwt), expiresAt: stored.token_expires_at };
    this.deps.caches.statusList.set(tenantKey(tenantId, listId), String(stored.token_seq), token);
    return token;
  }

  /** Signs the list as it is now and stores the token, so that every instance serves it. */
  async regenerate(tenantId: string, listId: string): Promise<CachedStatusToken> {
    const row = await store.findList(this.scoped(tenantId), listId);
    if (!row) throw notFound('status list', listId);
    return this.sign(tenantId, row);
  }

  private async sign(tenantId: string, row: store.StatusListRow): Promise<CachedStatusToken> {
    const listId = row.id;
    const signer = await this.deps.signing.signer(tenantId, { keyChainId: row.key_chain_id, usageType: 'statusList' });
    const iat = Math.floor(this.now() / 1000);
    const exp = iat + row.ttl;
    const started = performance.now();
    const signed = await signStatusList(
      {
        uri: this.deps.uri(tenantId, listId),
        bits: row.bits,
        bitset: row.bitset,
        ttl: row.ttl,
        iat,
        exp,
        ...(fromBool(row.enable_aggregation) && { aggregationUri: this.deps.aggregationUri(tenantId) }),
      },
      signer,
    );
    this.deps.metrics.statusListSigned((performance.now() - started) / 1000);
    const token = { jwt: signed.jwt, cwt: signed.cwt, expiresAt: new Date(exp * 1000).toISOString() };
    const seq = await store.storeTokens(this.scoped(tenantId), listId, {
      version: row.version,
      jwt: signed.jwt,
      cwt: signed.cwt,
      issuedAt: new Date(iat * 1000).toISOString(),
      expiresAt: token.expiresAt,
    });
    if (seq !== undefined) this.deps.caches.statusList.set(tenantKey(tenantId, listId), String(seq), token);
    return token;
  }

  /** After a key rotation: re-signs the tenant's signed lists that the rotated chain signs. */
  async resignFor(tenantId: string, keyChainId: string): Promise<void> {
    const lists = await store.listLists(this.scoped(tenantId));
    let defaultChainId: string | undefined;
    for (const list of lists) {
      if (list.token_seq === 0 || list.token_expires_at === null) continue;
      let chainId = list.key_chain_id;
      if (!chainId) {
        defaultChainId ??= (await this.deps.keyChains.resolve(tenantId, { usageType: 'statusList' })).id;
        chainId = defaultChainId;
      }
      if (chainId === keyChainId) await this.regenerate(tenantId, list.id);
    }
  }
}

type TokenState = Pick<store.StatusListMeta, 'token_seq' | 'token_expires_at' | 'token_version' | 'version'>;
type ServableTokens = store.StoredTokens & { token_jwt: string; token_cwt: Uint8Array; token_expires_at: string };

/** Whether a stored token may be served: it exists, is not about to expire, and was signed from the current bits. */
function isServable(row: TokenState, now: number): boolean {
  if (row.token_seq === 0 || row.token_expires_at === null) return false;
  if (Date.parse(row.token_expires_at) <= now + 1000) return false;
  return row.token_version === row.version;
}

const hasServableTokens = (row: store.StoredTokens, now: number): row is ServableTokens =>
  row.token_jwt !== null && row.token_cwt !== null && isServable(row, now);
