// Assembles the issuance feature from the services it works with.

import type { AuditService } from '../audit/service.js';
import type { CredentialConfigService } from '../credential-configs/service.js';
import { defaultClaims, validateClaims } from '../credential-configs/service.js';
import type { HttpEndpointService } from '../http-endpoints/service.js';
import type { KeyChainService } from '../key-chains/service.js';
import type { SigningService } from '../key-chains/signing.js';
import type { Sealer } from '../platform/crypto/sealed.js';
import type { Executor } from '../platform/db/values.js';
import type { OutboundClient } from '../platform/http/outbound-client.js';
import type { App } from '../platform/http/types.js';
import type { Metrics } from '../platform/observability/metrics.js';
import type { SessionService } from '../sessions/service.js';
import { IssuanceTokens } from './access-tokens.js';
import { CredentialEndpoint } from './credential-endpoint.js';
import { DeferredService } from './deferred.js';
import type { IssuanceDeps, StatusEntryAllocator } from './deps.js';
import { NonceStore } from './nonces.js';
import { NotificationEndpoint } from './notification.js';
import { OfferService } from './offers.js';
import type { CredentialConfiguration, CredentialConfigurations } from './ports.js';
import { issuanceProtocolRoutes } from './protocol-routes.js';
import { issuanceRoutes } from './routes.js';
import { IssuerSettingsService } from './settings.js';
import { TokenEndpoint } from './token-endpoint.js';
import { IssuanceWebhooks } from './webhooks.js';

export interface IssuanceWiring {
  db: Executor;
  publicUrl: string;
  masterSecret: string;
  audit: AuditService;
  sessions: SessionService;
  credentialConfigs: CredentialConfigService;
  attributeProviders: HttpEndpointService;
  webhookEndpoints: HttpEndpointService;
  signing: SigningService;
  keyChains: KeyChainService;
  sealer: Sealer;
  tenantExists(tenantId: string): Promise<boolean>;
  metrics: Metrics;
  outbound: OutboundClient;
  webhookRetryDelaysMs?: readonly number[];
  statusEntries?: StatusEntryAllocator;
}

function configurationsOf(service: CredentialConfigService): CredentialConfigurations {
  const model = (config: CredentialConfiguration) => config as unknown as Parameters<typeof validateClaims>[0];
  return {
    list: async (tenantId) => (await service.list(tenantId)) as unknown as CredentialConfiguration[],
    get: async (tenantId, id) => (await service.get(tenantId, id)) as unknown as CredentialConfiguration,
    defaultClaims: (config) => defaultClaims(model(config)),
    validateClaims: (config, claims) => validateClaims(model(config), claims).map((p) => ({ path: p.path.join('.'), message: p.message })),
  };
}

export function createIssuance(wiring: IssuanceWiring) {
  const nonces = new NonceStore(wiring.db);
  const deps: IssuanceDeps = {
    db: wiring.db,
    publicUrl: wiring.publicUrl,
    sessions: wiring.sessions,
    configs: configurationsOf(wiring.credentialConfigs),
    attributeProviders: wiring.attributeProviders,
    webhookEndpoints: wiring.webhookEndpoints,
    settings: new IssuerSettingsService(wiring.db, wiring.audit),
    nonces,
    tokens: new IssuanceTokens(wiring.masterSecret),
    signing: wiring.signing,
    keyChains: wiring.keyChains,
    sealer: wiring.sealer,
    tenantExists: wiring.tenantExists,
    outbound: wiring.outbound,
    statusEntries: wiring.statusEntries,
    metrics: wiring.metrics,
  };
  const webhooks = new IssuanceWebhooks(deps, wiring.webhookRetryDelaysMs);
  wiring.sessions.onStatusChange((state, previous) => webhooks.notify(state, previous));
  const offers = new OfferService(deps);
  const deferred = new DeferredService(deps);
  return {
    nonces,
    settings: deps.settings,
    routes(app: App) {
      issuanceRoutes(app, { settings: deps.settings, offers, deferred });
      issuanceProtocolRoutes(app, deps, {
        offers,
        token: new TokenEndpoint(deps),
        credential: new CredentialEndpoint(deps),
        deferred,
        notification: new NotificationEndpoint(deps),
      });
    },
  };
}
