// The grant types of the token endpoints (RFC 6749 section 4.1.3 and 6; OpenID4VCI 1.0 section 6.1),
// as the token requests and the authorization server metadata name them.

export const PRE_AUTHORIZED_GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
export const AUTHORIZATION_CODE_GRANT = 'authorization_code';
export const REFRESH_TOKEN_GRANT = 'refresh_token';
