// Conformance profiles: the haip-1.0 profile's checks in a tenant, and the report of where it stands.
import type { App } from '../platform/http/types.js';
import { conformanceRoutes } from './routes.js';
import { type ConformanceNeeds, ConformanceService } from './service.js';

export function createConformance(needs: ConformanceNeeds) {
  const conformance = new ConformanceService(needs);
  conformance.enforce();
  return { conformance, routes: (app: App) => conformanceRoutes(app, conformance) };
}
