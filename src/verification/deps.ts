import type { KeyChainService } from '../key-chains/service.js';
import type { SigningService } from '../key-chains/signing.js';
import type { Executor } from '../platform/db/values.js';
import type { OutboundClient } from '../platform/http/outbound-client.js';
import type { SessionService } from '../sessions/service.js';
import type { FetchedStatusList, StampedCache } from '../status-lists/cache.js';
import type { PresentationConfigurations, RegistrationCertificateSource, TrustAnchors } from './ports.js';

export interface VerificationDeps {
  db: Executor;
  publicUrl: string;
  sessions: SessionService;
  configs: PresentationConfigurations;
  registrationCertificates: RegistrationCertificateSource;
  trust: TrustAnchors;
  signing: SigningService;
  keyChains: KeyChainService;
  tenantExists(tenantId: string): Promise<boolean>;
  /** Calls webhooks and fetches other issuers' status lists, within the outbound address policy. */
  outbound: OutboundClient;
  /** Delays before each retry of a failed presentation webhook delivery. */
  webhookRetryDelaysMs: readonly number[];
  /** Where status list tokens fetched to check credentials are kept (Caches.fetchedStatusList, behind /api/cache); default: a private cache. */
  statusListCache?: StampedCache<FetchedStatusList>;
}

/** One unguessable value per session names the wallet-facing endpoints (and the DC API response endpoint). */
export const PRESENTATION_HANDLE = 'presentation';

export function presentationUrls(publicUrl: string, walletNonce: string) {
  const base = `${publicUrl}/presentations/${walletNonce}`;
  return { request: `${base}/request`, response: `${base}/response`, dcApiResponse: `${base}/dc-api-response` };
}
