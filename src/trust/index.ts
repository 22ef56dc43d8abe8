// Trust: the frameworks that decide whether svc relies on a key (framework.ts), by registry id, and
// the one TrustService that verification, wallet attestation, status checking and external
// authorization servers ask. A tenant's federation settings choose the order in which frameworks
// decide (their mode); a new framework is a folder beside these and a line in TRUST_FRAMEWORKS.
import type { DidKeyResolver } from '../dids/web.js';
import type { Clock } from '../platform/clock.js';
import type { OutboundClient } from '../platform/outbound/client.js';
import type { EtsiTrustedListsSettings } from './etsi-tsl/settings.js';
import { type EtsiLog, EtsiTrustedLists } from './etsi-tsl/source.js';
import { FederationRefused } from './federation/entity-statement.js';
import { federationFramework } from './federation/framework.js';
import { createFederation } from './federation/index.js';
import type { FederationMode, FederationSettings } from './federation/settings.js';
import {
  type AuthorityQuestion,
  type AuthorizationServerKeys,
  type IssuerKeyQuestion,
  type StatusListSignerQuestion,
  type TenantTrust,
  type TrustDecision,
  type TrustFramework,
  TrustRefused,
  type TrustSources,
} from './framework.js';
import { loteFramework } from './lote/index.js';
import { EtsiTrustLists } from './x509/etsi-trust-lists.js';
import { x509Framework } from './x509/index.js';

export const TRUST_FRAMEWORKS: ReadonlyMap<string, TrustFramework> = new Map([
  [loteFramework.id, loteFramework],
  [federationFramework.id, federationFramework],
  [x509Framework.id, x509Framework],
]);

/** Which frameworks decide whose key signs a credential, in the order asked, by federation mode (no settings: lote-only). */
export const MODE_ORDER: ReadonlyMap<FederationMode, readonly string[]> = new Map([
  ['hybrid', ['federation', 'lote']],
  ['federation-only', ['federation']],
  ['lote-only', ['lote']],
]);

function framework(id: string): TrustFramework {
  const found = TRUST_FRAMEWORKS.get(id);
  if (!found) throw new Error(`no trust framework ${id}`);
  return found;
}

/** The frameworks the tenant's mode asks, in order. */
export function frameworksInMode(trust: Pick<TenantTrust, 'federation'>): TrustFramework[] {
  return (MODE_ORDER.get(trust.federation?.mode ?? 'lote-only') ?? []).map(framework);
}

/**
 * The key that verifies a credential's issuer signature, from the first framework of the tenant's
 * mode that trusts the issuer; refused with each framework's reason when none does. A query that
 * names federation anchors needs federation settings, and a mode that asks the federation. In hybrid
 * mode the federation is skipped when no anchor applies.
 */
export async function issuerKey(trust: TenantTrust, question: Omit<IssuerKeyQuestion, 'anchorIds'>) {
  const { federation } = trust;
  const anchorIds = question.queryAnchors ?? federation?.trustAnchors.map((anchor) => anchor.entityId) ?? [];
  if (question.queryAnchors && !federation)
    throw new TrustRefused(
      'untrusted issuer: the query trusts OpenID Federation anchors, and the tenant has no federation settings (federation in PUT /api/trust-config)',
    );
  let frameworks = frameworksInMode(trust);
  if (question.queryAnchors && !frameworks.some((f) => f.id === 'federation'))
    throw new TrustRefused(
      `untrusted issuer: the query trusts OpenID Federation anchors, and the tenant federation mode is ${federation?.mode}`,
    );
  if (anchorIds.length === 0 && frameworks.length > 1) frameworks = frameworks.filter((f) => f.id !== 'federation');
  const refusals: { label: string; reason: string }[] = [];
  for (const asked of frameworks) {
    if (!asked.issuerKey) continue;
    try {
      return await asked.issuerKey(trust, { ...question, anchorIds });
    } catch (err) {
      // The first framework's refusal must be a TrustRefused to ask the next; any error of a later one is its reason.
      if (refusals.length === 0 && !(err instanceof TrustRefused)) throw err;
      refusals.push({ label: asked.label, reason: err instanceof Error ? err.message : String(err) });
    }
  }
  const [first, ...others] = refusals;
  throw new TrustRefused([first?.reason, ...others.map((other) => `${other.label}: ${other.reason}`)].join('; '));
}

