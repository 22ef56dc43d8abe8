// A wallet-initiated authorization request (no issuer_state: PAR, or the first request of the
// interactive authorization endpoint) is unauthenticated and opens a session, so anyone could open
// sessions without end. Each address may open WALLET_INITIATED_LIMIT_PER_ADDRESS per window at one
// issuer, and an issuer takes WALLET_INITIATED_LIMIT_PER_TENANT per window from all addresses (what
// a botnet of many addresses can still make it keep), counted in the database across instances.

import type { Executor } from '../../platform/db/values.js';
import { type RequestLimit, RequestLimits } from '../../platform/http/request-limits.js';

/** The windows of this limit among the others of request_windows. */
const KEY_PREFIX = 'wallet-initiated-';

export interface WalletInitiatedLimits {
  perAddress: RequestLimit;
  perTenant: RequestLimit;
}

export class WalletInitiatedLimit {
  private readonly windows: RequestLimits;

  constructor(
    db: Executor,
    private readonly limits: WalletInitiatedLimits,
  ) {
    this.windows = new RequestLimits(db);
  }

  /**
   * Drops the windows that have passed (the scheduled job 'request-windows-cleanup'): one row is kept
   * per address that sent a request, so without this, addresses never seen again would pile up.
   */
  purgeLapsed(): Promise<void> {
    const { perAddress, perTenant } = this.limits;
    return this.windows.purgeLapsed(KEY_PREFIX, Math.max(perAddress.windowSeconds, perTenant.windowSeconds));
  }

  /** Counts the request, or refuses it (429 with Retry-After) when the address or the issuer has had its share of this window. */
  async admit(tenantId: string, address: string): Promise<void> {
    await this.windows.admit(
      `${KEY_PREFIX}address:${JSON.stringify([tenantId, address])}`,
      this.limits.perAddress,
      'too many wallet-initiated authorization requests from this address',
    );
    await this.windows.admit(
      `${KEY_PREFIX}issuer:${JSON.stringify(tenantId)}`,
      this.limits.perTenant,
      'too many wallet-initiated authorization requests to this issuer',
    );
  }
}
