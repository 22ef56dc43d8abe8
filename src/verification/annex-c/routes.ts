// The endpoint the integrator's page posts an Annex C answer to, under the session's unguessable
// handle, with CORS for the session's expected origin only (as the dc-api-response endpoint).
import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import { allowSessionOrigin, sessionOriginPreflight } from '../browser-origin.js';

/** base64url of a DeviceResponse with a few documents fits easily; a larger body is refused unread. */
const MAX_RESPONSE_CHARS = 512 * 1024;

const AnnexCResponseBody = z.object({
  response: z
    .string()
    .min(1)
    .max(MAX_RESPONSE_CHARS)
    .describe('`data.response` of the DigitalCredential (protocol org-iso-mdoc): base64url(CBOR(["dcapi", {enc, cipherText}]))'),
  origin: z.string().max(2048).optional().describe('the origin the page ran at; must be the expected origin when given'),
});
const Handle = z.object({ handle: z.string().max(128) });

export interface AnnexCResponder {
  respond(handle: string, body: z.infer<typeof AnnexCResponseBody>): Promise<{ redirect_uri?: string }>;
  browserOrigin(handle: string): Promise<string | undefined>;
}

export function annexCRoutes(app: App, responder: AnnexCResponder) {
  const tags = ['wallet: ISO 18013-7'];
  const browserOrigin = (handle: string) => responder.browserOrigin(handle);
  sessionOriginPreflight(app, '/presentations/:handle/annex-c-response', { tags, params: Handle }, browserOrigin);

  app.post(
    '/presentations/:handle/annex-c-response',
    {
      schema: {
        tags,
        summary: "Response of an ISO/IEC 18013-7 Annex C request (org-iso-mdoc), posted by the integrator's page",
        description: [
          'JSON { response, origin? }: `response` is what navigator.credentials.get returned in the data of the DigitalCredential,',
          'base64url(CBOR(EncryptedResponse = ["dcapi", {"enc", "cipherText"}])), HPKE base mode with DHKEM(P-256, HKDF-SHA256),',
          'HKDF-SHA256 and AES-128-GCM to the recipient key of the request, info = CBOR(SessionTranscript). The session transcript is',
          '[null, null, ["dcapi", SHA-256(CBOR([encryptionInfo, expected_origin]))]] with the expected_origin of the offer.',
          'The DeviceResponse inside is verified over it (issuer signature and trust, MSO validity and digests, device signature),',
          "then the status of each document and the configuration's DCQL query; the session completes (webhook, events) and the",
          'answer is {} or { redirect_uri } when the request has one. Any failure fails the session with its reason and answers',
          '400 invalid_request; an unknown handle 404; a session already answered, expired or of another flow 400.',
        ].join(' '),
        params: Handle,
        body: AnnexCResponseBody,
      },
    },
    async (request, reply) => {
      await allowSessionOrigin(browserOrigin, request.params.handle, request.headers.origin, reply);
      return reply.header('cache-control', 'no-store').send(await responder.respond(request.params.handle, request.body));
    },
  );
}
