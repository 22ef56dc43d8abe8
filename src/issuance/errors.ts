import { OAuthError } from '../platform/http/problem.js';

// The error codes of OAuth 2.0 (RFC 6749, 6750, 9449) and OpenID4VCI 1.0, each a small constructor
// so that every protocol step fails with the precise code its rule names.
export const invalidRequest = (description: string) => new OAuthError(400, 'invalid_request', description);
/** Client authentication failed (RFC 6749 section 5.2): 401, as for any client that did not authenticate. */
export const invalidClient = (description: string) => new OAuthError(401, 'invalid_client', description);
export const invalidGrant = (description: string) => new OAuthError(400, 'invalid_grant', description);
export const unsupportedGrantType = (description: string) => new OAuthError(400, 'unsupported_grant_type', description);
export const invalidDpopProof = (description: string) => new OAuthError(400, 'invalid_dpop_proof', description);
export const invalidToken = (description: string, scheme = 'Bearer') =>
  new OAuthError(401, 'invalid_token', description, {
    'www-authenticate': `${scheme} error="invalid_token", error_description="${description}"`,
  });
export const invalidCredentialRequest = (description: string) => new OAuthError(400, 'invalid_credential_request', description);
export const unknownCredentialConfiguration = (description: string) => new OAuthError(400, 'unknown_credential_configuration', description);
export const unknownCredentialIdentifier = (description: string) => new OAuthError(400, 'unknown_credential_identifier', description);
export const invalidProof = (description: string) => new OAuthError(400, 'invalid_proof', description);
export const invalidNonce = (description: string) => new OAuthError(400, 'invalid_nonce', description);
export const credentialRequestDenied = (description: string) => new OAuthError(400, 'credential_request_denied', description);
export const invalidTransactionId = (description: string) => new OAuthError(400, 'invalid_transaction_id', description);
export const invalidNotificationId = (description: string) => new OAuthError(400, 'invalid_notification_id', description);
export const invalidNotificationRequest = (description: string) => new OAuthError(400, 'invalid_notification_request', description);
export const notFoundIssuer = (tenantId: string) => new OAuthError(404, 'invalid_request', `no credential issuer '${tenantId}'`);
/** The issuer exists but takes part in no federation: it has no entity configuration to serve. */
export const noFederationSettings = (tenantId: string) =>
  new OAuthError(
    404,
    'invalid_request',
    `the issuer '${tenantId}' has no federation settings, so no entity configuration: set federation in its trust settings (PUT /api/trust-config)`,
  );
export const invalidRequestUri = (description: string) => new OAuthError(400, 'invalid_request_uri', description);
export const invalidScope = (description: string) => new OAuthError(400, 'invalid_scope', description);
export const invalidTarget = (description: string) => new OAuthError(400, 'invalid_target', description);
export const invalidAuthorizationDetails = (description: string) => new OAuthError(400, 'invalid_authorization_details', description);
export const unsupportedResponseType = (description: string) => new OAuthError(400, 'unsupported_response_type', description);
/** RFC 9449 section 8 (authorization server: 400) and section 9 (resource server: 401 with a DPoP challenge), with the nonce to use. */
export const useDpopNonce = (nonce: string, atResource: boolean) =>
  atResource
    ? new OAuthError(401, 'use_dpop_nonce', 'use the DPoP-Nonce this server provides', {
        'www-authenticate': 'DPoP error="use_dpop_nonce", error_description="use the DPoP-Nonce this server provides"',
        'dpop-nonce': nonce,
      })
    : new OAuthError(400, 'use_dpop_nonce', 'use the DPoP-Nonce this server provides', { 'dpop-nonce': nonce });
