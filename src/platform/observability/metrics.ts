// Prometheus metrics of one instance: HTTP traffic by route, issuance and presentation outcomes by
// tenant and format, status list signing time, scheduled job runs, the PostgreSQL pool and the
// process (event-loop lag, heap, GC). Labels are route patterns and tenant ids, never raw URLs, so
// the number of series stays bounded.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { markAnsweringRequest } from '../db/request-attribution.js';

export type Outcome = 'completed' | 'failed' | 'expired';

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly httpRequests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly httpDuration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'time to answer an HTTP request, by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  private readonly credentials = new Counter({
    name: 'svc_credentials_issued_total',
    help: 'credentials issued, by tenant and format',
    labelNames: ['tenant', 'format'] as const,
    registers: [this.registry],
  });
  private readonly issuances = new Counter({
    name: 'svc_issuance_sessions_total',
    help: 'issuance sessions that ended, by tenant and outcome (completed, failed, expired)',
    labelNames: ['tenant', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly presentations = new Counter({
    name: 'svc_presentations_total',
    help: 'presentation sessions that ended, by tenant, credential format (of the credentials presented; none when nothing was verified) and outcome',
    labelNames: ['tenant', 'format', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly statusListSigning = new Histogram({
    name: 'svc_status_list_signing_seconds',
    help: 'time to build and sign a status list token (JWT and CWT)',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [this.registry],
  });
  private readonly jobRuns = new Counter({
    name: 'svc_job_runs_total',
    help: 'scheduled job runs on this instance, by job and outcome (ok, failed)',
    labelNames: ['job', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly jobRunTime = new Histogram({
    name: 'svc_job_run_seconds',
    help: 'how long a scheduled job run took on this instance, by job (clean-ups work in batches with a cap per run)',
    labelNames: ['job'] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60],
    registers: [this.registry],
  });

  constructor(database: { poolStats?: () => PoolStats; roundTrips?: () => number; requestRoundTrips?: () => number } = {}) {
    collectDefaultMetrics({ register: this.registry, prefix: 'svc_' });
    const { poolStats, roundTrips, requestRoundTrips } = database;
    if (roundTrips) {
      // Read from the database layer's own count when scraped: counting costs a request nothing more.
      new Counter({
        name: 'svc_db_round_trips_total',
        help: 'statements sent to the database (BEGIN and COMMIT included): on PostgreSQL, round trips to the server',
        registers: [this.registry],
        collect() {
          this.reset();
          this.inc(roundTrips());
        },
      });
    }
    if (requestRoundTrips) {
      new Counter({
        name: 'svc_db_request_round_trips_total',
        help: 'the part of svc_db_round_trips_total sent while answering HTTP requests (the metrics scrape and background work excluded)',
        registers: [this.registry],
        collect() {
          this.reset();
          this.inc(requestRoundTrips());
        },
      });
    }
    if (poolStats) {
      new Gauge({
        name: 'svc_db_pool_connections',
        help: 'PostgreSQL pool connections, by state (total, idle, waiting: requests waiting for one)',
        labelNames: ['state'] as const,
        registers: [this.registry],
        collect() {
          const stats = poolStats();
          for (const state of ['total', 'idle', 'waiting'] as const) this.set({ state }, stats[state]);
        },
      });
    }
  }

  /** Counts every answered request by its route pattern (unmatched URLs share one label). */
  instrument(app: FastifyInstance) {
    // Statements sent from here on serve the request (svc_db_request_round_trips_total), set again
    // after the body is read (see request-attribution.ts); the scrape's own statement is not a request's.
    const attribute = (request: FastifyRequest, _reply: unknown, done: () => void) => {
      if (request.routeOptions.url !== '/metrics') markAnsweringRequest();
      done();
    };
    for (const hook of ['onRequest', 'preValidation', 'preHandler'] as const) app.addHook(hook, attribute);
    app.addHook('onResponse', async (request, reply) => {
      const route = request.routeOptions.url ?? 'unmatched';
      const labels = { method: request.method, route };
      this.httpRequests.inc({ ...labels, status: String(reply.statusCode) });
      this.httpDuration.observe(labels, reply.elapsedTime / 1000);
    });
  }

  credentialsIssued(tenant: string, format: string, count: number) {
    this.credentials.inc({ tenant, format }, count);
  }

  issuanceEnded(tenant: string, outcome: Outcome) {
    this.issuances.inc({ tenant, outcome });
  }

  presentationEnded(tenant: string, formats: string[], outcome: Outcome) {
    for (const format of formats.length ? formats : ['none']) this.presentations.inc({ tenant, format, outcome });
  }

  statusListSigned(seconds: number) {
    this.statusListSigning.observe(seconds);
  }

  jobRan(job: string, outcome: 'ok' | 'failed', seconds: number) {
    this.jobRuns.inc({ job, outcome });
    this.jobRunTime.observe({ job }, seconds);
  }

  /**
   * The webhook outbox, read from the database when scraped (so every instance shows the whole
   * outbox): deliveries by state, and how long the oldest pending one has waited.
   */
  watchWebhookOutbox(stats: () => Promise<{ counts: { state: string; count: number }[]; oldestPending: string | null }>) {
    let latest: ReturnType<typeof stats> | undefined;
    // One read per scrape serves both gauges.
    const read = () => {
      latest ??= stats().finally(() => {
        setImmediate(() => {
          latest = undefined;
        });
      });
      return latest;
    };
    new Gauge({
      name: 'svc_webhook_deliveries',
      help: 'webhook deliveries in the outbox, by state (pending, delivered, failed)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      async collect() {
        const { counts } = await read();
        for (const state of ['pending', 'delivered', 'failed']) this.set({ state }, counts.find((c) => c.state === state)?.count ?? 0);
      },
    });
    new Gauge({
      name: 'svc_webhook_oldest_pending_seconds',
      help: 'age of the oldest pending webhook delivery, seconds since its event (0 when none is pending)',
      registers: [this.registry],
      async collect() {
        const { oldestPending } = await read();
        // A metric of how long deliveries wait, measured on the system clock (elapsed time, not the injected clock).
        this.set(oldestPending ? Math.max(0, (Date.now() - Date.parse(oldestPending)) / 1000) : 0);
      },
    });
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}

/** Where /metrics is served: on the main port behind a static bearer token, and/or on a port of its own. */
export function serveMetrics(app: FastifyInstance, metrics: Metrics, options: { token?: string; port?: number; host: string }) {
  const expected = options.token ? createHash('sha256').update(`Bearer ${options.token}`).digest() : undefined;
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!expected) return reply.code(404).send({ error: 'not_found', error_description: 'metrics are not enabled on this port' });
    // Compared as digests, in constant time, so the comparison says nothing about the token.
    const given = createHash('sha256')
      .update(request.headers.authorization ?? '')
      .digest();
    if (!timingSafeEqual(given, expected)) {
      return reply.code(401).header('www-authenticate', 'Bearer realm="metrics"').send({ error: 'invalid_token' });
    }
    return reply.type(metrics.registry.contentType).send(await metrics.render());
  });
  if (options.port === undefined) return;
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404).end();
      return;
    }
    metrics.render().then(
      (text) => response.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      () => response.writeHead(500).end(),
    );
  });
  // Opened when the app is ready, so that a busy metrics port stops start-up like a busy main port.
  app.addHook(
    'onReady',
    () => new Promise<void>((resolve, reject) => server.once('error', reject).listen(options.port, options.host, resolve)),
  );
  app.addHook('onClose', () => new Promise<void>((resolve) => server.close(() => resolve())));
}
