// The interactive authorization endpoint and the web step's result callback.
import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import { REQUEST_URI_LIFETIME_SECONDS } from '../authorization/schemas.js';
import { clientRequest, noStore, ProtocolBody, TenantParams, WALLET_TAGS } from '../routes-support.js';
import type { InteractiveAuthorizationEndpoint } from './endpoint.js';
import {
  AUTH_SESSION_LIFETIME_SECONDS,
  IAE_AUDIENCE_PREFIX,
  WEB_RESULT_MAX_LIFETIME_SECONDS,
  WEB_RESULT_TYPE,
  WEB_SESSION_LIFETIME_SECONDS,
} from './schemas.js';
import type { WebSteps } from './web-step.js';

const IAE_DESCRIPTION = [
  'OpenID4VCI 1.1 (draft) interactive authorization endpoint, advertised as interactive_authorization_endpoint. Form-encoded; answers 200 application/json; errors use the OAuth shape {error, error_description}.',
  `First request: interaction_types_supported (comma-separated: openid4vp_presentation, redirect_to_web) with either the parameters of a pushed authorization request (as /par takes them: client_id, response_type=code, redirect_uri, code_challenge with S256, state, issuer_state, authorization_details and/or scope, optional DPoP) or client_id and the request_uri of a request pushed before (single use). Client authentication as at PAR: wallet attestation headers, required when the issuer settings say so; a flow started by an attested wallet instance continues only with attestations of that instance.`,
  'The server runs the iaeActions of the requested credential configurations in order. missing_interaction_type (400) when the wallet does not support a type the actions need. Each step is answered {status: require_interaction, type, auth_session} (auth_session: single use, distinct per answer, bound to the client, good for ' +
    `${AUTH_SESSION_LIFETIME_SECONDS} seconds):`,
  `- type openid4vp_presentation with openid4vp_request: {request}, a signed OpenID4VP request object (x509_hash client_id of the presentation configuration's access certificate, response_mode iae_post.jwt (default; client_metadata.jwks holds an ephemeral ECDH-ES key) or iae_post as the action says, nonce, dcql_query, expected_origins: [the origin of this endpoint], expected_url: this endpoint, verifier_info). The wallet answers with a follow-up request: auth_session and openid4vp_response, a JSON object: {response: <JWE to that key, ECDH-ES with A128GCM or A256GCM, of {vp_token}>} for iae_post.jwt, {vp_token} for iae_post, or {error, error_description}. dc+sd-jwt presentations only; the KB-JWT aud must be ${IAE_AUDIENCE_PREFIX} followed by this endpoint's URL and its nonce the request's. Verified like any presentation: issuer trust (the tenant's trust lists), signature, key binding, status list, DCQL. A failing or declined presentation ends the flow: access_denied (400); a new first request starts over.`,
  `- type redirect_to_web with request_uri and expires_in (${REQUEST_URI_LIFETIME_SECONDS} s): the wallet opens the authorization endpoint with client_id and that request_uri in the browser; it redirects to the integrator's page (see POST /issuers/{tenantId}/iae/web-result). Afterwards the browser comes back to the wallet's redirect_uri with code (last step) or auth_session; with auth_session the wallet sends a follow-up: auth_session and code_verifier (PKCE of the first request).`,
  "After the last step: {status: ok, code}, an authorization code (single use, 60 s) for the token endpoint (authorization_code grant with the code_verifier and redirect_uri of the first request). What the steps produced (verified disclosed claims, the web result claims) is laid over the credential fields' defaults and sent to the attribute provider or webhook as `authorization`.",
].join('\n\n');

const WEB_RESULT_DESCRIPTION = [
  `Where the integrator's page ends a web step of interactive authorization. The page was opened with query parameters web_session (single use, ${WEB_SESSION_LIFETIME_SECONDS} s), callback_uri (this URL) and session (the issuance session id).`,
  `Form-encoded, one parameter: result, a compact JWS signed with the private key whose public key is the step's callbackKey (header typ ${WEB_RESULT_TYPE}, alg ES256/ES384/ES512 matching the key's curve, no crit); claims: aud = this URL, web_session, iat (within the last ${WEB_RESULT_MAX_LIFETIME_SECONDS} s), exp (not past, at most ${WEB_RESULT_MAX_LIFETIME_SECONDS} s after iat), and either claims (an object laid over the credential's field defaults) or error (the user did not complete the step) with an optional error_description.`,
  "A result that is not signed by that key, names an unknown, expired or used web_session, another aud, or is stale, is refused 400 invalid_request and changes nothing. Otherwise 303 to the wallet's redirect_uri with code (after the last step), or with auth_session (the wallet continues at the interactive authorization endpoint), or with error=access_denied (error result), each with state and iss (RFC 9207).",
].join('\n\n');

export function interactiveAuthorizationRoutes(app: App, publicUrl: string, endpoint: InteractiveAuthorizationEndpoint, web: WebSteps) {
  app.post(
    '/issuers/:tenantId/iae',
    {
      schema: {
        tags: WALLET_TAGS,
        summary:
          'Interactive authorization endpoint: authorization with a presentation and/or a web step, ending with an authorization code',
        description: IAE_DESCRIPTION,
        params: TenantParams,
        body: ProtocolBody,
      },
    },
    async (request, reply) => noStore(reply).send(await endpoint.handle(clientRequest(publicUrl, request))),
  );

  app.post(
    '/issuers/:tenantId/iae/web-result',
    {
      schema: {
        tags: WALLET_TAGS,
        summary: "Web step result: the integrator's signed result ends a redirect_to_web step and sends the browser back to the wallet",
        description: WEB_RESULT_DESCRIPTION,
        params: TenantParams,
        body: z.looseObject({ result: z.unknown().optional().describe('the signed result (compact JWS)') }).optional(),
      },
    },
    async (request, reply) => {
      const location = await web.complete(request.params.tenantId, (request.body as Record<string, unknown> | undefined) ?? {});
      return noStore(reply).redirect(location, 303);
    },
  );
}
