// Presentation configurations: what a tenant asks wallets for, and the import of another issuer's
// metadata to build a query from.

import type { AuditService } from '../audit/service.js';
import type { HttpEndpointService } from '../http-endpoints/service.js';
import type { KeyChainService } from '../key-chains/service.js';
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/sealed.js';
import type { Executor } from '../platform/db/values.js';
import type { EventBus } from '../platform/events/bus.js';
import type { App } from '../platform/http/types.js';
import type { OutboundClient } from '../platform/outbound/client.js';
import type { WebhookSecrets } from '../webhooks/secrets.js';
import { IssuerMetadataResolver } from './issuer-metadata.js';
import { presentationConfigRoutes } from './routes.js';
import { PresentationConfigService } from './service.js';

export interface PresentationConfigNeeds {
  db: Executor;
  audit: AuditService;
  /** Seals the deprecated inline webhook's authentication. */
  sealer: Sealer;
  keyChains: KeyChainService;
  webhookEndpoints: HttpEndpointService;
  /** The signing secrets of the deprecated inline webhooks. */
  webhookSecrets: WebhookSecrets;
  /** Whether the tenant has federation settings (its issuer settings, read through `db`). */
  hasFederationSettings: (tenantId: string, db: Executor) => Promise<boolean>;
  outbound: OutboundClient;
  /** Tells the other instances that a tenant's configurations changed, so their caches forget them. */
  bus?: EventBus;
  clock: Clock;
}

export function createPresentationConfigs(needs: PresentationConfigNeeds) {
  const presentationConfigs = new PresentationConfigService(
    needs.db,
    needs.sealer,
    needs.audit,
    needs.keyChains,
    needs.webhookEndpoints,
    needs.webhookSecrets,
    needs.hasFederationSettings,
    (url) => needs.outbound.urlRefusal(url),
    needs.clock,
    needs.bus,
  );
  return {
    presentationConfigs,
    routes: (app: App) => presentationConfigRoutes(app, presentationConfigs, new IssuerMetadataResolver(needs.outbound)),
  };
}
