// A test wallet on @openid4vc/openid4vci's client, with the demo wallet's keys and crypto callbacks
// (wallet/): a fresh P-256 holder key per test, so that each flow is independent.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Openid4vciClient } from '@openid4vc/openid4vci';
import { importJWK, SignJWT } from 'jose';
import { issuanceCallbacks } from '../../wallet/callbacks.js';
import { generateHolderKey, type HolderKey } from '../../wallet/store.js';
import type { TestService } from './service.js';

export type { HolderKey };
export const holderKey = generateHolderKey;

/** A PKCE verifier and its S256 challenge (RFC 7636). */
export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * A DPoP proof (RFC 9449) by `key` for a POST to `url`, with `ath` when it goes with an access token;
 * `claims` add to or override the others.
 */
export async function dpopProof(key: HolderKey, url: string, options: { accessToken?: string; claims?: Record<string, unknown> } = {}) {
  return new SignJWT({
    htm: 'POST',
    htu: url,
    iat: Math.floor(Date.now() / 1000),
    jti: randomUUID(),
    ...(options.accessToken && { ath: createHash('sha256').update(options.accessToken).digest('base64url') }),
    ...options.claims,
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.publicJwk })
    .sign(await importJWK(key.privateJwk, 'ES256'));
}

/** A jwt key proof (OpenID4VCI 1.0 appendix F.1) of `key` for the credential issuer `issuer` and its c_nonce `nonce`. */
export async function keyProof(key: HolderKey, issuer: string, nonce: string) {
  return new SignJWT({ aud: issuer, iat: Math.floor(Date.now() / 1000), nonce })
    .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: key.publicJwk })
    .sign(await importJWK(key.privateJwk, 'ES256'));
}

/** Signs with whichever holder key the signer names (the client asks for proofs and DPoP proofs). */
export function walletClient(keys: HolderKey[]) {
  return new Openid4vciClient({ callbacks: issuanceCallbacks(keys, 'test-wallet') });
}

/** The whole pre-authorized flow, as a wallet runs it, for one configuration of the offer. */
export async function receiveCredentials(
  offerUri: string,
  options: { keys?: HolderKey[]; txCode?: string; dpop?: boolean; configurationId?: string } = {},
) {
  const keys = options.keys ?? [await holderKey()];
  const client = walletClient(keys);
  const credentialOffer = await client.resolveCredentialOffer(offerUri);
  const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
  const dpop = options.dpop ? { signer: (keys[0] as HolderKey).signer } : undefined;
  const token = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
    credentialOffer,
    issuerMetadata,
    ...(options.txCode && { txCode: options.txCode }),
    ...(dpop && { dpop }),
  });
  const configurationId = options.configurationId ?? (credentialOffer.credential_configuration_ids[0] as string);
  const { c_nonce } = await client.requestNonce({ issuerMetadata });
  const proofs = await Promise.all(
    keys.map((key) =>
      client.createCredentialRequestJwtProof({
        issuerMetadata,
        signer: key.signer,
        nonce: c_nonce,
        credentialConfigurationId: configurationId,
      }),
    ),
  );
  const response = await client.retrieveCredentials({
    issuerMetadata,
    accessToken: token.accessTokenResponse.access_token,
    credentialConfigurationId: configurationId,
    proofs: { jwt: proofs.map((p) => p.jwt) },
    ...(token.dpop && { dpop: token.dpop }),
  });
  return { client, issuerMetadata, credentialOffer, token, response, keys, nonce: c_nonce };
}

/** Offers `configurationId` with inline claims through the management API and receives it as a wallet; one holder key. */
export async function issueCredential(
  svc: Pick<TestService, 'call'>,
  token: string,
  configurationId: string,
  claims: Record<string, unknown>,
) {
  const offer = await svc.call('POST', '/api/issuer/offer', {
    token,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: [configurationId],
      credentialClaims: { [configurationId]: { type: 'inline', claims } },
    },
  });
  if (offer.status !== 201) throw new Error(`offer: ${offer.status} ${offer.text}`);
  const key = await holderKey();
  const { response } = await receiveCredentials(offer.body.uri, { keys: [key] });
  const [issued] = (response.credentialResponse.credentials ?? []) as { credential: string }[];
  if (!issued) throw new Error('no credential received');
  return { credential: issued.credential, holder: key.privateJwk, session: offer.body.session };
}

export const WALLET_REDIRECT_URI = 'https://wallet.example/cb';

/**
 * The authorization code flow up to the access token, as a wallet runs it: PAR (with DPoP when
 * asked), the authorization endpoint (its 302 read, not followed), the iss check, the token request.
 */
export async function authorizeFromOffer(
  offerUri: string,
  options: { keys?: HolderKey[]; dpop?: boolean; scope?: string; clientId?: string } = {},
) {
  const keys = options.keys ?? [await holderKey()];
  const client = new Openid4vciClient({ callbacks: issuanceCallbacks(keys, options.clientId ?? 'test-wallet') });
  const credentialOffer = await client.resolveCredentialOffer(offerUri);
  const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
  const dpopOption = options.dpop ? { signer: (keys[0] as HolderKey).signer } : undefined;
  const request = await client.createAuthorizationRequestUrlFromOffer({
    clientId: options.clientId ?? 'test-wallet',
    credentialOffer,
    issuerMetadata,
    redirectUri: WALLET_REDIRECT_URI,
    ...(options.scope && { scope: options.scope }),
    ...(dpopOption && { dpop: dpopOption }),
  });
  const redirect = await fetch(request.authorizationRequestUrl, { redirect: 'manual' });
  if (redirect.status !== 302) throw new Error(`authorize: ${redirect.status} ${await redirect.text()}`);
  const authorizationServerMetadata = issuerMetadata.authorizationServers[0];
  if (!authorizationServerMetadata) throw new Error('no authorization server metadata');
  const response = client.parseAndVerifyAuthorizationResponseRedirectUrl({
    url: redirect.headers.get('location') as string,
    authorizationServerMetadata,
  });
  if (!response.code) throw new Error(`authorization error: ${response.error}`);
  const token = await client.retrieveAuthorizationCodeAccessTokenFromOffer({
    credentialOffer,
    issuerMetadata,
    authorizationCode: response.code,
    redirectUri: WALLET_REDIRECT_URI,
    ...(request.pkce && { pkceCodeVerifier: request.pkce.codeVerifier }),
    ...(request.dpop && { dpop: request.dpop }),
  });
  return { client, credentialOffer, issuerMetadata, authorizationServerMetadata, token, keys, redirect };
}
