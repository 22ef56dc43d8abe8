// Trust lists: the ETSI TS 119 602 lists a tenant publishes, and what its verifier trusts.

import type { Executor } from '../platform/db/values.js';
import type { App } from '../platform/http/types.js';
import { trustListRoutes } from './routes.js';
import { type TrustListDeps, TrustListService } from './service.js';

export type TrustListNeeds = TrustListDeps & { db: Executor };

export function createTrustLists({ db, ...deps }: TrustListNeeds) {
  const trustLists = new TrustListService(db, deps);
  return { trustLists, routes: (app: App) => trustListRoutes(app, trustLists) };
}
