// The federation trust a tenant places in issuers, as the verifier uses it: the mode of its
// federation settings, its trust anchors, and the resolver that decides (cached per tenant).
import type { JWK } from 'jose';
import { isJsonObject } from '../../platform/json.js';
import { TtlCache } from '../../platform/ttl-cache.js';
import { FederationRefused } from './entity-statement.js';
import type { ResolvedTrust, TrustAnchorRef, TrustChainResolver } from './resolver.js';
import type { FederationMode, FederationSettings } from './settings.js';
import type { TrustMarkCheck } from './trust-mark-check.js';

export interface FederationTrust {
  mode: FederationMode;
  /** The anchors of the settings, used when a credential query names none. */
  trustAnchors: TrustAnchorRef[];
  /** An entity's trust chain to one of `anchorIds` (default: the settings' anchors), with its resolved metadata. Throws FederationRefused. */
  resolve(entityId: string, anchorIds?: string[]): Promise<ResolvedTrust>;
  /**
   * The key that signed an issuer's credential: `kid` among the jwks of the openid_credential_issuer
   * metadata the issuer's trust chain to one of `anchorIds` resolves to. Throws FederationRefused.
   */
  issuerKey(issuer: string, kid: string, anchorIds: string[]): Promise<{ jwk: JWK; trust: ResolvedTrust }>;
}

/** Settings are read at most this often per tenant (every presentation needs them); a change made here is seen at once. */
const SETTINGS_CACHE_MS = 1_000;

export class FederationTrustSource {
  private readonly settings = new TtlCache<FederationSettings | null>(SETTINGS_CACHE_MS);

  constructor(
    private readonly resolver: TrustChainResolver,
    private readonly settingsOf: (tenantId: string) => Promise<FederationSettings | null>,
    /** Checks the trust marks anchors require; without it, a requirement refuses every chain to that anchor. */
    private readonly trustMarks?: TrustMarkCheck,
  ) {}

  /** Undefined when the tenant takes no part in a federation. */
  async trustFor(tenantId: string): Promise<FederationTrust | undefined> {
    const settings = await this.settings.get(tenantId, () => this.settingsOf(tenantId));
    return settings ? this.trustWith(tenantId, settings) : undefined;
  }

  /** The trust of a tenant whose settings are at hand. */
  trustWith(tenantId: string, settings: FederationSettings): FederationTrust {
    const configured = new Map(settings.trustAnchors.map((anchor) => [anchor.entityId, anchor]));
    const resolve = async (entityId: string, anchorIds = settings.trustAnchors.map((anchor) => anchor.entityId)) => {
      // An anchor named by a query is read where the settings say, when they list it.
      const anchors = anchorIds.map((id) => configured.get(id) ?? { entityId: id });
      const trust = await this.resolver.resolve(tenantId, entityId, anchors, settings.cacheTtlSeconds);
      // The trust marks the settings require of entities under the anchor the chain ends at.
      const anchor = configured.get(trust.anchor);
      if (anchor?.requiredTrustMarks?.length) {
        // A mark issuer's own chain to the same anchor, without requirements of its own (no recursion).
        const issuerTrust = (issuer: string) => this.resolver.resolve(tenantId, issuer, [anchor], settings.cacheTtlSeconds);
        if (!this.trustMarks) throw new FederationRefused('trust marks', 'required, and this resolver checks none');
        await this.trustMarks.check(trust, anchor.requiredTrustMarks, issuerTrust);
      }
      return trust;
    };
    return {
      mode: settings.mode,
      trustAnchors: settings.trustAnchors,
      resolve,
      issuerKey: async (issuer, kid, anchorIds) => {
        const trust = await resolve(issuer, anchorIds);
        const issuerMetadata = trust.metadata.openid_credential_issuer;
        const jwks = isJsonObject(issuerMetadata) ? issuerMetadata.jwks : undefined;
        const keys = isJsonObject(jwks) && Array.isArray(jwks.keys) ? (jwks.keys as JWK[]) : [];
        const jwk = keys.find((key) => key.kid === kid);
        if (!jwk)
          throw new FederationRefused(
            'credential key',
            `kid ${kid} is not a key of the issuer's resolved openid_credential_issuer metadata`,
          );
        return { jwk, trust };
      },
    };
  }

  /** An entity's own configuration, read and checked as the resolver reads a chain's first statement. */
  entityConfiguration(entityId: string) {
    return this.resolver.entityConfigurationOf(entityId);
  }

  /** A tenant's settings changed: its kept decisions are forgotten (anchors or lifetimes may differ). */
  forget(tenantId: string) {
    this.settings.forget(tenantId);
    this.resolver.forget(tenantId);
  }
}
