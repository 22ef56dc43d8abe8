// The wallet's and the integrator's side of interactive authorization (the authorization challenge
// endpoint and the earlier drafts' IAE): what a wallet checks of the OpenID4VP request a presentation
// step embeds, its encrypted answer (ia_post.jwt, iae_post.jwt), and the integrator's page that ends a
// web step with a signed result.
import { createHash } from 'node:crypto';
import { CompactEncrypt, compactVerify, decodeProtectedHeader, importJWK, importX509, type JWK, SignJWT } from 'jose';
import { expect } from 'vitest';
import type { ResolvedRequest } from './presenter.js';

/**
 * The embedded OpenID4VP request as a wallet takes it: typ, the signature by its x5c leaf and the
 * x509_hash client_id naming that leaf. The caller checks what it expects of the payload.
 */
export async function verifyIaeRequest(openid4vpRequest: { request: string }, endpointUrl: string): Promise<ResolvedRequest> {
  const jwt = openid4vpRequest.request;
  const header = decodeProtectedHeader(jwt);
  expect(header.typ).toBe('oauth-authz-req+jwt');
  const leaf = (header.x5c as string[])[0] as string;
  const key = await importX509(`-----BEGIN CERTIFICATE-----\n${leaf}\n-----END CERTIFICATE-----`, header.alg as string);
  const payload = JSON.parse(new TextDecoder().decode((await compactVerify(jwt, key)).payload));
  expect(payload.client_id).toBe(`x509_hash:${createHash('sha256').update(Buffer.from(leaf, 'base64')).digest('base64url')}`);
  return {
    clientId: payload.client_id,
    nonce: payload.nonce,
    responseUri: endpointUrl,
    responseMode: payload.response_mode,
    dcqlQuery: payload.dcql_query,
    transactionData: [],
    payload,
  };
}

/** ia_post.jwt / iae_post.jwt: the response as a JWE (ECDH-ES, A128GCM) to the request's encryption key. */
export async function encryptIaeResponse(request: ResolvedRequest, response: Record<string, unknown>) {
  const jwk = request.payload.client_metadata.jwks.keys[0] as JWK;
  return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(response)))
    .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A128GCM', ...(jwk.kid && { kid: jwk.kid }) })
    .encrypt(await importJWK(jwk, 'ECDH-ES'));
}

/** The wallet opens the authorization endpoint with the web step's request_uri; the browser is sent to the integrator's page. */
export async function openWebStep(authorizeUrl: string, clientId: string, requestUri: string): Promise<URL> {
  const query = new URLSearchParams({ client_id: clientId, request_uri: requestUri });
  const response = await fetch(`${authorizeUrl}?${query}`, { redirect: 'manual' });
  expect(response.status, await response.clone().text()).toBe(302);
  return new URL(response.headers.get('location') as string);
}

/** The integrator's signed result for the page it was opened with: `payload` adds to or overrides the defaults. */
export async function signWebResult(page: URL, key: CryptoKey, payload: Record<string, unknown> = {}, typ = 'iae-web-result+jwt') {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    aud: page.searchParams.get('callback_uri') ?? undefined,
    web_session: page.searchParams.get('web_session'),
    iat: now,
    exp: now + 120,
    claims: { member_level: 'gold' },
    ...payload,
  })
    .setProtectedHeader({ alg: 'ES256', typ })
    .sign(key);
}

/** The integrator's page posts the result to its callback_uri (or `fallback`); the browser would follow the 303 back to the wallet. */
export async function postWebResult(page: URL, result: string | undefined, fallback?: string) {
  const response = await fetch(page.searchParams.get('callback_uri') ?? (fallback as string), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(result === undefined ? {} : { result }).toString(),
    redirect: 'manual',
  });
  const text = await response.text();
  const location = response.headers.get('location');
  return { status: response.status, text, location: location ? new URL(location) : undefined, body: text ? JSON.parse(text) : {} };
}
