// The two endpoints of interactive authorization (one flow, two drafts: see faces.ts) and the web
// step's result callback.
import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import { REQUEST_URI_LIFETIME_SECONDS } from '../authorization/schemas.js';
import { clientRequest, noStore, ProtocolBody, TenantParams, WALLET_TAGS } from '../routes-support.js';
import type { InteractiveAuthorizationEndpoint } from './endpoint.js';
import { AUTHORIZATION_CHALLENGE, type Face, INTERACTIVE_AUTHORIZATION_ENDPOINT } from './faces.js';
import {
  AUTH_SESSION_LIFETIME_SECONDS,
  WEB_RESULT_MAX_LIFETIME_SECONDS,
  WEB_RESULT_TYPE,
  WEB_SESSION_LIFETIME_SECONDS,
} from './schemas.js';
import type { WebSteps } from './web-step.js';

/** What both endpoints share: the first request, client authentication, the steps, the web step and the code. */
const FIRST_REQUEST =
  'First request: interaction_types_supported (comma-separated, see below) with either the parameters of a pushed authorization request (as /par takes them: client_id, response_type=code, redirect_uri, code_challenge with S256, state, issuer_state, authorization_details and/or scope, optional DPoP) or client_id and the request_uri of a request pushed before (single use). Client authentication as at PAR: wallet attestation headers, required when the issuer settings say so; a flow started by an attested wallet instance continues only with attestations of that instance. The server runs the iaeActions of the requested credential configurations in order; a flow is bound to the authorization request it started for (a new push for the offer ends it). missing_interaction_type (400) when the wallet does not list a type the actions need. Every later request of the flow goes to the endpoint it started at, with the latest auth_session (single use, distinct per answer, bound to the client, good for ' +
  `${AUTH_SESSION_LIFETIME_SECONDS} seconds); the other endpoint does not know it.`;

const presentationStep = (responseModes: string, audience: string) =>
  `The presentation step carries openid4vp_request: {request}, a signed OpenID4VP request object (x509_hash client_id of the presentation configuration's access certificate, response_mode ${responseModes} as the action asks (encrypted by default; client_metadata.jwks then holds an ephemeral ECDH-ES key), nonce, dcql_query, expected_origins: [the origin of this endpoint], verifier_info). The wallet answers with a follow-up: auth_session and openid4vp_response, a JSON object: {response: <JWE to that key, ECDH-ES with A128GCM or A256GCM, of {vp_token}>} when encrypted, {vp_token} when plain, or {error, error_description}. dc+sd-jwt presentations only; the KB-JWT aud must be ${audience} and its nonce the request's: a presentation bound to the other endpoint is refused. Verified like any presentation: issuer trust (the tenant's trust lists), signature, key binding, status list, DCQL. A failing or declined presentation ends the flow: access_denied (400); a new first request starts over.`;

const webStep = (endpoint: string) =>
  `The web step carries request_uri and expires_in (${REQUEST_URI_LIFETIME_SECONDS} s): the wallet opens the authorization endpoint with client_id and that request_uri in the browser; it redirects to the integrator's page (see POST /issuers/{tenantId}/iae/web-result). Afterwards the browser comes back to the wallet's redirect_uri with code (last step) or auth_session; with auth_session the wallet sends a follow-up to ${endpoint}: auth_session and code_verifier (PKCE of the first request).`;

const CODE =
  "The authorization code (single use, 60 s) is for the token endpoint (authorization_code grant with the code_verifier and redirect_uri of the first request). What the steps produced (verified disclosed claims, the web result claims) is laid over the credential fields' defaults and sent to the attribute provider or webhook as `authorization`.";

const ACE_DESCRIPTION = [
  'Authorization Challenge Endpoint for interactive authorization as the OpenID4VCI 1.1 draft of June 2026 specifies it (section 6, a profile of OAuth 2.0 for First-Party Applications, draft-ietf-oauth-first-party-apps-03 section 5), advertised as authorization_challenge_endpoint. Form-encoded; answers application/json; errors use the OAuth shape {error, error_description}.',
  `${FIRST_REQUEST} Interaction types: urn:openid:dcp:ia:openid4vp_presentation and urn:openid:dcp:ia:auth_via_web.`,
  'Each step is asked for with 401 {error: insufficient_authorization, interaction_type_required, auth_session, ...}. An auth_session that is unknown, expired, used, or of a flow started at the interactive authorization endpoint: 400 invalid_session.',
  `- urn:openid:dcp:ia:openid4vp_presentation: ${presentationStep('ia_post.jwt or ia_post', "ia: followed by the origin of this endpoint (the draft's derived origin, e.g. ia:https://issuer.example)")}`,
  `- urn:openid:dcp:ia:auth_via_web: ${webStep('this endpoint')}`,
  `After the last step: 200 {authorization_code}. ${CODE}`,
].join('\n\n');

