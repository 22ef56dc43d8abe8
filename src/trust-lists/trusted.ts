// What a tenant trusts: the certificates of the entities of all its trust lists, by purpose, cached
// for a few seconds because verification asks on every presentation.
import type { KeyChain } from '../key-chains/model.js';
import type { KeyChainService } from '../key-chains/service.js';
import { toPem } from '../platform/crypto/x509.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import type { Executor } from '../platform/db/values.js';
import { StampedCache, tenantKey, tenantPrefix } from '../status-lists/cache.js';
import { anchorsOf, parseCertificate } from './certificates.js';
import { purposeOf, type TrustPurpose } from './lote.js';
import type { EntityInput } from './schemas.js';
import * as store from './store.js';

const TRUSTED_TTL_MS = 5_000;

export class TrustedCertificates {
  /**
   * The certificates a tenant's verifier trusts, for TRUSTED_TTL_MS (a change made here clears the
   * tenant's entry at once; one made on another instance shows within the TTL). /api/cache reports and clears it.
   */
  readonly cache = new StampedCache<{ pems: string[]; until: number }>();

  constructor(
    private readonly db: Executor,
    private readonly keyChains: KeyChainService,
  ) {}

  /**
   * The PEM certificates of the entities of every trust list of the tenant that are trusted for
   * `purpose`: credentials (issuers and status list signers: what a verifier of this tenant trusts)
   * or wallet attestations (wallet providers: what its issuer trusts). Internal entities give their
   * key chain's anchors (see anchorsOf).
   */
  async of(tenantId: string, purpose: TrustPurpose): Promise<string[]> {
    const cached = this.cache.get(tenantKey(tenantId, `anchors:${purpose}`), '');
    // An in-process cache's age: the system clock (see src/platform/ttl-cache.ts).
    if (cached && cached.until > Date.now()) return cached.pems;
    const entities = (await store.listTrustLists(tenantDb(this.db, tenantId)))
      .flatMap((row) => JSON.parse(row.entity_config) as EntityInput[])
      .filter((entity) => purposeOf(entity.serviceType ?? 'issuance') === purpose);
    const chains = entities.some((e) => e.type === 'internal')
      ? new Map((await this.keyChains.list(tenantId)).map((chain) => [chain.id, chain]))
      : new Map<string, KeyChain>();
    const pems = new Set<string>();
    for (const entity of entities) {
      const chain = entity.type === 'internal' ? chains.get(entity.keyChainId) : undefined;
      const certificates = chain ? anchorsOf(chain) : entity.type === 'external' ? entity.certificates.map(parseCertificate) : [];
      for (const certificate of certificates) if (typeof certificate !== 'string') pems.add(toPem([certificate]));
    }
    this.cache.set(tenantKey(tenantId, `anchors:${purpose}`), '', { pems: [...pems], until: Date.now() + TRUSTED_TTL_MS });
    return [...pems];
  }

  /** After any change to the tenant's lists. */
  forget(tenantId: string) {
    this.cache.clear(tenantPrefix(tenantId));
  }
}
