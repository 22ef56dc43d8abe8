// Webhook notifications of issuance status changes, to the endpoint named by the offer (else by the
// first offered configuration that names one). Each delivery has a bounded timeout and a few
// retries; every failed attempt is written to the session log, so nothing is lost silently.
import type { SessionState, SessionStatus } from '../sessions/model.js';
import type { IssuanceDeps } from './deps.js';

const TIMEOUT_MS = 5_000;
const RETRY_DELAYS_MS = [1_000, 5_000, 15_000];

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
      const config = await this.deps.configs.get(state.tenantId, id).catch(() => undefined);
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
    for (let attempt = 0; ; attempt++) {
      const failure = await post(endpoint.url, endpoint.headers, payload);
      if (!failure) {
        await this.deps.sessions.log(state.id, 'info', 'webhook delivered', { webhookEndpointId: id, status: state.status, attempt: attempt + 1 });
        return;
      }
      const delay = this.retryDelaysMs[attempt];
      await this.deps.sessions.log(state.id, delay === undefined ? 'error' : 'warn', delay === undefined ? 'webhook delivery failed; giving up' : 'webhook delivery failed; will retry', {
        webhookEndpointId: id,
        status: state.status,
        attempt: attempt + 1,
        reason: failure,
      });
      if (delay === undefined) return;
      await new Promise((resolve) => setTimeout(resolve, delay).unref());
    }
  }
}

/** Undefined on a 2xx answer, else why not. */
async function post(url: string, headers: Record<string, string>, payload: WebhookPayload): Promise<string | undefined> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await response.body?.cancel();
    return response.ok ? undefined : `answered ${response.status}`;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
