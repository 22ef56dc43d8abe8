// The management request that creates a presentation request, and what it answers.
import { z } from 'zod';
import { webOrigin } from '../../platform/http/web-urls.js';
import { RedirectUri, SESSION_PLACEHOLDER } from '../../presentation-configs/schemas.js';

export const OfferBody = z
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
export const OfferResponse = z.object({
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
export type PresentationOfferRequest = z.infer<typeof OfferBody>;
