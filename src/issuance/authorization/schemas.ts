// The authorization requests of the authorization code flow: the pushed authorization request
// (RFC 9126, OpenID4VCI 1.0 section 5) and the authorization request that refers to it by request_uri.
// Form and query values arrive as strings (a repeated parameter as an array, which fails here).
import { z } from 'zod';

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
  // Optional (OpenID4VCI 1.0 section 5.1.3): without it the wallet starts from the issuer's metadata.
  issuer_state: z.string().min(1).max(MAX).optional(),
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
 * Which redirect URIs a public client may register by pushing them: an allow-list, since the code
 * and the user's browser go there from the issuer's origin, and a scheme not listed here may hand
 * them to an operating-system handler (ms-msdt:, search-ms:, intent:, ...) or run something in the
 * browser (javascript:, view-source:, jar:, ...). RFC 8252 for native wallets: https anywhere; http
 * only to a loopback address (section 7.3); a private-use scheme in reverse-domain form, so one
 * with a period, such as com.example.wallet:/cb (section 7.1). Never a fragment (RFC 6749 section
 * 3.1.2), never user info. The PAR endpoints of the built-in and the chained server, and the
 * interactive authorization endpoint's first request, all push through this one check.
 */
const REDIRECT_URI_RULE =
  'redirect_uri must be https, http to a loopback address (localhost, 127.0.0.0/8, [::1]), or a private-use scheme in reverse-domain form (com.example.wallet:/cb)';

/**
 * A URI scheme per RFC 3986 section 3.1 (a letter, then letters, digits, +, - or .) in reverse-domain
 * form (RFC 8252 section 7.1): labels separated by periods, at least two, none empty.
 */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+$/i;
/** The scheme as written: WHATWG URL parsing lower-cases it and accepts what RFC 3986 would not. */
const SCHEME = /^([^:/?#]+):/;

export function redirectUriRefusal(value: string): string | undefined {
  if (!URL.canParse(value)) return 'redirect_uri must be an absolute URL';
  const url = new URL(value);
  if (url.hash || value.includes('#')) return 'redirect_uri must not contain a fragment';
  if (url.username || url.password) return 'redirect_uri must not carry credentials';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') return isLoopback(url.hostname) ? undefined : REDIRECT_URI_RULE;
  const scheme = SCHEME.exec(value)?.[1] ?? '';
  return PRIVATE_USE_SCHEME.test(scheme) ? undefined : REDIRECT_URI_RULE;
}

/** RFC 8252 section 7.3 names the loopback IP literals; 'localhost' is accepted as well (section 8.3 only advises against it). */
function isLoopback(hostname: string): boolean {
  if (hostname === 'localhost' || hostname === '[::1]') return true;
  // The URL parser has already normalised IPv4 literals (0x7f.1, 2130706433) to dotted decimal.
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}
