// A wallet-initiated authorization request (no issuer_state: PAR, or the first request of the
// interactive authorization endpoint) is unauthenticated and opens a session, so anyone could open
// sessions without end. Each address may open WALLET_INITIATED_LIMIT_PER_ADDRESS per window at one
// issuer, and an issuer takes WALLET_INITIATED_LIMIT_PER_TENANT per window from all addresses (what
// a botnet of many addresses can still make it keep). Unlike the rate limits, this one is exact
// across instances: each such request is admitted by one conditional upsert in the database, which
// costs little beside the session it opens.

import type { Clock } from '../../platform/clock.js';
import type { Executor } from '../../platform/db/values.js';
import { OAuthError } from '../../platform/http/problem.js';
import { DatabaseWindows, type RequestLimit } from '../../platform/rate-limits/windows.js';

export interface WalletInitiatedLimits {
  perAddress: RequestLimit;
  perTenant: RequestLimit;
}

export class WalletInitiatedLimit {
  private readonly windows: DatabaseWindows;

  constructor(
    db: Executor,
    private readonly limits: WalletInitiatedLimits,
    private readonly clock: Clock,
  ) {
    this.windows = new DatabaseWindows(db);
  }

  /** The longest window this limit counts in (the clean-up keeps windows that long). */
  get windowSeconds(): number {
    return Math.max(this.limits.perAddress.windowSeconds, this.limits.perTenant.windowSeconds);
  }

  /** Counts the request, or refuses it (429 with Retry-After) when the address or the issuer has had its share of this window. */
  async admit(tenantId: string, address: string): Promise<void> {
    await this.admitOne(
      `wallet-initiated-address:${JSON.stringify([tenantId, address])}`,
      this.limits.perAddress,
      'too many wallet-initiated authorization requests from this address',
    );
    await this.admitOne(
      `wallet-initiated-issuer:${JSON.stringify(tenantId)}`,
      this.limits.perTenant,
      'too many wallet-initiated authorization requests to this issuer',
    );
  }

  private async admitOne(key: string, limit: RequestLimit, what: string) {
    const verdict = await this.windows.admitOne(key, limit, this.clock.now().getTime());
    if (verdict.admitted) return;
    const { retryAfter } = verdict;
    throw new OAuthError(429, 'invalid_request', `${what}; retry in ${retryAfter} s`, { 'retry-after': String(retryAfter) });
  }
}
