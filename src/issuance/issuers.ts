// A tenant as the credential issuer that wallets talk to: that it exists, its URLs and its issuer
// settings. Nearly every wallet request needs all three, so each instance keeps them until they
// change: a change (settings saved, tenant deleted) is announced on the event bus, which reaches every
// instance (PostgreSQL's NOTIFY, sent when the change commits), and forgotten where it arrives.
// ISSUER_DIRECTORY_CACHE_MS only bounds how long a copy could outlive a lost event.
import type { Executor } from '../platform/db/values.js';
import { EVENTS_MISSED_TOPIC, type EventBus, onTenantEvent } from '../platform/events/bus.js';
import { TtlCache } from '../platform/ttl-cache.js';
import { notFoundIssuer } from './errors.js';
import type { IssuerSettings, IssuerSettingsService } from './settings/service.js';
import { type IssuerUrls, issuerUrls } from './urls.js';

/** How long derived views of an issuer (its metadata) are kept: they depend on more than the issuer's own changes. */
export const ISSUER_CACHE_MS = 1_000;
/** How long an instance keeps an issuer it read, unless a change event makes it forget sooner. */
export const ISSUER_DIRECTORY_CACHE_MS = 10 * 60_000;
/** Announces on the bus that a tenant's issuer changed (its settings, or the tenant is gone); payload { tenantId }. */
const ISSUER_CHANGED_TOPIC = 'issuers:changed';

/** Tells every instance's IssuerDirectory that the tenant's issuer changed; sent with `db`'s transaction, when it commits. */
export async function announceIssuerChange(bus: EventBus, db: Executor, tenantId: string): Promise<void> {
  await bus.publish(db, ISSUER_CHANGED_TOPIC, { tenantId });
}

export interface Issuer {
  tenantId: string;
  urls: IssuerUrls;
  settings: IssuerSettings;
  /**
   * The PEM trust anchors of the wallet providers whose wallet (client) and key attestations this
   * issuer accepts, as the trust service answers them for these settings (TrustService.walletProviders).
   */
  walletProviderAnchors(): Promise<string[]>;
}

/** The wallet provider anchors of a tenant: those its settings name and those of its trust lists (TrustService.walletProviders). */
export type WalletProviders = (tenantId: string, settings: IssuerSettings) => Promise<string[]>;

export class IssuerDirectory {
  private readonly cache = new TtlCache<Issuer>(ISSUER_DIRECTORY_CACHE_MS);

  constructor(
    readonly publicUrl: string,
    private readonly tenantExists: (tenantId: string) => Promise<boolean>,
    private readonly settings: IssuerSettingsService,
    private readonly walletProviders: WalletProviders,
    bus: EventBus,
  ) {
    // Forgotten here at once, and again when the change's event arrives (after its commit, so a
    // request that read the old row meanwhile does not keep it).
    settings.onChange((tenantId) => this.cache.forget(tenantId));
    onTenantEvent(bus, ISSUER_CHANGED_TOPIC, (tenantId) => this.cache.forget(tenantId));
    bus.subscribe(EVENTS_MISSED_TOPIC, () => this.cache.forgetAll());
  }

  /** The issuer of a tenant; 404 invalid_request when there is no such tenant (not cached: it may be created any moment). */
  get(tenantId: string): Promise<Issuer> {
    return this.cache.get(tenantId, () => this.load(tenantId));
  }

  /** Forgets the tenant's issuer on this instance (others hear of the change through announceIssuerChange). */
  forget(tenantId: string) {
    this.cache.forget(tenantId);
  }

  urls(tenantId: string): IssuerUrls {
    return issuerUrls(this.publicUrl, tenantId);
  }

  private async load(tenantId: string): Promise<Issuer> {
    if (!(await this.tenantExists(tenantId))) throw notFoundIssuer(tenantId);
    const settings = await this.settings.get(tenantId);
    const walletProviderAnchors = () => this.walletProviders(tenantId, settings);
    return { tenantId, urls: this.urls(tenantId), settings, walletProviderAnchors };
  }
}
