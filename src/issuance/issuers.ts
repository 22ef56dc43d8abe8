// A tenant as the credential issuer that wallets talk to: that it exists, its URLs and its issuer
// settings. Nearly every wallet request needs all three, so they are kept per instance for
// ISSUER_CACHE_MS: a change made on another instance is seen within that bound, one made here at once.
import { TtlCache } from '../platform/ttl-cache.js';
import { notFoundIssuer } from './errors.js';
import type { IssuerSettings, IssuerSettingsService } from './settings/service.js';
import { type IssuerUrls, issuerUrls } from './urls.js';

export const ISSUER_CACHE_MS = 1_000;

export interface Issuer {
  tenantId: string;
  urls: IssuerUrls;
  settings: IssuerSettings;
  /**
   * The PEM trust anchors of the wallet providers whose wallet (client) and key attestations this
   * issuer accepts: those of the settings' walletProviders and the walletIssuance entities of the
   * tenant's trust lists (read at each call: a trust list changed here counts at once).
   */
  walletProviderAnchors(): Promise<string[]>;
}

/** The wallet provider anchors a tenant lists in its trust lists. */
export type TrustedWalletProviders = (tenantId: string) => Promise<string[]>;

export class IssuerDirectory {
  private readonly cache = new TtlCache<Issuer>(ISSUER_CACHE_MS);

  constructor(
    readonly publicUrl: string,
    private readonly tenantExists: (tenantId: string) => Promise<boolean>,
    private readonly settings: IssuerSettingsService,
    private readonly listedWalletProviders: TrustedWalletProviders,
  ) {
    settings.onChange((tenantId) => this.cache.forget(tenantId));
  }

  /** The issuer of a tenant; 404 invalid_request when there is no such tenant (not cached: it may be created any moment). */
  get(tenantId: string): Promise<Issuer> {
    return this.cache.get(tenantId, () => this.load(tenantId));
  }

  urls(tenantId: string): IssuerUrls {
    return issuerUrls(this.publicUrl, tenantId);
  }

  private async load(tenantId: string): Promise<Issuer> {
    if (!(await this.tenantExists(tenantId))) throw notFoundIssuer(tenantId);
    const settings = await this.settings.get(tenantId);
    const configured = settings.walletProviders.flatMap((provider) => provider.certificates);
    const walletProviderAnchors = async () => [...new Set([...configured, ...(await this.listedWalletProviders(tenantId))])];
    return { tenantId, urls: this.urls(tenantId), settings, walletProviderAnchors };
  }
}