const IAE_DESCRIPTION = [
  'Interactive Authorization Endpoint of the OpenID4VCI 1.1 drafts before June 2026, advertised as interactive_authorization_endpoint and kept for the wallets that implement them; the current draft moved interactive authorization to the authorization challenge endpoint (POST /issuers/{tenantId}/authorize-challenge). Form-encoded; answers 200 application/json; errors use the OAuth shape {error, error_description}.',
  `${FIRST_REQUEST} Interaction types, in either spelling: the URNs of the March 2026 draft (urn:openid:dcp:iae:openid4vp_presentation, urn:openid:dcp:iae:redirect_to_web) or the bare names of the drafts before (openid4vp_presentation, redirect_to_web); each answer names its type as the wallet listed it.`,
  'Each step is answered {status: require_interaction, type, auth_session, ...}. An auth_session that is unknown, expired, used, or of a flow started at the authorization challenge endpoint: 400 invalid_request.',
  `- openid4vp_presentation: ${presentationStep('iae_post.jwt or iae_post', "iae: followed by this endpoint's origin (the drafts since January 2026) or by its URL (the drafts before)")} The request also names this endpoint in expected_url.`,
  `- redirect_to_web: ${webStep('this endpoint')}`,
  `After the last step: {status: ok, code}. ${CODE}`,
].join('\n\n');

const WEB_RESULT_DESCRIPTION = [
  `Where the integrator's page ends a web step of interactive authorization. The page was opened with query parameters web_session (single use, ${WEB_SESSION_LIFETIME_SECONDS} s), callback_uri (this URL) and session (the issuance session id).`,
  `Form-encoded, one parameter: result, a compact JWS signed with the private key whose public key is the step's callbackKey (header typ ${WEB_RESULT_TYPE}, alg ES256/ES384/ES512 matching the key's curve, no crit); claims: aud = this URL, web_session, iat (within the last ${WEB_RESULT_MAX_LIFETIME_SECONDS} s), exp (not past, at most ${WEB_RESULT_MAX_LIFETIME_SECONDS} s after iat), and either claims (an object laid over the credential's field defaults) or error (the user did not complete the step) with an optional error_description.`,
  "A result that is not signed by that key, names an unknown, expired or used web_session, another aud, or is stale, is refused 400 invalid_request and changes nothing. Otherwise 303 to the wallet's redirect_uri with code (after the last step), or with auth_session (the wallet continues at the endpoint the flow started at), or with error=access_denied (error result), each with state and iss (RFC 9207).",
].join('\n\n');

export function interactiveAuthorizationRoutes(app: App, publicUrl: string, endpoint: InteractiveAuthorizationEndpoint, web: WebSteps) {
  const faces: { path: string; face: Face; summary: string; description: string }[] = [
    {
      path: '/issuers/:tenantId/authorize-challenge',
      face: AUTHORIZATION_CHALLENGE,
      summary:
        'Authorization challenge endpoint (interactive authorization, current draft): a presentation and/or a web step, ending with an authorization code',
      description: ACE_DESCRIPTION,
    },
    {
      path: '/issuers/:tenantId/iae',
      face: INTERACTIVE_AUTHORIZATION_ENDPOINT,
      summary:
        'Interactive authorization endpoint (earlier drafts): authorization with a presentation and/or a web step, ending with an authorization code',
      description: IAE_DESCRIPTION,
    },
  ];
  for (const { path, face, summary, description } of faces) {
    app.post(
      path,
      { schema: { tags: WALLET_TAGS, summary, description, params: TenantParams, body: ProtocolBody } },
      async (request, reply) => {
        const { status, body } = face.render(await endpoint.handle(face, clientRequest(publicUrl, request)));
        return noStore(reply).code(status).send(body);
      },
    );
  }

  app.post(
    '/issuers/:tenantId/iae/web-result',
    {
      schema: {
        tags: WALLET_TAGS,
        summary:
          "Web step result: the integrator's signed result ends a web step (auth_via_web, redirect_to_web) and sends the browser back to the wallet",
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
