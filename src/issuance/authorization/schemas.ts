// The authorization requests of the authorization code flow: the pushed authorization request
// (RFC 9126, OpenID4VCI 1.0 section 5) and the authorization request that refers to it by request_uri.
// Form and query values arrive as strings (a repeated parameter as an array, which fails here).
import { z } from 'zod';

/** Session handles of the flow: each a hashed, single-use secret (request_uri and code live 60 s, refresh tokens per the issuer settings). */
export const AUTHORIZATION_HANDLE = {
  requestUri: 'request_uri',
  code: 'authorization_code',
  refreshToken: 'refresh_token',
} as const;

export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';
export const REQUEST_URI_LIFETIME_SECONDS = 60;
/** RFC 6749 section 4.1.2 recommends at most ten minutes; a wallet redeems the code at once. */
export const CODE_LIFETIME_SECONDS = 60;

const MAX = 2048;

export const PushedAuthorizationRequestSchema = z.object({
  client_id: z.string().min(1).max(200),
  response_type: z.string().max(MAX),
  redirect_uri: z.string().min(1).max(MAX),
  code_challenge: z.string().max(MAX).optional(),
  code_challenge_method: z.string().max(MAX).optional(),
  state: z.string().max(MAX).optional(),
  issuer_state: z.string().min(1).max(MAX),
  authorization_details: z.string().max(20_000).optional(),
  scope: z.string().max(MAX).optional(),
  resource: z.string().max(MAX).optional(),
  dpop_jkt: z.string().max(200).optional(),
  request_uri: z.undefined({ error: 'request_uri must not be pushed (RFC 9126 section 2.1)' }).optional(),
  request: z.undefined({ error: 'request objects are not supported' }).optional(),
});
export type PushedAuthorizationRequest = z.infer<typeof PushedAuthorizationRequestSchema>;

export const AuthorizationQuerySchema = z.object({
  client_id: z.string().min(1).max(200),
  request_uri: z.string().min(1).max(MAX),
});

/** authorization_details (RFC 9396) of type openid_credential, as OpenID4VCI 1.0 section 5.1.1 defines them. */
export const AuthorizationDetailsSchema = z
  .array(z.looseObject({ type: z.literal('openid_credential'), credential_configuration_id: z.string().min(1).max(200) }))
  .min(1)
  .max(100);

/**
 * Which redirect URIs a public client may register by pushing them (RFC 8252 for native wallets):
 * https anywhere; http only to a loopback address (section 7.3); a private-use scheme such as
 * com.example.wallet:/cb or eudi-wallet:// (section 7.1). Never a fragment (RFC 6749 section 3.1.2),
 * never a scheme that runs or reads something in the browser.
 */
const BROWSER_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'blob:', 'about:', 'vbscript:', 'filesystem:', 'ws:', 'wss:', 'ftp:']);
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

export function redirectUriRefusal(value: string): string | undefined {
  if (!URL.canParse(value)) return 'redirect_uri must be an absolute URL';
  const url = new URL(value);
  if (url.hash || value.includes('#')) return 'redirect_uri must not contain a fragment';
  if (url.username || url.password) return 'redirect_uri must not carry credentials';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:')
    return LOOPBACK.has(url.hostname) ? undefined : 'redirect_uri must use https (http only for a loopback address)';
  if (BROWSER_SCHEMES.has(url.protocol)) return `redirect_uri must not use the ${url.protocol} scheme`;
  return undefined;
}
