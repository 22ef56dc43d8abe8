// The result of a presentation answered through a redirect (same-device flow), released only to the
// holder of the response code the redirect carried (OpenID4VP 1.0 sections 8.2 and 13.3, HAIP 1.0
// section 5.1): a response posted by a wallet on another user's device, to a request an attacker
// started, never reaches the attacker's session, since only the victim's browser gets the code.
// The code is single use, spent by the one statement that checks it; the webhook, which would
// otherwise hand the result out without the code, goes out when the code releases it (the database
// writes its event with the release).
import { badRequest } from '../../platform/http/problem.js';
import type { SessionService } from '../../sessions/service.js';
import { toSessionView } from '../../sessions/view.js';
import type { PresentationWebhooks } from '../response/webhook.js';
import { presentationPublic } from '../session.js';
import { RESPONSE_CODE_HANDLE } from '../urls.js';

const refused = (field: 'body.session' | 'body.response_code', message: string) =>
  badRequest(`${field.slice('body.'.length)}: ${message}`, [{ field, message }]);

export class PresentationResults {
  constructor(
    private readonly sessions: SessionService,
    private readonly webhooks: PresentationWebhooks,
  ) {}

  /** The session with its credentials, once, for the response code its redirect carried; a 404 for another tenant's session. */
  async release(tenantId: string, sessionId: string, responseCode: string) {
    const { session, tenant } = await this.sessions.getWithTenant(tenantId, sessionId);
    if (session.kind !== 'presentation') throw refused('body.session', 'is not a presentation session');
    if (session.status !== 'completed') throw refused('body.session', `is ${session.status}, not completed: there is no result to release`);
    const request = presentationPublic(session);
    if (!request.responseCodeRequired)
      throw refused('body.response_code', `the session was answered without a redirect: its result is at GET /api/session/${sessionId}`);
    if (!(await this.sessions.spendHandleOfSession(RESPONSE_CODE_HANDLE, responseCode, tenantId, sessionId)))
      throw refused('body.response_code', 'is not the response code of this session, or was used already, or expired');
    const releasedAt = this.sessions.clock.now().toISOString();
    const log = { level: 'info', message: 'result released with the response code' } as const;
    const released =
      (await this.sessions.update(tenantId, sessionId, { public: { resultReleasedAt: releasedAt } }, { from: session, log })) ?? session;
    // The release wrote the webhook event (migration 0022); this sends it at once.
    this.webhooks.released();
    return toSessionView(released, tenant, { released: true });
  }
}
