// Credential configurations: what a tenant issues.

import type { AuditService } from '../audit/service.js';
import type { HttpEndpointService } from '../http-endpoints/service.js';
import type { KeyChainService } from '../key-chains/service.js';
import type { Clock } from '../platform/clock.js';
import type { Executor } from '../platform/db/values.js';
import type { EventBus } from '../platform/events/bus.js';
import type { App } from '../platform/http/types.js';
import { credentialConfigRoutes } from './routes.js';
import { CredentialConfigService } from './service.js';

export interface CredentialConfigNeeds {
  db: Executor;
  audit: AuditService;
  keyChains: KeyChainService;
  attributeProviders: HttpEndpointService;
  webhookEndpoints: HttpEndpointService;
  /** Tells the other instances that a tenant's configurations changed, so their caches forget them. */
  bus?: EventBus;
  clock: Clock;
}

export function createCredentialConfigs(needs: CredentialConfigNeeds) {
  const credentialConfigs = new CredentialConfigService(
    needs.db,
    needs.audit,
    needs.keyChains,
    needs.attributeProviders,
    needs.webhookEndpoints,
    needs.clock,
    needs.bus,
  );
  return { credentialConfigs, routes: (app: App) => credentialConfigRoutes(app, credentialConfigs) };
}
