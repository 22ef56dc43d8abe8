// The response endpoints, under /presentations/{per-session value}: the wallet's direct_post, and
// the integrator's page posting a DC API answer (with CORS for the session's origin only).
import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import { allowSessionOrigin, sessionOriginPreflight } from '../browser-origin.js';
import type { ResponseEndpoint } from './endpoint.js';

const DcApiResponseBody = z.object({
  // Stryker disable next-line StringLiteral: OpenAPI text (documentation, not a rule): mutation/equivalent.md
  response: z.string().min(1).describe('`data.response` of the DigitalCredential: the JWE (dc_api.jwt)'),
  // Stryker disable next-line StringLiteral: OpenAPI text (documentation, not a rule): mutation/equivalent.md
  origin: z.string().optional().describe('the origin the page ran at; must be the expected origin when given'),
});
const Handle = z.object({ handle: z.string() });

export function responseRoutes(app: App, responses: ResponseEndpoint) {
  // Stryker disable next-line ArrayDeclaration,StringLiteral: the OpenAPI tag of these routes (documentation)
  const tags = ['wallet: OpenID4VP'];
  app.post(
    '/presentations/:handle/response',
    {
      schema: {
        tags,
        // Stryker disable StringLiteral: OpenAPI text (documentation, not a rule): mutation/equivalent.md
        summary: 'Response endpoint (direct_post or direct_post.jwt)',
        description:
          'Form-encoded wallet answer: vp_token and state (direct_post), or response, a JWE encrypted to the key of the request (direct_post.jwt). Every presentation is verified before the session completes; the answer carries a redirect_uri when the request has one. Errors use the OAuth shape.',
        // Stryker restore StringLiteral
        params: Handle,
        body: z.record(z.string(), z.unknown()).nullish(),
      },
    },
    async (request, reply) =>
      reply.header('cache-control', 'no-store').send(await responses.respond(request.params.handle, request.body ?? {})),
  );

  // The integrator's page posts the wallet's answer from the browser, so the endpoint answers CORS
  // requests, for the one origin the session was created for and nothing else.
  const browserOrigin = (handle: string) => responses.browserOrigin(handle);
  // Stryker disable next-line ObjectLiteral: the preflight's OpenAPI tag and path parameter (a path segment is always a string)
  sessionOriginPreflight(app, '/presentations/:handle/dc-api-response', { tags, params: Handle }, browserOrigin);

  app.post(
    '/presentations/:handle/dc-api-response',
    {
      schema: {
        tags,
        // Stryker disable next-line StringLiteral: OpenAPI text (documentation, not a rule): mutation/equivalent.md
        summary: "Response of a dc-api request, posted by the integrator's page (OpenID4VP 1.0 appendix A.4, dc_api.jwt)",
        params: Handle,
        body: DcApiResponseBody,
      },
    },
    async (request, reply) => {
      await allowSessionOrigin(browserOrigin, request.params.handle, request.headers.origin, reply);
      return reply.header('cache-control', 'no-store').send(await responses.respond(request.params.handle, request.body, 'dc-api'));
    },
  );
}
