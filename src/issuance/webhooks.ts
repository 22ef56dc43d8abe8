// Webhook notifications of issuance status changes, to the endpoint chosen when the offer was made
// (the offer's, else its first configuration's); every failed attempt is written to the session log.
import type { CredentialConfigService } from '../credential-configs/service.js';
import type { HttpEndpointService } from '../http-endpoints/service.js';
import { postJsonWithRetries } from '../platform/http/outbound.js';
import type { OutboundClient } from '../platform/http/outbound-client.js';
import type { BackgroundWork } from '../platform/lifecycle/shutdown.js';
import type { SessionState, SessionStatus } from '../sessions/model.js';
import type { SessionService } from '../sessions/service.js';
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
  constructor(
    private readonly sessions: SessionService,
    private readonly configs: CredentialConfigService,
    private readonly webhookEndpoints: HttpEndpointService,
    private readonly outbound: OutboundClient,
    private readonly retryDelaysMs: readonly number[],
    private readonly background: BackgroundWork,
  ) {}

  /** Called for every status change; delivery runs in the background and never fails the flow. */
  notify(state: SessionState, previousStatus: SessionStatus | null) {
    if (state.kind !== 'issuance' || previousStatus === null) return;
    // Attempts are logged as they happen; what fails before any attempt (the endpoint cannot be
    // resolved) is logged here, and a log that cannot be written either is given up on.
    this.background.track(
      this.deliver(state, previousStatus).catch((err: Error) =>
        this.sessions.log(state.id, 'error', 'webhook delivery failed', { reason: err.message }).catch(() => undefined),
      ),
    );
  }

  /** The endpoint chosen when the offer was made; sessions of earlier versions look it up as they did. */
  private async endpointId(state: SessionState, credentialConfigurationIds: string[], chosen: string | null | undefined) {
    if (chosen !== undefined) return chosen;
    for (const id of credentialConfigurationIds) {
      const config = await this.configs.find(state.tenantId, id);
      if (config?.webhookEndpointId) return config.webhookEndpointId;
    }
    return undefined;
  }

  private async deliver(state: SessionState, previousStatus: SessionStatus) {
    const { credentialConfigurationIds, webhookEndpointId } = issuancePublic(state);
    const id = await this.endpointId(state, credentialConfigurationIds, webhookEndpointId);
    if (!id) return;
    const endpoint = await this.webhookEndpoints.resolve(state.tenantId, id);
    const payload: WebhookPayload = {
      type: 'issuance.status',
      sessionId: state.id,
      tenantId: state.tenantId,
      status: state.status,
      previousStatus,
      credentialConfigurationIds,
      errorReason: state.errorReason,
      at: state.updatedAt,
    };
    await postJsonWithRetries(
      this.outbound,
      endpoint,
      payload,
      async ({ attempt, failure, final }) => {
        const details = { webhookEndpointId: id, status: state.status, attempt, ...(failure && { reason: failure }) };
        if (!failure) await this.sessions.log(state.id, 'info', 'webhook delivered', details);
        else
          await this.sessions.log(
            state.id,
            final ? 'error' : 'warn',
            final ? 'webhook delivery failed; giving up' : 'webhook delivery failed; will retry',
            details,
          );
      },
      this.retryDelaysMs,
    );
  }
}
