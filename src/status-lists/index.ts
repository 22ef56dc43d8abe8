// Status lists: the Token Status Lists of issued credentials, their settings, and the caches behind
// /api/cache. The lists follow their key chains: re-signed after a rotation, and a chain that signs
// a list cannot be deleted.

import type { KeyChainService } from '../key-chains/service.js';
import type { App } from '../platform/http/types.js';
import type { TenantService } from '../tenants/service.js';
import type { StampedCache } from './cache.js';
import { ownStatusListTokens, statusListRoutes } from './routes.js';
import { type StatusListDeps, StatusListService } from './service.js';

export type StatusListNeeds = StatusListDeps & {
  keyChains: KeyChainService;
  tenants: TenantService;
  /** The trust-list feature's cache of what each tenant's verifier trusts (cleared through /api/cache). */
  trustCache: StampedCache<unknown>;
};

export function createStatusLists(needs: StatusListNeeds) {
  const statusLists = new StatusListService(needs);
  needs.keyChains.onRotated((tenantId, keyChainId) => statusLists.resignFor(tenantId, keyChainId));
  needs.keyChains.onUsageCheck((db, tenantId, keyChainId) => statusLists.keyChainUsers(db, tenantId, keyChainId));
  const { tenants, caches, trustCache, db } = needs;
  return {
    statusLists,
    /** The routes of the service's own documents that its verifier reads in-process (OwnUrlsFirst). */
    ownDocuments: [ownStatusListTokens(statusLists)],
    routes: (app: App) =>
      statusListRoutes(app, { statusLists, tenants, caches, trustCache, tenantExists: (tenantId) => tenants.exists(db, tenantId) }),
  };
}
