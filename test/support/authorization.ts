// The front half of the authorization code flow by hand, as a raw wallet sends it: the pushed
// authorization request and the authorization endpoint, whose redirect is read, not followed.
import type { Reply } from './http.js';
import type { TestService } from './service.js';
import { pkce, WALLET_REDIRECT_URI } from './wallet.js';

/**
 * A pushed authorization request of client raw-wallet for the offer of `issuerState`, with sensible
 * defaults any field can override (undefined drops it); `headers` add DPoP or attestation headers.
 */
export function pushAuthorizationRequest(
  svc: Pick<TestService, 'raw'>,
  tenant: string,
  issuerState: string,
  fields: Record<string, string | undefined> = {},
  headers: Record<string, string> = {},
): Promise<Reply> {
  const form = Object.fromEntries(
    Object.entries({
      client_id: 'raw-wallet',
      response_type: 'code',
      redirect_uri: WALLET_REDIRECT_URI,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      state: 'xyz',
      issuer_state: issuerState,
      scope: 'pid_scope',
      ...fields,
    }).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  return svc.raw('POST', `/issuers/${tenant}/par`, { form, headers });
}

export interface AuthorizationAnswer {
  status: number;
  /** Where the user agent is sent: the wallet's redirect_uri with a code or an error. */
  location: URL | undefined;
  body: string;
}

/** The authorization endpoint's answer to `query` (client_id and request_uri). */
export async function authorizeRequest(
  svc: Pick<TestService, 'url'>,
  tenant: string,
  query: Record<string, string>,
): Promise<AuthorizationAnswer> {
  const response = await fetch(`${svc.url}/issuers/${tenant}/authorize?${new URLSearchParams(query)}`, { redirect: 'manual' });
  const location = response.headers.get('location');
  return { status: response.status, location: location ? new URL(location) : undefined, body: await response.text() };
}

/** The authorization code with its PKCE verifier at the built-in token endpoint of `tenant`, as client `clientId`. */
export function redeemCode(svc: Pick<TestService, 'raw'>, tenant: string, code: string, verifier: string, clientId = 'raw-wallet') {
  return svc.raw('POST', `/issuers/${tenant}/token`, {
    form: { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: WALLET_REDIRECT_URI, client_id: clientId },
  });
}
