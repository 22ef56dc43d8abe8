// What the features that send webhooks give the delivery worker: for an event row and its session,
// where to send what. The worker does the rest (signing, attempts, retries, the session log).
import type { SessionState } from '../sessions/model.js';

/** One event of the outbox, as a feature renders it. */
export interface WebhookEvent {
  /** The webhook-id. */
  id: string;
  tenantId: string;
  sessionId: string;
  type: string;
  /** The session's webhook target when the event was written. */
  endpoint: string;
  /** issuance.status: the status the session moved to, and from. */
  status: string | null;
  previousStatus: string | null;
  errorReason: string | null;
  occurredAt: string;
}

export interface RenderedWebhook {
  url: string;
  /** The target's authentication header, if it has one. */
  headers: Record<string, string>;
  /** The Standard Webhooks secrets that sign it; empty: sent unsigned. */
  signingSecrets: string[];
  payload: unknown;
  /** Added to the session log line of each attempt. */
  logDetails: Record<string, unknown>;
}

export type WebhookRenderer = (event: WebhookEvent, session: SessionState) => Promise<RenderedWebhook>;

/** A delivery that no retry can make (its data is gone): failed at once, with this message as lastError. */
export class Undeliverable extends Error {}
