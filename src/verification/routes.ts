// Management: presentation offers. Wallet-facing: the request object and the response endpoint,
// under /presentations/{per-session value}.
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { contextOf, tenantOf } from '../platform/http/access.js';
import type { App } from '../platform/http/types.js';
import { webOrigin } from '../platform/http/web-urls.js';
import { RedirectUri, SESSION_PLACEHOLDER } from '../presentation-configs/schemas.js';
import type { PresentationOffers } from './offers.js';
import type { PresentationProtocol } from './protocol.js';

const OfferBody = z
  .strictObject({
    response_type: z
      .enum(['uri', 'dc-api', 'iso-18013-7'])
      .describe('`uri` (openid4vp:// for a wallet) or `dc-api` (for the browser Digital Credentials API); not yet `iso-18013-7`'),
    requestId: z.string().min(1).describe('id of a presentation configuration'),
    webhook: z
      .strictObject({
        url: z.url({ protocol: /^https?$/ }),
        auth: z
          .discriminatedUnion('type', [
            z.strictObject({ type: z.literal('none') }),
            z.strictObject({ type: z.literal('header'), header: z.strictObject({ name: z.string().min(1), value: z.string().min(1) }) }),
          ])
          .optional(),
      })
      .optional()
      .describe("where this request's verified claims go, instead of the configuration's webhook (kept encrypted with the session)"),
    redirectUri: RedirectUri.optional().describe(
      `overrides the configuration's: https (http outside production); ${SESSION_PLACEHOLDER} is replaced`,
    ),
    expected_origin: webOrigin()
      .optional()
      .describe('dc-api: required; the origin of the page calling the DC API, https://host[:port] (http outside production)'),
    transaction_data: z.array(z.record(z.string(), z.unknown())).optional().describe("overrides the configuration's"),
    clientIdPrefix: z.enum(['x509_hash', 'x509_san_dns']).optional().describe('ours: default x509_hash (HAIP)'),
    responseMode: z.enum(['direct_post', 'direct_post.jwt']).optional().describe('ours: default direct_post.jwt (encrypted)'),
    requestUriMethod: z.enum(['get', 'post']).optional().describe('ours: post adds request_uri_method=post'),
  })
  .meta({ examples: [{ response_type: 'uri', requestId: 'adult' }] });
const OfferResponse = z.object({
  uri: z.string().describe('openid4vp:// URI with client_id and request_uri'),
  session: z.string(),
  requestUri: z.string(),
  expiresAt: z.string(),
  dcApiRequest: z
    .object({ protocol: z.literal('openid4vp-v1-signed'), data: z.object({ request: z.string() }) })
    .optional()
    .describe('dc-api: pass as navigator.credentials.get({ digital: { requests: [dcApiRequest] } })'),
  responseUri: z.string().optional().describe("dc-api: POST { response, origin? } here with the credential's data"),
});
const DcApiResponseBody = z.object({
  response: z.string().min(1).describe('`data.response` of the DigitalCredential: the JWE (dc_api.jwt)'),
  origin: z.string().optional().describe('the origin the page ran at; must be the expected origin when given'),
});
const Handle = z.object({ handle: z.string() });

export function verificationRoutes(app: App, offers: PresentationOffers, protocol: PresentationProtocol) {
  app.post(
    '/api/verifier/offer',
    {
      config: { access: { roles: ['presentation:request'], tenant: 'required' } },
      schema: {
        tags: ['verification'],
        summary: 'Create a presentation request (OpenID4VP 1.0 with DCQL)',
        description: 'A client whose allowedPresentationConfigs excludes requestId gets 403.',
        body: OfferBody,
        response: { 201: OfferResponse },
      },
    },
    async (request, reply) => reply.code(201).send(await offers.create(contextOf(request), tenantOf(request), request.body)),
  );

  const tags = ['wallet: OpenID4VP'];
  const jar = 'application/oauth-authz-req+jwt';
  app.get(
    '/presentations/:handle/request',
    {
      schema: {
        tags,
        summary: 'The signed request object (JAR); it can be fetched once',
        description:
          'The request_uri of a presentation request: a JWT (application/oauth-authz-req+jwt) signed with the key chain of the request, its certificate chain in x5c, with the DCQL query, nonce, state and where to respond. A second fetch answers 404.',
        params: Handle,
      },
    },
    async (request, reply) =>
      reply
        .type(jar)
        .header('cache-control', 'no-store')
        .send(await protocol.requestObject(request.params.handle)),
  );

  app.post(
    '/presentations/:handle/request',
    {
      schema: {
        tags,
        summary: 'The signed request object by POST (request_uri_method=post), echoing wallet_nonce',
        description: 'As the GET, for wallets that post their capabilities and a wallet_nonce, which the signed request then carries.',
        params: Handle,
        body: z.record(z.string(), z.unknown()).nullish(),
      },
    },
    async (request, reply) => {
      const walletNonce = request.body?.wallet_nonce;
      const jwt = await protocol.requestObject(request.params.handle, typeof walletNonce === 'string' ? walletNonce : undefined);
      return reply.type(jar).header('cache-control', 'no-store').send(jwt);
    },
  );

  app.post(
    '/presentations/:handle/response',
    {
      schema: {
        tags,
        summary: 'Response endpoint (direct_post or direct_post.jwt)',
        description:
          'Form-encoded wallet answer: vp_token and state (direct_post), or response, a JWE encrypted to the key of the request (direct_post.jwt). Every presentation is verified before the session completes; the answer carries a redirect_uri when the request has one. Errors use the OAuth shape.',
        params: Handle,
        body: z.record(z.string(), z.unknown()).nullish(),
      },
    },
    async (request, reply) =>
      reply.header('cache-control', 'no-store').send(await protocol.respond(request.params.handle, request.body ?? {})),
  );

  // The integrator's page posts the wallet's answer from the browser, so the endpoint answers CORS
  // requests, for the one origin the session was created for and nothing else.
  const allowOrigin = async (handle: string, origin: string | undefined, reply: FastifyReply) => {
    const expected = await protocol.browserOrigin(handle);
    if (origin && expected && origin === expected) reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
  };
  app.options(
    '/presentations/:handle/dc-api-response',
    { schema: { tags, summary: 'CORS preflight for the page of the session origin', params: Handle } },
    async (request, reply) => {
      await allowOrigin(request.params.handle, request.headers.origin, reply);
      return reply
        .header('access-control-allow-methods', 'POST')
        .header('access-control-allow-headers', 'content-type')
        .header('access-control-max-age', '600')
        .code(204)
        .send();
    },
  );

  app.post(
    '/presentations/:handle/dc-api-response',
    {
      schema: {
        tags,
        summary: "Response of a dc-api request, posted by the integrator's page (OpenID4VP 1.0 appendix A.4, dc_api.jwt)",
        params: Handle,
        body: DcApiResponseBody,
      },
    },
    async (request, reply) => {
      await allowOrigin(request.params.handle, request.headers.origin, reply);
      return reply.header('cache-control', 'no-store').send(await protocol.respond(request.params.handle, request.body, 'dc-api'));
    },
  );
}
