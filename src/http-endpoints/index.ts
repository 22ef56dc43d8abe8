// Attribute providers and webhook endpoints: the tenant's HTTP endpoints, with their authentication
// kept encrypted.

import type { AuditService } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/sealed.js';
import type { Executor } from '../platform/db/values.js';
import type { App } from '../platform/http/types.js';
import type { OutboundClient } from '../platform/outbound/client.js';
import type { WebhookSecrets } from '../webhooks/secrets.js';
import { httpEndpointRoutes } from './routes.js';
import { ATTRIBUTE_PROVIDERS, HttpEndpointService, WEBHOOK_ENDPOINTS } from './service.js';

export interface HttpEndpointNeeds {
  db: Executor;
  audit: AuditService;
  /** A sealer for each kind: a header value of one never opens as the other's. */
  sealerFor(purpose: string): Sealer;
  outbound: OutboundClient;
  /** The signing secrets of webhook endpoints. */
  webhookSecrets: WebhookSecrets;
  clock: Clock;
}

export function createHttpEndpoints(needs: HttpEndpointNeeds) {
  const { db, audit, outbound } = needs;
  const attributeProviders = new HttpEndpointService(
    db,
    needs.sealerFor('attribute-providers'),
    audit,
    ATTRIBUTE_PROVIDERS,
    outbound,
    needs.clock,
  );
  const webhookEndpoints = new HttpEndpointService(
    db,
    needs.sealerFor('webhook-endpoints'),
    audit,
    WEBHOOK_ENDPOINTS,
    outbound,
    needs.clock,
    needs.webhookSecrets,
  );
  return { attributeProviders, webhookEndpoints, routes: (app: App) => httpEndpointRoutes(app, { attributeProviders, webhookEndpoints }) };
}
