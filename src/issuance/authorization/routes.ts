// The authorization code flow's front half: the wallet pushes its authorization request, then sends
// the user agent to the authorization endpoint with the request_uri it got.
import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import { clientRequest, noStore, ProtocolBody, TenantParams, WALLET_TAGS } from '../routes-support.js';
import type { AuthorizationEndpoint } from './authorize.js';
import type { PushedAuthorizationEndpoint } from './par.js';
import { CHALLENGE_LIFETIME_SECONDS, type WalletAttestations } from './wallet-attestation.js';

export function authorizationRoutes(
  app: App,
  publicUrl: string,
  par: PushedAuthorizationEndpoint,
  authorization: AuthorizationEndpoint,
  attestations: WalletAttestations,
) {
  app.post(
    '/issuers/:tenantId/par',
    {
      schema: {
        tags: WALLET_TAGS,
        summary: 'Pushed authorization request (RFC 9126), required before the authorization endpoint',
        description:
          'Form-encoded. client_id (a public client: any id, remembered and checked at the authorization and token endpoints), response_type=code, redirect_uri (https; http only to a loopback address: localhost, 127.0.0.0/8 or [::1]; or a private-use scheme of a native wallet in reverse-domain form such as com.example.wallet:/cb, per RFC 8252; no fragment; any other scheme is invalid_request), code_challenge with code_challenge_method=S256 (required), optional state, issuer_state from an authorization_code credential offer of this issuer, and authorization_details (JSON array of {type: openid_credential, credential_configuration_id}, each in the offer) and/or scope (the `scope` of offered credential configurations, as the issuer metadata lists it for each: by default the configuration id; other values are ignored, invalid_scope when none is left). Without issuer_state the request is wallet-initiated (OpenID4VCI 1.0 section 3): it may name any configuration of the issuer whose interactive authorization steps identify the person (then run at the interactive authorization endpoint); any other is invalid_request saying why. Each opens a session, so an address gets WALLET_INITIATED_LIMIT_PER_ADDRESS of them per WALLET_INITIATED_WINDOW seconds at an issuer, and the issuer WALLET_INITIATED_LIMIT_PER_TENANT from all addresses; beyond, 429 invalid_request with Retry-After (the first request of the interactive authorization endpoint without issuer_state counts the same). An optional DPoP proof (or dpop_jkt) binds the coming token request to that key. Answers 201 {request_uri, expires_in}: the request_uri works once, for 60 seconds. A new request for the same offer replaces the one before. Wallet (client) attestation (attest_jwt_client_auth): OAuth-Client-Attestation (typ oauth-client-attestation+jwt, x5c chaining to a wallet provider anchor: walletProviders of the issuer settings or a walletIssuance entity of the trust lists of the tenant, sub = client_id, cnf.jwk) and OAuth-Client-Attestation-PoP (typ oauth-client-attestation-pop+jwt, signed by cnf.jwk, aud = the issuer identifier, unique jti, iat within 5 minutes, challenge from the challenge endpoint); required when the issuer settings say walletAttestationRequired, verified whenever sent (invalid_client, 401; use_attestation_challenge with a fresh OAuth-Client-Attestation-Challenge header). Errors use the OAuth shape {error, error_description}.',
        params: TenantParams,
        body: ProtocolBody,
      },
    },
    async (request, reply) =>
      noStore(reply)
        .code(201)
        .send(await par.push(clientRequest(publicUrl, request))),
  );

  app.get(
    '/issuers/:tenantId/authorize',
    {
      schema: {
        tags: WALLET_TAGS,
        summary: 'Authorization endpoint: client_id and request_uri from PAR; redirects with the authorization code',
        description:
          "Only pushed requests are accepted: client_id and request_uri (single use) are the whole query. The user was identified when the offer was made (issuer_state binds it), so the answer is at once a 302 to the pushed redirect_uri with code, state and iss (RFC 9207). Two exceptions: a request_uri handed out by a redirect_to_web step of the interactive authorization endpoint redirects (302) to the integrator's page of that step; and a request for a credential configuration with iaeActions is refused here (redirected with error=invalid_request naming the interactive_authorization_endpoint), since only that endpoint runs its steps. An unknown, expired or used request_uri (invalid_request_uri) or another client_id (invalid_request) is a 400 here, since the redirect_uri is not trusted yet; later errors are redirected with error, error_description, state and iss.",
        params: TenantParams,
        // Documented as the two parameters it takes; each is checked by the endpoint's own steps, so
        // that a bad one gets the OAuth error rather than a validation problem.
        querystring: z.looseObject({
          client_id: z.unknown().optional().describe("the wallet's client_id, as in its pushed request"),
          request_uri: z.unknown().optional().describe('the request_uri PAR answered (single use)'),
        }),
      },
    },
    async (request, reply) => {
      const location = await authorization.authorize({ tenantId: request.params.tenantId, query: request.query });
      return noStore(reply).redirect(location, 302);
    },
  );

  app.post(
    '/issuers/:tenantId/challenge',
    {
      schema: {
        tags: WALLET_TAGS,
        summary: 'Challenge endpoint of attestation-based client authentication: a fresh challenge for the wallet attestation proof',
        description: `No body. Answers 200 {attestation_challenge}: a single-use value for the challenge claim of the next OAuth-Client-Attestation-PoP, good for ${CHALLENGE_LIFETIME_SECONDS} seconds. Required in every proof when the issuer settings say walletAttestationChallengeRequired.`,
        params: TenantParams,
      },
    },
    async (request, reply) => {
      const challenge = await attestations.challenge(request.params.tenantId);
      return noStore(reply).send({ attestation_challenge: challenge });
    },
  );
}
