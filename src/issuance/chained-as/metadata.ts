// The chained authorization server's metadata (RFC 8414): PAR required, PKCE S256, the authorization
// code and refresh token grants, DPoP and wallet attestation as the built-in server has them. Its
// challenge endpoint is the built-in one's: challenges belong to the issuer, either server takes them.
import { ATTESTATION_ALGORITHMS, ATTESTATION_AUTH_METHOD } from '../authorization/wallet-attestation.js';
import { PROOF_ALGORITHMS } from '../credential-request/proofs.js';
import { AUTHORIZATION_CODE_GRANT, REFRESH_TOKEN_GRANT } from '../grants.js';
import type { Issuer } from '../issuers.js';
import type { ChainedUrls } from '../urls.js';

export function chainedServerMetadata({ urls, settings }: Issuer, chained: ChainedUrls) {
  return {
    issuer: chained.identifier,
    authorization_endpoint: chained.authorize,
    token_endpoint: chained.token,
    pushed_authorization_request_endpoint: chained.par,
    require_pushed_authorization_requests: true,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [AUTHORIZATION_CODE_GRANT, ...(settings.refreshTokenLifetimeSeconds > 0 ? [REFRESH_TOKEN_GRANT] : [])],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    token_endpoint_auth_methods_supported: settings.walletAttestationRequired
      ? [ATTESTATION_AUTH_METHOD]
      : ['none', ATTESTATION_AUTH_METHOD],
    challenge_endpoint: urls.challenge,
    client_attestation_signing_alg_values_supported: ATTESTATION_ALGORITHMS,
    client_attestation_pop_signing_alg_values_supported: ATTESTATION_ALGORITHMS,
    dpop_signing_alg_values_supported: PROOF_ALGORITHMS,
    ...(settings.dpopRequired && { dpop_bound_access_tokens_required: true }),
  };
}
