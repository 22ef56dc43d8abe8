// The management request that creates a presentation request, and what it answers.
import { z } from 'zod';
import { webOrigin } from '../../platform/http/web-urls.js';
import { RedirectUri, SESSION_PLACEHOLDER } from '../../presentation-configs/schemas.js';

export const OfferBody = z
  .strictObject({
    response_type: z
      .enum(['uri', 'dc-api', 'iso-18013-7'])
      .describe(
        '`uri` (openid4vp:// for a wallet), `dc-api` (OpenID4VP over the browser Digital Credentials API) or `iso-18013-7` (ISO/IEC 18013-7 Annex C over the Digital Credentials API, protocol org-iso-mdoc: mso_mdoc queries only, no transaction_data)',
      ),
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
      `overrides the configuration's: https (http outside production); ${SESSION_PLACEHOLDER} is replaced. The wallet is sent there with a response_code, which alone releases the result (POST /api/verifier/result)`,
    ),
    expected_origin: webOrigin()
      .optional()
      .describe(
        'dc-api and iso-18013-7: required; the origin of the page calling the DC API, https://host[:port] (http outside production). Annex C binds the response to it (session transcript)',
      ),
    transaction_data: z.array(z.record(z.string(), z.unknown())).optional().describe("overrides the configuration's"),
    clientIdPrefix: z
      .enum(['x509_hash', 'x509_san_dns', 'openid_federation'])
      .optional()
      .describe(
        'ours: default x509_hash (HAIP). openid_federation (OpenID4VP 1.0 section 5.9.3; response_type uri only): client_id is openid_federation:<entity identifier of the federation settings>, the request object is signed with an access key listed in the openid_credential_verifier metadata of the entity configuration ({credential_issuer}/.well-known/openid-federation) and carries the trust chain to a trust anchor of the settings in its trust_chain header; 400 when the tenant has no federation settings, trust anchor or authorityHints, or no chain resolves',
      ),
    responseMode: z
      .enum(['direct_post', 'direct_post.jwt'])
      .optional()
      .describe(
        'ours: default direct_post.jwt (encrypted); with clientIdPrefix openid_federation only direct_post (the default there: the per-session encryption key cannot stand in federation metadata)',
      ),
    requestUriMethod: z.enum(['get', 'post']).optional().describe('ours: post adds request_uri_method=post'),
  })
  .meta({ examples: [{ response_type: 'uri', requestId: 'adult' }] });
const AnnexCRequest = z
  .object({
    protocol: z.literal('org-iso-mdoc'),
    data: z.object({
      deviceRequest: z
        .string()
        .describe('base64url(CBOR(DeviceRequest)), version 1.1: one DocRequest per credential query, each with ReaderAuth'),
      encryptionInfo: z.string().describe('base64url(CBOR(["dcapi", {nonce, recipientPublicKey}])), the recipient key of this session'),
    }),
  })
  .describe('ISO/IEC 18013-7 Annex C');
export const OfferResponse = z.object({
  uri: z.string().optional().describe('openid4vp:// URI with client_id and request_uri; absent for iso-18013-7'),
  session: z.string(),
  requestUri: z.string().optional().describe('absent for iso-18013-7'),
  expiresAt: z.string(),
  dcApiRequest: z
    .union([z.object({ protocol: z.literal('openid4vp-v1-signed'), data: z.object({ request: z.string() }) }), AnnexCRequest])
    .optional()
    .describe('dc-api and iso-18013-7: pass as navigator.credentials.get({ digital: { requests: [dcApiRequest] } })'),
  responseUri: z
    .string()
    .optional()
    .describe("dc-api and iso-18013-7: POST { response, origin? } here with the `response` of the DigitalCredential's data"),
  webhookSigningSecret: z
    .string()
    .optional()
    .describe(
      'only with a `webhook` in the request: the Standard Webhooks secret (whsec_...) that signs its delivery (webhook-signature header), shown this once',
    ),
});
export type PresentationOfferRequest = z.infer<typeof OfferBody>;
