// The chained authorization server's endpoints, under the management API's prefix (where the spec
// puts its PAR endpoint) yet public and wallet-facing: no access token, errors in the OAuth shape.
import { z } from 'zod';
import type { CredentialConfigService } from '../../credential-configs/service.js';
import type { App } from '../../platform/http/types.js';
import type { PushedAuthorizationEndpoint } from '../authorization/par.js';
import { unsupportedGrantType } from '../errors.js';
import { AUTHORIZATION_CODE_GRANT, REFRESH_TOKEN_GRANT } from '../grants.js';
import type { IssuerDirectory } from '../issuers.js';
import { chainedServerMetadata, configurationScopes } from '../metadata/metadata.js';
import { clientRequest, noStore, ProtocolBody, TenantParams, WALLET_TAGS } from '../routes-support.js';
import type { TokenEndpoint } from '../token/endpoint.js';
import { CHAINED_PATH, chainedUrls } from '../urls.js';
import type { ChainedLogin } from './login.js';

const config = { access: { public: true }, errorFormat: 'oauth' } as const;
const base = `/api/issuers/:tenantId/${CHAINED_PATH}`;
const GRANTS = new Set([AUTHORIZATION_CODE_GRANT, REFRESH_TOKEN_GRANT]);

export interface ChainedEndpoints {
  issuers: IssuerDirectory;
  par: PushedAuthorizationEndpoint;
  login: ChainedLogin;
  token: TokenEndpoint;
  /** The configurations, whose scope values the metadata lists. */
  configs: CredentialConfigService;
  /** Throws when the tenant has no enabled chained authorization server. */
  requireEnabled(tenantId: string): Promise<void>;
}

