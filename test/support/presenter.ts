// A test wallet for presentations: @openid4vc/openid4vp's client (with the demo wallet's callbacks:
// the request must be signed by its x5c certificate) resolves and checks the signed request and
// encrypts the response; @sd-jwt/sd-jwt-vc selects disclosures; jose signs the KB-JWT, so that a
// test can bend exactly one rule at a time.
import { randomBytes } from 'node:crypto';
import { Openid4vpClient } from '@openid4vc/openid4vp';
import { importJWK, type JWK, SignJWT } from 'jose';
import { presentationCallbacks } from '../../wallet/callbacks.js';
import { sdJwtVc, sha256 } from '../../wallet/credentials.js';

export function presentationClient() {
  return new Openid4vpClient({ callbacks: presentationCallbacks() });
}

export interface ResolvedRequest {
  clientId: string;
  nonce: string;
  responseUri: string;
  responseMode: string;
  dcqlQuery: { credentials: { id: string }[] };
  transactionData: string[];
  payload: Record<string, any>;
  /** DC API: the origin the browser asserted; the KB-JWT audience is then `origin:<origin>` (OpenID4VP 1.0 A.4). */
  origin?: string;
}

/** Parses the openid4vp:// URI and fetches and verifies the request object (GET, or POST when the URI asks). */
export async function resolveRequest(uri: string): Promise<ResolvedRequest> {
  const client = presentationClient();
  const parsed = client.parseOpenid4vpAuthorizationRequest({ authorizationRequest: uri });
  const resolved = await client.resolveOpenId4vpAuthorizationRequest({
    authorizationRequestPayload: parsed.params as never,
    wallet: { nonce: randomBytes(8).toString('hex') } as never,
  });
  return requestOf(resolved.authorizationRequestPayload as Record<string, any>);
}

/** The request as the helpers use it, from a request object payload the caller has verified itself. */
export function requestOf(payload: Record<string, any>, origin?: string): ResolvedRequest {
  return {
    clientId: payload.client_id,
    nonce: payload.nonce,
    responseUri: payload.response_uri,
    responseMode: payload.response_mode,
    dcqlQuery: payload.dcql_query,
    transactionData: payload.transaction_data ?? [],
    payload,
    ...(origin && { origin }),
  };
}

export interface KeyBindingOptions {
  aud?: string;
  nonce?: string;
  iat?: number;
  sdHash?: string;
  signWith?: JWK;
  transactionDataHashes?: string[];
}

/** An SD-JWT VC presentation disclosing `disclose` (all when absent), with a KB-JWT for the request. */
export async function presentSdJwt(
  credential: string,
  holderPrivateJwk: JWK,
  request: ResolvedRequest,
  disclose?: string[],
  kb: KeyBindingOptions = {},
) {
  const sdjwt = sdJwtVc();
  const frame = disclose ? Object.fromEntries(disclose.map((claim) => [claim, true])) : undefined;
  let withoutKb = frame ? await sdjwt.present(credential, frame as never) : credential;
  if (!withoutKb.endsWith('~')) withoutKb += '~';
  const transactionDataHashes = kb.transactionDataHashes ?? request.transactionData.map((entry) => sha256(entry).toString('base64url'));
  const kbJwt = await new SignJWT({
    iat: kb.iat ?? Math.floor(Date.now() / 1000),
    aud: kb.aud ?? (request.origin ? `origin:${request.origin}` : request.clientId),
    nonce: kb.nonce ?? request.nonce,
    sd_hash: kb.sdHash ?? sha256(withoutKb).toString('base64url'),
    ...(transactionDataHashes.length && { transaction_data_hashes: transactionDataHashes, transaction_data_hashes_alg: 'sha-256' }),
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'kb+jwt' })
    .sign(await importJWK(kb.signWith ?? holderPrivateJwk, 'ES256'));
  return `${withoutKb}${kbJwt}`;
}

/** The wallet's answer to the request, encrypted for direct_post.jwt: made by the client, not yet sent. */
function authorizationResponse(client: Openid4vpClient, request: ResolvedRequest, vpToken: Record<string, string[]>) {
  return client.createOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: request.payload as never,
    authorizationResponsePayload: { vp_token: vpToken as never } as never,
    ...(request.responseMode === 'direct_post.jwt' && {
      jarm: {
        encryption: { nonce: request.nonce },
        serverMetadata: {
          authorization_encryption_alg_values_supported: ['ECDH-ES'],
          authorization_encryption_enc_values_supported: ['A128GCM', 'A256GCM'],
        } as never,
      },
    }),
  });
}

/** Sends the vp_token to the response endpoint as the request asks (encrypted for direct_post.jwt). */
export async function submit(request: ResolvedRequest, vpToken: Record<string, string[]>) {
  const client = presentationClient();
  const response = await authorizationResponse(client, request, vpToken);
  const submitted = await client.submitOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: request.payload as never,
    authorizationResponsePayload: response.authorizationResponsePayload,
    ...(response.jarm && { jarm: { responseJwt: response.jarm.responseJwt } }),
  });
  const text = await submitted.response.text();
  return { status: submitted.response.status, body: text ? (JSON.parse(text) as Record<string, any>) : {} };
}

/**
 * The form fields the wallet would post to response_uri (`response` for direct_post.jwt, else
 * vp_token and state), for a test that posts them itself: to several instances, or many at once.
 */
export async function responseForm(request: ResolvedRequest, vpToken: Record<string, string[]>): Promise<Record<string, string>> {
  const response = await authorizationResponse(presentationClient(), request, vpToken);
  if (response.jarm) return { response: response.jarm.responseJwt };
  const fields = Object.entries(response.authorizationResponsePayload as Record<string, unknown>);
  return Object.fromEntries(fields.map(([name, value]) => [name, typeof value === 'string' ? value : JSON.stringify(value)]));
}

export interface DcApiRequest {
  protocol: string;
  data: { request: string };
}

/**
 * What the browser hands a wallet for navigator.credentials.get: the signed request (openid4vp-v1-signed)
 * and the calling origin, which the client checks against expected_origins.
 */
export async function resolveDcApiRequest(dcApiRequest: DcApiRequest, origin: string): Promise<ResolvedRequest> {
  const client = presentationClient();
  const parsed = client.parseOpenid4vpAuthorizationRequest({ authorizationRequest: dcApiRequest.data });
  const resolved = await client.resolveOpenId4vpAuthorizationRequest({ authorizationRequestPayload: parsed.params as never, origin });
  return requestOf(resolved.authorizationRequestPayload as Record<string, any>, origin);
}

/** The credential's `data` a wallet returns through the DC API for dc_api.jwt: `{ response: <JWE> }`. */
export async function dcApiResponse(request: ResolvedRequest, vpToken: Record<string, string[]>) {
  const client = presentationClient();
  const response = await client.createOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: request.payload as never,
    authorizationResponsePayload: { vp_token: vpToken as never } as never,
    origin: request.origin,
    jarm: {
      encryption: { nonce: request.nonce },
      serverMetadata: {
        authorization_encryption_alg_values_supported: ['ECDH-ES'],
        authorization_encryption_enc_values_supported: ['A128GCM', 'A256GCM'],
      } as never,
    },
  });
  if (!response.jarm) throw new Error('the client made no encrypted response');
  return { response: response.jarm.responseJwt, payload: response.authorizationResponsePayload as Record<string, any> };
}
