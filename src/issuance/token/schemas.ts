// The token request (RFC 6749 sections 4.1.3 and 6 form bodies; OpenID4VCI 1.0 section 6.1 for the
// pre-authorized code grant). Parsed here so each grant reads typed fields.
import { z } from 'zod';
import { unsupportedGrantType } from '../errors.js';
import { AUTHORIZATION_CODE_GRANT, PRE_AUTHORIZED_GRANT, REFRESH_TOKEN_GRANT } from '../grants.js';
import { parseOAuthParams } from '../oauth-params.js';

const MAX = 2048;

const PreAuthorizedCodeRequest = z.object({
  grant_type: z.literal(PRE_AUTHORIZED_GRANT),
  'pre-authorized_code': z.string().min(1, 'pre-authorized_code is required').max(MAX),
  tx_code: z.string().max(MAX).optional(),
  // Optional here (OpenID4VCI 1.0 section 6.1); a client attestation, when sent, must be for it.
  client_id: z.string().min(1).max(200).optional(),
});
export type PreAuthorizedCodeRequest = z.infer<typeof PreAuthorizedCodeRequest>;

/**
 * A public client names itself with client_id (RFC 6749 section 4.1.3) and proves the PKCE verifier; a
 * client authenticating with a wallet attestation is named by it and may leave client_id out.
 */
const AuthorizationCodeRequest = z.object({
  grant_type: z.literal(AUTHORIZATION_CODE_GRANT),
  code: z.string().min(1).max(MAX),
  // Every authorization request here carried a PKCE challenge, so every code needs its verifier (RFC 7636 section 4.1 form).
  code_verifier: z.string().regex(/^[A-Za-z0-9._~-]{43,128}$/, 'must be 43 to 128 unreserved characters (RFC 7636)'),
  redirect_uri: z.string().min(1).max(MAX),
  client_id: z.string().min(1).max(200).optional(),
});
export type AuthorizationCodeRequest = z.infer<typeof AuthorizationCodeRequest>;

const RefreshTokenRequest = z.object({
  grant_type: z.literal(REFRESH_TOKEN_GRANT),
  refresh_token: z.string().min(1).max(MAX),
  client_id: z.string().min(1).max(200).optional(),
});
export type RefreshTokenRequest = z.infer<typeof RefreshTokenRequest>;

const GRANTS = {
  [PRE_AUTHORIZED_GRANT]: PreAuthorizedCodeRequest,
  [AUTHORIZATION_CODE_GRANT]: AuthorizationCodeRequest,
  [REFRESH_TOKEN_GRANT]: RefreshTokenRequest,
} as const;
export const GRANT_TYPES = Object.keys(GRANTS);

export type GrantRequest = PreAuthorizedCodeRequest | AuthorizationCodeRequest | RefreshTokenRequest;

/** The grant the body asks for, typed; unsupported_grant_type or invalid_request naming the field otherwise. */
export function parseTokenRequest(body: Record<string, unknown>): GrantRequest {
  const grantType = body.grant_type;
  if (typeof grantType !== 'string' || !Object.hasOwn(GRANTS, grantType)) {
    throw unsupportedGrantType(`grant_type must be one of ${GRANT_TYPES.join(', ')}`);
  }
  return parseOAuthParams(GRANTS[grantType as keyof typeof GRANTS], body);
}