export function chainedAuthorizationRoutes(app: App, publicUrl: string, endpoints: ChainedEndpoints) {
  const { issuers, par, login, token, configs, requireEnabled } = endpoints;

  app.get(
    `/.well-known/oauth-authorization-server${base}`,
    {
      config,
      schema: {
        tags: WALLET_TAGS,
        summary: 'Authorization server metadata (RFC 8414) of the chained authorization server',
        description:
          'The chained authorization server of the tenant: its identifier is {PUBLIC_URL}/api/issuers/{tenantId}/chained-as-vp. 404 invalid_request when the issuer settings have no enabled chainedAuthorizationServer (so for every endpoint of this server).',
        params: TenantParams,
      },
    },
    async (request) => {
      await requireEnabled(request.params.tenantId);
      const issuer = await issuers.get(request.params.tenantId);
      const scopes = configurationScopes(await configs.list(issuer.tenantId));
      return chainedServerMetadata(issuer, chainedUrls(publicUrl, issuer.tenantId), scopes);
    },
  );

  app.post(
    `${base}/par`,
    {
      config,
      schema: {
        tags: WALLET_TAGS,
        summary: 'Pushed authorization request (RFC 9126) of the chained authorization server',
        description:
          "As the built-in PAR endpoint (/issuers/{tenantId}/par), for credential offers whose authorization_server is this chained server: form-encoded client_id, response_type=code, redirect_uri (https; http only to a loopback address; or a private-use scheme in reverse-domain form such as com.example.wallet:/cb; no fragment), code_challenge with code_challenge_method=S256 (required), optional state, issuer_state of such an offer (an offer of the built-in server is unknown here, and the other way round), authorization_details and/or scope. Without issuer_state the request is wallet-initiated (OpenID4VCI 1.0 section 3): the login at the upstream provider identifies the person, so it may name any configuration of the issuer without interactive authorization steps. An optional DPoP header (dpop, DPoP: the same header) or dpop_jkt binds the coming token request to that key. Wallet attestation (OAuth-Client-Attestation and OAuth-Client-Attestation-PoP, the PoP aud being this server's identifier) as the issuer settings require. Answers 201 {request_uri, expires_in} (single use, 60 seconds). Errors use the OAuth shape {error, error_description}.",
        params: TenantParams,
        headers: z.looseObject({ dpop: z.string().optional().describe('a DPoP proof (RFC 9449) for this URL') }),
        body: ProtocolBody,
      },
    },
    async (request, reply) => {
      await requireEnabled(request.params.tenantId);
      return noStore(reply)
        .code(201)
        .send(await par.push(clientRequest(publicUrl, request)));
    },
  );

  app.get(
    `${base}/authorize`,
    {
      config,
      schema: {
        tags: WALLET_TAGS,
        summary: 'Authorization endpoint of the chained authorization server: sends the user to log in at the upstream OpenID Provider',
        description:
          "client_id and request_uri from this server's PAR endpoint are the whole query. Answers a 302 to the upstream provider's authorization endpoint (found by OpenID Connect Discovery of chainedAuthorizationServer.issuer) with response_type=code, the configured client_id and scopes, redirect_uri = the callback of this server, and a state, nonce and PKCE S256 challenge of its own. An unknown, expired or used request_uri (invalid_request_uri) or another client_id (invalid_request) is a 400 here; a redeemed or expired offer is redirected to the wallet with invalid_request, an unreachable provider with temporarily_unavailable (each with state and iss).",
        params: TenantParams,
        querystring: z.looseObject({
          client_id: z.unknown().optional().describe("the wallet's client_id, as in its pushed request"),
          request_uri: z.unknown().optional().describe('the request_uri PAR answered (single use)'),
        }),
      },
    },
    async (request, reply) => {
      const location = await login.authorize({ tenantId: request.params.tenantId, query: request.query });
      return noStore(reply).redirect(location, 302);
    },
  );

  app.get(
    `${base}/callback`,
    {
      config,
      schema: {
        tags: WALLET_TAGS,
        summary: 'Redirection endpoint for the upstream OpenID Provider: ends the login and sends the user back to the wallet',
        description:
          "Register {PUBLIC_URL}/api/issuers/{tenantId}/chained-as-vp/callback as redirect URI at the provider. Takes the provider's authorization response (state, code or error, iss per RFC 9207). The state is single use: unknown, expired, already used or of a replaced login is a 400 invalid_request here. Then the code is exchanged at the provider's token endpoint (client_secret_basic, PKCE), the ID token is validated (signature by a key of the provider's jwks_uri, asymmetric algorithms only; iss; aud = clientId, azp; exp; iat at most 10 minutes old; nonce of this login), userinfo is fetched when configured (its sub must be the ID token's), and the claims of chainedAuthorizationServer.claimMapping go into the session. Answers a 302 to the wallet's redirect_uri with code (single use, 60 seconds), state and iss = this server. A provider error, a refused code or an invalid ID token is redirected with access_denied, an unreachable provider with temporarily_unavailable; the reason is in the session log.",
        params: TenantParams,
        querystring: z.looseObject({
          state: z.unknown().optional(),
          code: z.unknown().optional(),
          error: z.unknown().optional(),
          error_description: z.unknown().optional(),
          iss: z.unknown().optional(),
        }),
      },
    },
    async (request, reply) => {
      const location = await login.callback({ tenantId: request.params.tenantId, query: request.query });
      return noStore(reply).redirect(location, 302);
    },
  );

  app.post(
    `${base}/token`,
    {
      config,
      schema: {
        tags: WALLET_TAGS,
        summary: 'Token endpoint of the chained authorization server (authorization code and refresh token grants; DPoP)',
        description:
          "As the built-in token endpoint (/issuers/{tenantId}/token) for the codes of this server: grant_type authorization_code with code, code_verifier (PKCE S256), redirect_uri and client_id as pushed, and a DPoP proof of the same key when the request was pushed with DPoP; or grant_type refresh_token. The access token is accepted by the issuer's credential endpoint. Other grant types: unsupported_grant_type. Wallet attestation as the issuer settings require (PoP aud: this server's identifier). Errors use the OAuth shape {error, error_description}.",
        params: TenantParams,
        headers: z.looseObject({ dpop: z.string().optional().describe('a DPoP proof (RFC 9449) for this URL') }),
        body: ProtocolBody,
      },
    },
    async (request, reply) => {
      await requireEnabled(request.params.tenantId);
      const grantType = request.body?.grant_type;
      if (typeof grantType !== 'string' || !GRANTS.has(grantType)) {
        throw unsupportedGrantType('this authorization server takes the authorization_code and refresh_token grants');
      }
      return noStore(reply).send(await token.exchange(clientRequest(publicUrl, request)));
    },
  );
}
