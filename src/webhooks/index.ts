// Webhooks that are never lost: the outbox the database fills (migration 0022), the worker that
// delivers it, the signing secrets, and the deliveries API.
import type { FastifyBaseLogger } from 'fastify';
import type { Executor } from '../platform/db/values.js';
import type { App } from '../platform/http/types.js';
import type { OutboundClient } from '../platform/outbound/client.js';
import type { SessionService } from '../sessions/service.js';
import type { WebhookRenderer } from './event.js';
import { webhookDeliveryRoutes } from './routes.js';
import { WebhookDeliveries } from './service.js';
import { outboxStats, purgeFinished } from './store.js';
import { WebhookWorker, type WorkerOptions } from './worker.js';

export interface WebhookNeeds {
  db: Executor;
  sessions: SessionService;
  outbound: OutboundClient;
  log: FastifyBaseLogger;
  options: WorkerOptions;
  /** WEBHOOK_DELIVERY_RETENTION_SECONDS: finished deliveries older than this are deleted. */
  retentionSeconds: number;
  /** How each type of event is sent, by the feature that makes it. */
  renderers: { issuanceStatus: WebhookRenderer; presentationCompleted: WebhookRenderer };
}

export function createWebhooks(needs: WebhookNeeds) {
  const worker = new WebhookWorker(needs.db, needs.sessions, needs.outbound, needs.options, needs.log);
  worker.render('issuance.status', needs.renderers.issuanceStatus);
  worker.render('presentation.completed', needs.renderers.presentationCompleted);
  // Changes made here are delivered at once; those of other instances when their worker or the poll gets to them.
  needs.sessions.onStatusChange((state) => {
    if (state.webhookTarget) worker.wake();
  });
  const deliveries = new WebhookDeliveries(needs.db, () => worker.wake(), needs.sessions.clock);
  return {
    worker,
    deliveries,
    stats: () => outboxStats(needs.db),
    cleanupJob: {
      name: 'webhook-deliveries-cleanup',
      run: () => purgeFinishedDeliveries(needs.db, needs.retentionSeconds, needs.sessions.clock.now()),
    },
    routes: (app: App) => webhookDeliveryRoutes(app, deliveries),
  };
}

export { Undeliverable, type WebhookEvent, type WebhookRenderer } from './event.js';
export { configurationOwner, endpointOwner, WebhookSecrets } from './secrets.js';

/** Rows deleted per statement, and statements per run: a large backlog is worked off over several runs, none holding a long transaction. */
const PURGE_BATCH = 1000;
const PURGE_BATCHES_PER_RUN = 20;

async function purgeFinishedDeliveries(db: Executor, retentionSeconds: number, now: Date) {
  const cutoff = new Date(now.getTime() - retentionSeconds * 1000).toISOString();
  for (let batch = 0; batch < PURGE_BATCHES_PER_RUN; batch++) {
    if ((await purgeFinished(db, cutoff, PURGE_BATCH)) < PURGE_BATCH) return;
  }
}
