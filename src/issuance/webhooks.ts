// Webhook notifications of issuance status changes, to the endpoint named by the offer (else by the
// first offered configuration that names one); every failed attempt is written to the session log.
import { postJsonWithRetries, RETRY_DELAYS_MS } from '../platform/http/outbound.js';
import { unlessNotFound } from '../platform/http/problem.js';
import type { SessionState, SessionStatus } from '../sessions/model.js';
import type { IssuanceDeps } from './deps.js';

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
    private readonly deps: IssuanceDeps,
    private readonly retryDelaysMs: readonly number[] = RETRY_DELAYS_MS,
  ) {}

  /** Called for every status change; delivery runs in the background and never fails the flow. */
  notify(state: SessionState, previousStatus: SessionStatus | null) {
    if (state.kind !== 'issuance' || previousStatus === null) return;
    void this.deliver(state, previousStatus).catch(() => undefined);
  }

  private async endpointId(state: SessionState): Promise<string | undefined> {
    const fromOffer = state.public.webhookEndpointId as string | undefined;
    if (fromOffer) return fromOffer;
    for (const id of (state.public.credentialConfigurationIds as string[] | undefined) ?? []) {
      const config = await unlessNotFound(this.deps.configs.get(state.tenantId, id));
      if (config?.webhookEndpointId) return config.webhookEndpointId;
    }
    return undefined;
  }

  private async deliver(state: SessionState, previousStatus: SessionStatus) {
    const id = await this.endpointId(state);
    if (!id) return;
    const endpoint = await this.deps.webhookEndpoints.resolve(state.tenantId, id);
    const payload: WebhookPayload = {
      type: 'issuance.status',
      sessionId: state.id,
      tenantId: state.tenantId,
      status: state.status,
      previousStatus,
      credentialConfigurationIds: (state.public.credentialConfigurationIds as string[] | undefined) ?? [],
      errorReason: state.errorReason,
      at: state.updatedAt,
    };
    await postJsonWithRetries(
      this.deps.outbound,
      endpoint,
      payload,
      async ({ attempt, failure, final }) => {
        const details = { webhookEndpointId: id, status: state.status, attempt, ...(failure && { reason: failure }) };
        if (!failure) await this.deps.sessions.log(state.id, 'info', 'webhook delivered', details);
        else
          await this.deps.sessions.log(
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
