import type { App } from '../../platform/http/types.js';
import { clientRequest, noStore, ProtocolBody, TenantParams, WALLET_TAGS } from '../routes-support.js';
import type { TokenEndpoint } from './endpoint.js';

export function tokenRoutes(app: App, publicUrl: string, token: TokenEndpoint) {
  app.post(
    '/issuers/:tenantId/token',
    {
      schema: {
        tags: WALLET_TAGS,
        summary: 'Token endpoint (pre-authorized code, authorization code and refresh token grants; optional DPoP)',
        description:
          'Form-encoded (application/x-www-form-urlencoded) as OAuth 2.0 requires. grant_type urn:ietf:params:oauth:grant-type:pre-authorized_code: pre-authorized_code, and tx_code when the offer asked for one (wrong codes count toward a lock-out). grant_type authorization_code: code (single use; a second use revokes the tokens the first obtained), code_verifier (PKCE S256), redirect_uri and client_id as pushed (client_id may be left out when a client attestation names it); a DPoP proof of the same key when the request was pushed with DPoP. Returns a refresh_token too (issuer settings: refreshTokenLifetimeSeconds; 0: none), authorization_details with credential_identifiers for what was requested by authorization_details, and scope with the scope values granted when the request named credentials by scope (unknown values were ignored; those configurations are requested by credential_configuration_id). grant_type refresh_token: refresh_token (rotating: each use returns a new one; reusing a spent one revokes every token of the session), with a proof of its DPoP key when it was obtained with DPoP. A DPoP header binds the access token to the wallet key (required when the issuer settings say so). Wallet (client) attestation (attest_jwt_client_auth): OAuth-Client-Attestation and OAuth-Client-Attestation-PoP headers, for every grant; required when the issuer settings say walletAttestationRequired, verified whenever sent (invalid_client, 401; use_attestation_challenge with a fresh OAuth-Client-Attestation-Challenge header when a challenge is required and missing, unknown or used). Errors use the OAuth shape {error, error_description}.',
        params: TenantParams,
        body: ProtocolBody,
      },
    },
    async (request, reply) => noStore(reply).send(await token.exchange(clientRequest(publicUrl, request))),
  );
}
