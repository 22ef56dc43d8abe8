// The presentation webhook: the verified claims of a completed session go to the request's own
// webhook (kept encrypted with the session, with its signing secret), else to the configuration's.
// The database writes the event when the session completes, or, when a redirect's response code
// must release the result, when it does (migration 0022); the webhook worker sends it through this.
import type { SessionState } from '../../sessions/model.js';
import { type RenderedWebhook, Undeliverable, type WebhookEvent } from '../../webhooks/event.js';
import { configurationOwner } from '../../webhooks/secrets.js';
import { newSigningSecret } from '../../webhooks/signature.js';
import type { PresentationConfiguration, PresentationConfigurations } from '../ports.js';
import { type PresentationWebhook, presentationPrivate, presentationPublic } from '../session.js';

/**
 * Where a new presentation session's webhook goes, as its webhook target (null: none, and no event
 * is written): the request's own webhook, else the configuration's endpoint or inline webhook.
 */
export function presentationWebhookTarget(
  ownWebhook: boolean,
  config: Pick<PresentationConfiguration, 'id' | 'webhookEndpointId' | 'webhook'>,
) {
  if (ownWebhook) return 'request';
  if (config.webhookEndpointId) return config.webhookEndpointId;
  return config.webhook ? configurationOwner(config.id) : null;
}

/** A request's own webhook as the session keeps it: with a fresh signing secret, answered once as webhookSigningSecret. */
export function ownWebhook<W extends Omit<PresentationWebhook, 'signingSecret'>>(webhook: W | undefined) {
  if (!webhook) return {};
  const signingSecret = newSigningSecret();
  return { webhook: { ...webhook, signingSecret }, answer: { webhookSigningSecret: signingSecret } };
}

export class PresentationWebhooks {
  private woken: () => void = () => {};

  constructor(private readonly configs: PresentationConfigurations) {}

  /** Called when a result is released (no status change): wakes the worker so the webhook goes out at once. */
  onReleased(wake: () => void) {
    this.woken = wake;
  }

  released() {
    this.woken();
  }

  private async endpointOf(tenantId: string, requestId: string, own: PresentationWebhook | undefined) {
    if (own) {
      const headers = own.auth?.type === 'header' ? { [own.auth.header.name]: own.auth.header.value } : {};
      return { url: own.url, headers, signingSecrets: own.signingSecret ? [own.signingSecret] : [] };
    }
    const config = await this.configs.find(tenantId, requestId);
    return config ? this.configs.resolveWebhook(tenantId, config) : null;
  }

  async render(_event: WebhookEvent, session: SessionState): Promise<RenderedWebhook> {
    const { requestId } = presentationPublic(session);
    const secrets = presentationPrivate(session);
    if (!secrets?.credentials) throw new Undeliverable('the session holds no verified credentials (anonymized by retention)');
    const endpoint = await this.endpointOf(session.tenantId, requestId, secrets.webhook);
    if (!endpoint) throw new Undeliverable(`presentation configuration '${requestId}' names no webhook any more`);
    const payload = {
      type: 'presentation.completed',
      sessionId: session.id,
      tenantId: session.tenantId,
      requestId,
      credentials: secrets.credentials,
    };
    return { url: endpoint.url, headers: endpoint.headers, signingSecrets: endpoint.signingSecrets ?? [], payload, logDetails: {} };
  }
}
