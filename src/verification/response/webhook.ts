// The presentation webhook: the verified claims of a completed session go to the request's own
// webhook (kept encrypted with the session), else to the configuration's. Each attempt is logged on
// the session.

import { postJsonWithRetries } from '../../platform/http/outbound.js';
import type { OutboundClient } from '../../platform/http/outbound-client.js';
import type { BackgroundWork } from '../../platform/lifecycle/shutdown.js';
import type { SessionState } from '../../sessions/model.js';
import type { SessionService } from '../../sessions/service.js';
import type { PresentationConfigurations } from '../ports.js';
import type { PresentationWebhook } from '../session.js';

export class PresentationWebhooks {
  constructor(
    private readonly sessions: SessionService,
    private readonly configs: PresentationConfigurations,
    private readonly outbound: OutboundClient,
    private readonly retryDelaysMs: readonly number[],
    private readonly background: BackgroundWork,
  ) {}

  /**
   * Delivered in the background: the wallet's answer does not wait for the relying party. An error
   * around the attempts (the database gone) is logged too, and must not become an unhandled
   * rejection, which would end the process.
   */
  deliverLater(session: SessionState, requestId: string, own: PresentationWebhook | undefined, credentials: unknown[]) {
    this.background.track(
      this.deliver(session, requestId, own, credentials).catch((err: Error) =>
        this.sessions.log(session.id, 'error', 'webhook delivery failed', { reason: err.message }).catch(() => undefined),
      ),
    );
  }

  private async endpointOf(tenantId: string, requestId: string, own: PresentationWebhook | undefined) {
    if (own) return { url: own.url, headers: own.auth?.type === 'header' ? { [own.auth.header.name]: own.auth.header.value } : {} };
    const config = await this.configs.find(tenantId, requestId);
    return config ? this.configs.resolveWebhook(tenantId, config) : null;
  }

  private async deliver(session: SessionState, requestId: string, own: PresentationWebhook | undefined, credentials: unknown[]) {
    const endpoint = await this.endpointOf(session.tenantId, requestId, own);
    if (!endpoint) return;
    const payload = { type: 'presentation.completed', sessionId: session.id, tenantId: session.tenantId, requestId, credentials };
    await postJsonWithRetries(
      this.outbound,
      endpoint,
      payload,
      async ({ attempt, failure, final }) => {
        const details = { attempt, ...(failure && { reason: failure }) };
        if (!failure) await this.sessions.log(session.id, 'info', 'webhook delivered', details);
        else {
          const message = final ? 'webhook delivery failed; giving up' : 'webhook delivery failed; will retry';
          await this.sessions.log(session.id, final ? 'error' : 'warn', message, details);
        }
      },
      this.retryDelaysMs,
    );
  }
}
