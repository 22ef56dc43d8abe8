import type { KeyChainService } from '../key-chains/service.js';
import type { SigningService } from '../key-chains/signing.js';
import type { Sealer } from '../platform/crypto/sealed.js';
import type { Executor } from '../platform/db/values.js';
import type { OutboundClient } from '../platform/http/outbound-client.js';
import type { Metrics } from '../platform/observability/metrics.js';
import type { SessionService } from '../sessions/service.js';
import type { IssuanceTokens } from './access-tokens.js';
import type { NonceStore } from './nonces.js';
import type { CredentialConfigurations, EndpointResolver } from './ports.js';
import type { IssuerSettingsService } from './settings.js';

/** Everything the issuance feature works with, assembled once in app.ts. */
export interface IssuanceDeps {
  db: Executor;
  publicUrl: string;
  sessions: SessionService;
  configs: CredentialConfigurations;
  attributeProviders: EndpointResolver;
  webhookEndpoints: EndpointResolver;
  settings: IssuerSettingsService;
  nonces: NonceStore;
  tokens: IssuanceTokens;
  signing: SigningService;
  keyChains: KeyChainService;
  /** Encrypts deferred transactions' holder keys and credentials. */
  sealer: Sealer;
  tenantExists(tenantId: string): Promise<boolean>;
  /** Calls attribute providers and webhooks, within the outbound address policy. */
  outbound: OutboundClient;
  /** Counts what is issued. */
  metrics: Pick<Metrics, 'credentialsIssued'>;
  /** Status list entries for credentials of configurations with statusManagement (absent: none are given). */
  statusEntries?: StatusEntryAllocator;
}

export interface StatusEntryAllocator {
  allocate(
    tenantId: string,
    request: { credentialConfigurationId: string; sessionId?: string | null; count?: number },
  ): Promise<{ idx: number; uri: string }[]>;
}