/** Whether some framework trusts the signer of a credential's status list token (none: undefined). */
export async function statusListSigner(trust: TenantTrust, question: StatusListSignerQuestion): Promise<TrustDecision<true> | undefined> {
  for (const asked of TRUST_FRAMEWORKS.values()) {
    const decision = await asked.statusListSigner?.(trust, question);
    if (decision) return decision;
  }
  return undefined;
}

/**
 * The certificates an X.509 issuer chain (an mso_mdoc document signer chain) must lead to, from every
 * framework that judges such chains (LoTE; a federation has nothing to say for mdoc), whatever the mode.
 */
export async function issuerChainAnchors(trust: TenantTrust): Promise<string[]> {
  const anchors: string[] = [];
  for (const asked of TRUST_FRAMEWORKS.values())
    if (asked.issuerChainAnchors) anchors.push(...(await asked.issuerChainAnchors(trust)).value);
  return anchors;
}

/** The wallet providers a tenant's settings name, each with its PEM certificates. */
export interface WalletProviderSettings {
  walletProviders: readonly { certificates: readonly string[] }[];
}

export interface TrustNeeds {
  /** Every entity statement and named trusted list is read through it. */
  outbound: OutboundClient;
  /** The tenant's trust lists' certificates, by purpose (the trust-lists feature). */
  listedCertificates: TrustSources['listedCertificates'];
  /** The tenant's federation settings (its trust settings); null when it takes part in none. */
  federationSettingsOf: (tenantId: string) => Promise<FederationSettings | null>;
  /** FEDERATION_RESOLUTION_DEADLINE_MS. */
  resolutionDeadlineMs: number;
  /** What time it is for federation statements and cached decisions. */
  clock: Clock;
  /** did:web resolution for W3C VC issuers (through the outbound client); absent: none. */
  dids?: DidKeyResolver;
  /** The tenant's EU trusted lists settings (its trust settings); null when it follows none. */
  etsiSettingsOf?: (tenantId: string) => Promise<EtsiTrustedListsSettings | null>;
  /** Where failed refreshes of EU trusted lists are told. */
  log?: EtsiLog;
}

/** The one place that answers "is this trusted" for a tenant, with the caches of the frameworks' sources. */
export class TrustService {
  private readonly federation;
  private readonly sources: TrustSources;
  private readonly dids?: DidKeyResolver;
  /** The tenants' EU trusted lists (ETSI TS 119 612): an extra source of the LoTE framework's certificates. */
  readonly etsiLists: EtsiTrustedLists;

  constructor(needs: TrustNeeds) {
    this.dids = needs.dids;
    this.federation = createFederation({
      outbound: needs.outbound,
      settingsOf: needs.federationSettingsOf,
      resolutionDeadlineMs: needs.resolutionDeadlineMs,
      clock: needs.clock,
    }).trust;
    const etsi = new EtsiTrustedLists({
      outbound: needs.outbound,
      settingsOf: needs.etsiSettingsOf ?? (async () => null),
      clock: needs.clock,
      log: needs.log ?? { warn: () => {} },
    });
    this.etsiLists = etsi;
    // A list a query names is read from a verified copy when one is kept (the unsigned fetch otherwise).
    const namedLists = new EtsiTrustLists(needs.outbound, (url) => etsi.verifiedCertificates(url));
    this.sources = {
      // The LoTE framework's certificates: the tenant's own trust lists and the services of its EU trusted lists.
      listedCertificates: async (tenantId, purpose) => {
        const [own, listed] = await Promise.all([needs.listedCertificates(tenantId, purpose), etsi.certificates(tenantId, purpose)]);
        return listed.length ? [...new Set([...own, ...listed])] : own;
      },
      listCertificates: (url) => namedLists.certificates(url),
    };
  }

