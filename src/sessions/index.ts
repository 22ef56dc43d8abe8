// Sessions: the state of every issuance and presentation, their events (SSE), logs and retention.
import type { AuditService } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/sealed.js';
import type { Executor } from '../platform/db/values.js';
import type { EventBus } from '../platform/events/bus.js';
import type { EventStreams } from '../platform/http/sse.js';
import type { App } from '../platform/http/types.js';
import type { TenantService } from '../tenants/service.js';
import type { RetentionPolicy } from './model.js';
import { sessionCleanupJob } from './retention.js';
import { sessionRoutes } from './routes.js';
import { SessionService } from './service.js';

export interface SessionNeeds {
  db: Executor;
  audit: AuditService;
  /** Seals each session's personal data. */
  sealer: Sealer;
  /** Carries status events to subscribers on every instance. */
  bus: EventBus;
  clock: Clock;
}

export function createSessions(needs: SessionNeeds) {
  const sessions = new SessionService(needs.db, needs.sealer, needs.bus, needs.audit, needs.clock);
  return {
    sessions,
    /** The retention job: each tenant's sessions past their time are deleted or anonymized. */
    cleanupJob: (tenants: TenantService, defaults: RetentionPolicy) =>
      sessionCleanupJob(sessions, () => tenants.sessionConfigs(), defaults),
    routes: (app: App, context: { tenants: TenantService; streams: EventStreams; retentionDefaults: RetentionPolicy }) =>
      sessionRoutes(app, { sessions, ...context }),
  };
}
