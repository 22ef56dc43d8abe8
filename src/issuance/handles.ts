// The purposes of the session handles issuance keeps (sessions/ stores each handle hashed, under its
// purpose): one list, so that every endpoint redeems a handle under the purpose it was issued for,
// and the built-in and the chained authorization servers never take each other's.

/** The handles of an offer: what the wallet redeems (pre-authorized code, or issuer_state in its authorization request), and where it fetches the offer. */
export const OFFER_HANDLE = { preAuthorizedCode: 'pre-authorized_code', issuerState: 'issuer_state', offer: 'credential_offer' } as const;

/** The handles of the built-in server's authorization code flow: each a hashed, single-use secret (request_uri and code live 60 s, refresh tokens per the issuer settings). */
export const AUTHORIZATION_HANDLE = {
  requestUri: 'request_uri',
  code: 'authorization_code',
  refreshToken: 'refresh_token',
} as const;

/**
 * Handles of the steps an interactive authorization runs for one pushed request (each single use):
 * they die when another request is pushed for the offer.
 */
export const STEP_HANDLE = {
  authSession: 'iae_auth_session',
  webSession: 'iae_web_session',
} as const;

/**
 * The handles of the chained authorization server: its own purposes, so that the built-in server
 * never accepts an offer bound to the chained one (that would skip the upstream login), nor a
 * request_uri or code the chained one handed out.
 */
export const CHAINED_HANDLE = {
  issuerState: 'chained_as:issuer_state',
  requestUri: 'chained_as:request_uri',
  code: 'chained_as:authorization_code',
  /** The state of the login at the upstream provider: single use, it finds the session at the callback. */
  upstreamState: 'chained_as:upstream_state',
} as const;

/** The handle that finds the session of an access token of an external authorization server (access/external-access-tokens.ts). */
export const EXTERNAL_TOKEN_HANDLE = 'external_access_token';
