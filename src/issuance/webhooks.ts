// Webhook notifications of issuance status changes, to the endpoint chosen when the offer was made
// (the offer's, else its first configuration's; the session's webhook target). The database writes
// each change's event with the change (migration 0022); the webhook worker sends it through this.
import type { HttpEndpointService } from '../http-endpoints/service.js';
import type { SessionState, SessionStatus } from '../sessions/model.js';
import type { RenderedWebhook, WebhookEvent } from '../webhooks/event.js';
import { issuancePublic } from './session.js';

export interface WebhookPayload {
  type: 'issuance.status';
  sessionId: string;
  tenantId: string;
  status: SessionStatus;
  previousStatus: SessionStatus | null;
  credentialConfigurationIds: string[];
  errorReason: string | null;
  at: string;
}

export class IssuanceWebhooks {
  constructor(private readonly webhookEndpoints: HttpEndpointService) {}

  /** The status change as it was when it happened (the session may have moved on since), to the endpoint as it is now. */
  async render(event: WebhookEvent, session: SessionState): Promise<RenderedWebhook> {
    const { credentialConfigurationIds } = issuancePublic(session);
    const endpoint = await this.webhookEndpoints.resolve(session.tenantId, event.endpoint);
    const payload: WebhookPayload = {
      type: 'issuance.status',
      sessionId: session.id,
      tenantId: session.tenantId,
      status: event.status as SessionStatus,
      previousStatus: event.previousStatus as SessionStatus | null,
      credentialConfigurationIds,
      errorReason: event.errorReason,
      at: event.occurredAt,
    };
    return {
      url: endpoint.url,
      headers: endpoint.headers,
      signingSecrets: endpoint.signingSecrets ?? [],
      payload,
      logDetails: { webhookEndpointId: event.endpoint, status: event.status },
    };
  }
}
