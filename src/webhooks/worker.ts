// Delivers the webhook outbox at least once. Every instance runs a worker; a worker leases due
// deliveries (store.claimDue) so no two instances make the same attempt, posts them signed
// (Standard Webhooks), records the outcome and schedules the retry (schedule.ts). It looks every
// WEBHOOK_POLL_INTERVAL_MS, and at once when woken: after this instance's own session changes, and
// when a retry it scheduled falls due. A lease that lapses (its instance was killed) frees the
// delivery for any other. stop() waits for the attempts under way and lets its leases go.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { outsideRequests } from '../platform/db/request-attribution.js';
import type { Executor } from '../platform/db/values.js';
import { type OutboundClient, OutboundRefused } from '../platform/outbound/client.js';
import type { SessionService } from '../sessions/service.js';
import { type RenderedWebhook, Undeliverable, type WebhookEvent, type WebhookRenderer } from './event.js';
import { nextAttemptAt } from './schedule.js';
import { webhookHeaders } from './signature.js';
import { type AttemptOutcome, claimDue, type DeliveryRow, recordAttempt, releaseLeases } from './store.js';

/** Deliveries leased per round; their attempts run side by side. */
const BATCH = 16;
/** Longer than an attempt can take (the outbound client's timeout is 5 s), so a live lease never lapses. */
const LEASE_MS = 60_000;

export interface WorkerOptions {
  /** WEBHOOK_RETRY_DELAYS_MS. */
  retryDelaysMs: readonly number[];
  /** WEBHOOK_RETRY_HORIZON_SECONDS. */
  horizonSeconds: number;
  /** WEBHOOK_POLL_INTERVAL_MS. */
  pollMs: number;
}

export class WebhookWorker {
  /** This instance's name on the leases it holds. */
  readonly owner = `worker-${randomUUID()}`;
  private readonly renderers = new Map<string, WebhookRenderer>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private poll: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly db: Executor,
    private readonly sessions: SessionService,
    private readonly outbound: OutboundClient,
    private readonly options: WorkerOptions,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** What time it is for deliveries: the sessions' clock (a retry falls due when it says so). */
  private now(): number {
    return this.sessions.clock.now().getTime();
  }

  /** How events of `type` are sent (the feature that makes them registers this). */
  render(type: string, renderer: WebhookRenderer) {
    this.renderers.set(type, renderer);
  }

  start() {
    if (this.stopped || this.poll) return;
    this.poll = setInterval(() => this.wake(), this.options.pollMs).unref();
    this.wake();
  }

  /** Looks for due deliveries now (or right after the round under way). */
  wake() {
    if (this.stopped) return;
    this.again = true;
    // A round a request's status change wakes is background work, not that request's round trips.
    this.draining ??= outsideRequests(() =>
      this.drain().finally(() => {
        this.draining = undefined;
      }),
    );
  }

  /** Waits for the attempts under way, then lets this instance's leases go; no attempt starts afterwards. */
  async stop() {
    this.stopped = true;
    clearInterval(this.poll);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.draining;
    await releaseLeases(this.db, this.owner).catch((err: Error) => this.log.warn({ err }, 'webhook leases not released'));
  }

  private async drain() {
    while (this.again && !this.stopped) {
      this.again = false;
      try {
        for (;;) {
          const now = this.now();
          const claimed = await claimDue(this.db, this.owner, new Date(now).toISOString(), new Date(now + LEASE_MS).toISOString(), BATCH);
          if (claimed.length === 0) break;
          await Promise.all(claimed.map((row) => this.attempt(row)));
          if (this.stopped) break;
        }
      } catch (err) {
        this.log.error({ err }, 'webhook deliveries could not be read');
      }
    }
  }

  /** Wakes the worker when a retry it scheduled falls due, if the poll would come later. */
  private wakeAt(at: number) {
    const delay = Math.max(0, at - this.now());
    if (delay >= this.options.pollMs || this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.wake();
    }, delay).unref();
    this.timers.add(timer);
  }

  private async attempt(row: DeliveryRow) {
    const event = eventOf(row);
    const attempt = row.attempts + 1;
    const session = await this.sessions.find(row.tenant_id, row.session_id);
    if (!session) {
      await this.record(row, {
        state: 'failed',
        lastStatus: null,
        lastError: 'the session is gone (retention or deleted): nothing left to send',
      });
      return;
    }
    let rendered: RenderedWebhook | undefined;
    let failure: { reason: string; final: boolean; status: number | null } | undefined;
    let answered: number | null = null;
    try {
      const renderer = this.renderers.get(row.type);
      if (!renderer) throw new Undeliverable(`no sender for events of type ${row.type}`);
      rendered = await renderer(event, session);
      const answer = await this.post(event.id, rendered);
      answered = answer.status;
      if (!answer.ok) failure = { reason: `answered ${answer.status}`, final: false, status: answer.status };
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      failure = { reason, final: err instanceof Undeliverable || err instanceof OutboundRefused, status: null };
    }
    const details = { ...rendered?.logDetails, webhookId: event.id, attempt, ...(failure && { reason: failure.reason }) };
    if (!failure) {
      const now = new Date(this.now()).toISOString();
      await this.record(row, { state: 'delivered', lastStatus: answered, lastError: null, deliveredAt: now });
      await this.sessions.log(row.session_id, 'info', 'webhook delivered', details).catch(() => undefined);
      return;
    }
    const next = failure.final
      ? undefined
      : nextAttemptAt({
          attempts: attempt,
          createdAt: Date.parse(row.created_at),
          now: this.now(),
          delaysMs: this.options.retryDelaysMs,
          horizonSeconds: this.options.horizonSeconds,
        });
    await this.record(row, {
      state: next === undefined ? 'failed' : 'pending',
      lastStatus: failure.status,
      lastError: failure.reason,
      ...(next !== undefined && { nextAttemptAt: new Date(next).toISOString() }),
    });
    const message = next === undefined ? 'webhook delivery failed; giving up' : 'webhook delivery failed; will retry';
    await this.sessions.log(row.session_id, next === undefined ? 'error' : 'warn', message, details).catch(() => undefined);
    if (next !== undefined) this.wakeAt(next);
  }

  /** Posts the payload, signed for this attempt. */
  private async post(id: string, rendered: RenderedWebhook): Promise<{ ok: boolean; status: number }> {
    const body = JSON.stringify(rendered.payload);
    // The receiver checks webhook-timestamp against its own clock (Standard Webhooks): the system's time, not the injected one.
    const timestamp = Math.floor(Date.now() / 1000);
    const response = await this.outbound.request(rendered.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...rendered.headers, ...webhookHeaders(id, timestamp, body, rendered.signingSecrets) },
      body,
    });
    return { ok: response.ok, status: response.status };
  }

  private async record(row: DeliveryRow, outcome: AttemptOutcome) {
    const kept = await recordAttempt(this.db, row.seq, this.owner, outcome);
    if (!kept) this.log.warn({ webhookId: row.id }, 'webhook delivery lease lapsed during its attempt');
  }
}

function eventOf(row: DeliveryRow): WebhookEvent {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    sessionId: row.session_id,
    type: row.type,
    endpoint: row.endpoint,
    status: row.status,
    previousStatus: row.previous_status,
    errorReason: row.error_reason,
    occurredAt: row.occurred_at,
  };
}
