// The OpenID Federation trust framework: trust chain resolution for the verifier, behind the tenant's federation
// settings (kept in the issuer settings). The issuer's entity configuration is served with the other
// issuer metadata (issuance/metadata/routes.ts).
import type { Clock } from '../../platform/clock.js';
import type { OutboundClient } from '../../platform/outbound/client.js';
import { TrustChainResolver } from './resolver.js';
import type { FederationSettings } from './settings.js';
import { FederationTrustSource } from './trust.js';
import { TrustMarkCheck } from './trust-mark-check.js';

export interface FederationNeeds {
  /** Every entity statement is read through it. */
  outbound: OutboundClient;
  /** The tenant's federation settings; null when it takes part in none. */
  settingsOf: (tenantId: string) => Promise<FederationSettings | null>;
  /** FEDERATION_RESOLUTION_DEADLINE_MS: how long one trust chain resolution may take. */
  resolutionDeadlineMs: number;
  clock: Clock;
}

export function createFederation(needs: FederationNeeds) {
  return {
    trust: new FederationTrustSource(
      new TrustChainResolver(needs.outbound, needs.resolutionDeadlineMs, needs.clock),
      needs.settingsOf,
      new TrustMarkCheck(needs.outbound, needs.clock),
    ),
  };
}
