import { z } from 'zod';
import { tenantOf } from '../../platform/http/access.js';
import type { App } from '../../platform/http/types.js';
import { SessionSchema } from '../../sessions/view.js';
import type { PresentationResults } from './service.js';

const ReleaseBody = z
  .strictObject({
    session: z.string().min(1).describe('the id of the presentation session (the `session` of the offer)'),
    response_code: z
      .string()
      .min(1)
      .max(200)
      .describe('the response_code the redirect to redirectUri carried back, as the browser that followed it presented it'),
  })
  .meta({ examples: [{ session: '3f6c1f3e-7f55-4a39-9c52-8d5a4f0a9c11', response_code: 'n8W2b9Zq0sV1c4xY7uT6pR5oE3wQ2aS1' }] });

export function presentationResultRoutes(app: App, results: PresentationResults) {
  app.post(
    '/api/verifier/result',
    {
      config: { access: { roles: ['presentation:request', 'presentation:manage'], tenant: 'required' } },
      schema: {
        tags: ['verification'],
        summary: 'Release the result of a presentation answered through a redirect, with its response_code (OpenID4VP 1.0 section 13.3)',
        description: [
          'A presentation request with a redirectUri (same-device flow) sends the wallet back to it with a fresh response_code.',
          'The verified credentials of such a session are never in GET /api/session; this call returns the session with them,',
          'once: the code is single use and lives 10 minutes after the response. Call it from the page the redirect reached,',
          "with the session id of the user's own browser session, so that a response posted from another user's device (a",
          "request relayed to a victim) cannot complete the attacker's session. The webhook of such a session is sent now too.",
          '400 naming body.response_code for a wrong, used or expired code, or a session answered without a redirect;',
          "400 naming body.session for a session that is not a completed presentation; 404 for an unknown or another tenant's session.",
        ].join(' '),
        body: ReleaseBody,
        response: { 200: SessionSchema },
      },
    },
    (request) => results.release(tenantOf(request), request.body.session, request.body.response_code),
  );
}