  /** What the tenant trusts for credentials, gathered for one presentation. */
  async tenantTrust(tenantId: string): Promise<TenantTrust> {
    const [trustedCertificates, federation] = await Promise.all([
      this.sources.listedCertificates(tenantId, 'credentials'),
      this.federation.trustFor(tenantId),
    ]);
    return { trustedCertificates, ...(federation && { federation }), ...(this.dids && { dids: this.dids }) };
  }

  /** The PEM certificates of the tenant's LoTE trust lists trusted for credentials. */
  trustedCertificates(tenantId: string): Promise<string[]> {
    return this.sources.listedCertificates(tenantId, 'credentials');
  }

  /**
   * The certificates that anchor the wallet providers whose wallet (client) and key attestations the
   * tenant accepts: those its settings (at hand, from the issuer) name, then those of every framework
   * that lists some (read at each call: a trust list changed here counts at once), each once.
   */
  async walletProviders(tenantId: string, settings: WalletProviderSettings): Promise<string[]> {
    const anchors = settings.walletProviders.flatMap((provider) => provider.certificates);
    for (const asked of TRUST_FRAMEWORKS.values())
      if (asked.walletProviders) anchors.push(...(await asked.walletProviders(this.sources, tenantId)).value);
    return [...new Set(anchors)];
  }

  /**
   * The keys of an external authorization server as the tenant's federation settings (at hand, from
   * the issuer) decide: through its trust chain (federation-only, or hybrid with anchors); undefined
   * when its own RFC 8414 metadata decides (lote-only, no settings, or hybrid when it does not resolve).
   */
  async authorizationServerKeys(
    tenantId: string,
    settings: FederationSettings | null | undefined,
    server: string,
  ): Promise<TrustDecision<AuthorizationServerKeys> | undefined> {
    if (!settings || settings.mode === 'lote-only' || settings.trustAnchors.length === 0) return undefined;
    const trust = { federation: this.federation.trustWith(tenantId, settings) };
    for (const asked of frameworksInMode(trust)) {
      if (!asked.authorizationServerKeys) continue;
      try {
        return await asked.authorizationServerKeys(trust, server);
      } catch (err) {
        if (settings.mode === 'federation-only' || !isRefusal(err)) throw err;
      }
    }
    return undefined;
  }

  /** Which value of a DCQL trusted_authorities entry the credential matches, by the framework of its type. */
  async matchAuthority(type: string, values: string[], question: AuthorityQuestion) {
    for (const asked of TRUST_FRAMEWORKS.values())
      if (asked.matchAuthority && asked.authorityTypes?.includes(type)) return asked.matchAuthority(this.sources, type, values, question);
    return { unread: [] };
  }

  /** An entity's trust chain to `anchorId` under the tenant's federation settings (at hand); throws FederationRefused. */
  resolveFederation(tenantId: string, settings: FederationSettings, entityId: string, anchorId: string) {
    return this.federation.trustWith(tenantId, settings).resolve(entityId, [anchorId]);
  }

  /** An entity's own configuration (OpenID Federation), read and checked as a trust chain's first statement is; throws FederationRefused. */
  entityConfiguration(entityId: string) {
    return this.federation.entityConfiguration(entityId);
  }

  /** A tenant's trust settings changed: its kept decisions are forgotten. */
  forget(tenantId: string) {
    this.federation.forget(tenantId);
    this.etsiLists.forget(tenantId);
  }
}

/** A framework's refusal: its reason, not a fault. */
const isRefusal = (err: unknown) => err instanceof TrustRefused || err instanceof FederationRefused;

export type { StatusListSignerQuestion, TenantTrust, TrustDecision, TrustFramework } from './framework.js';
export { TrustRefused } from './framework.js';
