// The HAIP authorization code flow end to end, over HTTP, in one flow as a HAIP wallet runs it:
// an authorization_code offer; PAR with wallet (client) attestation and DPoP; the interactive
// authorization endpoint with both steps (an OpenID4VP presentation of a PID this service issued
// earlier by the pre-authorized flow, then the integrator's web step, ended by its signed result);
// the authorization code at the token endpoint (PKCE, DPoP, attestation); a credential request with
// a batch of two jwt proofs, each with a key attestation of a trusted wallet provider; the two
// credentials verified independently and bound to the two proof keys; the refresh_token grant (same
// DPoP key, attestation); the refreshed access token at the notification endpoint; and the spent
// refresh token refused when used again. The test is the wallet (its IAE requests by hand in the
// draft's shapes, its key proofs by @openid4vc/openid4vci, its DPoP proofs with jose), the wallet
// provider (test/support/wallet-provider.ts) and the integrator (it signs the web step's result).
// The tenant is in the haip-1.0 profile (issuer settings `profile`): its status lists and requests are
// signed by CA-issued chains, and every configuration meets the rules the profile enforces.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { decodeProtectedHeader, exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PID_VCT } from '../support/fixtures.js';
import { encryptIaeResponse, openWebStep, postWebResult, signWebResult, verifyIaeRequest } from '../support/iae.js';
import { presentSdJwt, type ResolvedRequest } from '../support/presenter.js';
import { verifySdJwtIndependently } from '../support/sd-jwt-check.js';
import { startService, type TestService } from '../support/service.js';
import { dpopProof, type HolderKey, holderKey, pkce, receiveCredentials, WALLET_REDIRECT_URI, walletClient } from '../support/wallet.js';
import {
  attestationHeaders,
  type WalletInstance,
  type WalletProvider,
  walletInstance,
  walletProvider,
} from '../support/wallet-provider.js';

let svc: TestService;
let acme: string;
let issuer: string;
let rootCertificate: string;
let integrator: CryptoKeyPair;
let provider: WalletProvider;
let instance: WalletInstance;
let pid: { credential: string; holder: JWK };

const CLIENT_ID = 'haip-wallet';
const INTEGRATOR_PAGE = 'https://integrator.example/membership';
const STATUS_SIGNER = { type: 'internal', keyChainId: 'status-ca', serviceType: 'revocation' };
const KEY_ATTESTATIONS_REQUIRED = { key_storage: ['iso_18045_high'], user_authentication: ['iso_18045_high'] };

const PID_CONFIG = {
  id: 'pid',
  config: { format: 'dc+sd-jwt' },
  vct: PID_VCT,
  statusManagement: true,
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true },
    { path: ['family_name'], type: 'string', mandatory: true },
  ],
};
const PID_QUERY = {
  credentials: [
    { id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: [PID_VCT] }, claims: [{ path: ['given_name'] }, { path: ['family_name'] }] },
  ],
};

const url = (path: string) => `${issuer}/${path}`;
const iaeUrl = () => url('iae');
beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  issuer = `${svc.url}/issuers/acme`;
  integrator = (await generateKeyPair('ES256', { extractable: true })) as CryptoKeyPair;
  const integratorJwk = await exportJWK(integrator.publicKey);
  // The profile refuses self-signed status list and request signers: CA-issued chains become the defaults.
  for (const usageType of ['statusList', 'access'] as const) {
    const chain = await svc.call('POST', '/api/key-chain', {
      token: acme,
      body: { id: usageType === 'access' ? 'access-ca' : 'status-ca', usageType, type: 'internalChain', default: true },
    });
    expect(chain.status, chain.text).toBe(201);
  }
  const statusConfig = await svc.call('PUT', '/api/status-list-config', { token: acme, body: { bits: 2, immediateUpdate: true, ttl: 60 } });
  expect(statusConfig.status, statusConfig.text).toBe(200);
  const trust = await svc.raw('POST', '/api/trust-list', {
    token: acme,
    body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }, STATUS_SIGNER] },
  });
  expect(trust.status, trust.text).toBe(201);
  const check = await svc.call('POST', '/api/verifier/config', { token: acme, body: { id: 'pid-check', dcql_query: PID_QUERY } });
  expect(check.status, check.text).toBe(201);
  const membership = {
    id: 'membership',
    config: { format: 'dc+sd-jwt', scope: 'membership_scope', keyAttestationsRequired: KEY_ATTESTATIONS_REQUIRED },
    vct: 'urn:example:membership',
    keyBinding: true,
    lifeTime: 86_400,
    fields: [
      { path: ['given_name'], type: 'string', mandatory: true },
      { path: ['family_name'], type: 'string', mandatory: true },
      { path: ['member_level'], type: 'string', mandatory: true },
    ],
    iaeActions: [
      { type: 'openid4vp-presentation', presentationConfigId: 'pid-check', label: 'PID' },
      { type: 'redirect-to-web', url: INTEGRATOR_PAGE, callbackKey: integratorJwk, label: 'membership form' },
    ],
  };
  for (const body of [PID_CONFIG, membership]) {
    const created = await svc.raw('POST', '/api/issuer/credentials', { token: acme, body });
    expect(created.status, created.text).toBe(201);
  }
  rootCertificate = (await svc.raw('GET', '/api/key-chain/default-attestation', { token: acme })).body.rootCertificate;

  // The PID the wallet presents later: issued by this service's pre-authorized flow, before the HAIP settings apply.
  const offer = await svc.call('POST', '/api/issuer/offer', {
    token: acme,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: ['pid'],
      credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann' } } },
    },
  });
  expect(offer.status, offer.text).toBe(201);
  const pidKey = await holderKey();
  const { response } = await receiveCredentials(offer.body.uri, { keys: [pidKey] });
  pid = {
    credential: (response.credentialResponse.credentials as { credential: string }[])[0]?.credential as string,
    holder: pidKey.privateJwk,
  };
  expect(pid.credential).toEqual(expect.any(String));

  // Issued, the PID configuration is made to meet the profile too (its next holders present key attestations).
  const pidAttested = await svc.raw('PATCH', '/api/issuer/credentials/pid', {
    token: acme,
    body: { config: { format: 'dc+sd-jwt', keyAttestationsRequired: KEY_ATTESTATIONS_REQUIRED } },
  });
  expect(pidAttested.status, pidAttested.text).toBe(200);

  [provider, instance] = await Promise.all([walletProvider('HAIP Wallets'), walletInstance()]);
  const settings = await svc.raw('PUT', '/api/issuer/config', {
    token: acme,
    body: {
      profile: 'haip-1.0',
      batchSize: 2,
      dpopRequired: true,
      walletAttestationRequired: true,
      walletProviders: [{ name: provider.name, certificates: [provider.caPem] }],
    },
  });
  expect(settings.status, settings.text).toBe(200);
  expect(settings.body.profile).toBe('haip-1.0');
});
afterAll(() => svc.stop());

/** The wallet instance's client attestation and a fresh proof of possession for this authorization server. */
const attested = () => attestationHeaders(provider, instance, CLIENT_ID, issuer);

const iae = (form: Record<string, string>, headers: Record<string, string>) => svc.raw('POST', '/issuers/acme/iae', { form, headers });

/** What a wallet checks of the embedded OpenID4VP request: the x5c signature, the x509_hash client_id, the expected origin and URL. */
async function openRequest(openid4vpRequest: { request: string }): Promise<ResolvedRequest> {
  const request = await verifyIaeRequest(openid4vpRequest, iaeUrl());
  // HAIP section 5: the signing certificate is not self-signed, and the trust anchor is not in x5c.
  const x5c = decodeProtectedHeader(openid4vpRequest.request).x5c as string[];
  for (const der of x5c) expect(await new x509.X509Certificate(der).isSelfSigned()).toBe(false);
  expect(request.payload).toMatchObject({
    response_type: 'vp_token',
    response_mode: 'iae_post.jwt',
    expected_origins: [new URL(svc.url).origin],
    expected_url: iaeUrl(),
    dcql_query: PID_QUERY,
  });
  expect(request.payload.client_metadata.jwks.keys[0]).toMatchObject({ kty: 'EC', use: 'enc' });
  return request;
}

/** The follow-up with the PID presentation (KB-JWT aud iae:<endpoint>), encrypted to the request's key (iae_post.jwt). */
async function present(authSession: string, request: ResolvedRequest, headers: Record<string, string>) {
  const presentation = await presentSdJwt(pid.credential, pid.holder, request, ['given_name', 'family_name'], { aud: `iae:${iaeUrl()}` });
  const response = await encryptIaeResponse(request, { vp_token: { pid: [presentation] } });
  return iae({ auth_session: authSession, openid4vp_response: JSON.stringify({ response }) }, headers);
}

const token = async (form: Record<string, string>, dpopKey: HolderKey) =>
  svc.raw('POST', '/issuers/acme/token', { form, headers: { dpop: await dpopProof(dpopKey, url('token')), ...(await attested()) } });

/** A call of a resource endpoint with a DPoP-bound access token and a fresh proof for it. */
const resource = async (path: string, accessToken: string, dpopKey: HolderKey, body: Record<string, unknown>) =>
  svc.raw('POST', `/issuers/acme/${path}`, {
    headers: { authorization: `DPoP ${accessToken}`, dpop: await dpopProof(dpopKey, url(path), { accessToken }) },
    body,
  });

const keyId = (jwk: JWK) => `${jwk.x}.${jwk.y}`;

describe('HAIP authorization code flow', () => {
  it('offer, attested PAR with DPoP, IAE (presentation and web step), token, batch with key attestations, refresh, notification, refresh reuse refused', async () => {
    // The metadata a HAIP wallet reads before it starts.
    const as = (await svc.call('GET', '/.well-known/oauth-authorization-server/issuers/acme')).body;
    expect(as).toMatchObject({
      interactive_authorization_endpoint: iaeUrl(),
      pushed_authorization_request_endpoint: url('par'),
      require_pushed_authorization_requests: true,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['attest_jwt_client_auth'],
    });
    const wallet = walletClient([]);
    const issuerMetadata = await wallet.resolveIssuerMetadata(issuer);
    const published = issuerMetadata.credentialIssuer.credential_configurations_supported.membership as Record<string, any>;
    expect(published.proof_types_supported.jwt.key_attestations_required).toEqual(KEY_ATTESTATIONS_REQUIRED);
    expect(issuerMetadata.credentialIssuer.batch_credential_issuance).toEqual({ batch_size: 2 });

    // The offer: an authorization code offer without claims (the interactive steps provide them).
    const offer = await svc.raw('POST', '/api/issuer/offer', {
      token: acme,
      body: { response_type: 'uri', flow: 'authorization_code', credentialConfigurationIds: ['membership'] },
    });
    expect(offer.status, offer.text).toBe(201);
    const sessionId = offer.body.session as string;
    const issuerState = offer.body.credentialOffer.grants.authorization_code.issuer_state as string;

    // PAR, attested and with a DPoP proof: the code to come is bound to the wallet instance and the DPoP key.
    const dpopKey = await holderKey();
    const { verifier, challenge } = pkce();
    const pushed = await svc.raw('POST', '/issuers/acme/par', {
      form: {
        client_id: CLIENT_ID,
        response_type: 'code',
        redirect_uri: WALLET_REDIRECT_URI,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: 'wallet-state',
        issuer_state: issuerState,
        scope: 'membership_scope',
      },
      headers: { dpop: await dpopProof(dpopKey, url('par')), ...(await attested()) },
    });
    expect(pushed.status, pushed.text).toBe(201);
    expect(pushed.body.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:/);

    // IAE, first request: the pushed request_uri, attested by the same instance; the presentation step comes first.
    const started = await iae(
      { client_id: CLIENT_ID, request_uri: pushed.body.request_uri, interaction_types_supported: 'openid4vp_presentation,redirect_to_web' },
      await attested(),
    );
    expect(started.status, started.text).toBe(200);
    expect(started.body).toMatchObject({
      status: 'require_interaction',
      type: 'openid4vp_presentation',
      auth_session: expect.any(String),
      openid4vp_request: { request: expect.any(String) },
    });

    // The presentation of the PID, encrypted; accepted, the web step follows.
    const request = await openRequest(started.body.openid4vp_request);
    const web = await present(started.body.auth_session, request, await attested());
    expect(web.status, web.text).toBe(200);
    expect(web.body).toMatchObject({
      status: 'require_interaction',
      type: 'redirect_to_web',
      auth_session: expect.any(String),
      request_uri: expect.stringMatching(/^urn:ietf:params:oauth:request_uri:/),
    });

    // The web step: the browser goes to the integrator, whose signed result sends it back to the wallet with the code.
    const page = await openWebStep(url('authorize'), CLIENT_ID, web.body.request_uri);
    expect(page.origin + page.pathname).toBe(INTEGRATOR_PAGE);
    expect(page.searchParams.get('session')).toBe(sessionId);
    const back = await postWebResult(page, await signWebResult(page, integrator.privateKey));
    expect(back.status, back.text).toBe(303);
    expect(`${back.location?.origin}${back.location?.pathname}`).toBe(WALLET_REDIRECT_URI);
    expect(back.location?.searchParams.get('state')).toBe('wallet-state');
    expect(back.location?.searchParams.get('iss')).toBe(issuer);
    const code = back.location?.searchParams.get('code') as string;
    expect(code).toEqual(expect.any(String));

    // The token request: the code with the PKCE verifier, a DPoP proof of the PAR key and the attestation.
    const tokens = await token(
      { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: WALLET_REDIRECT_URI, client_id: CLIENT_ID },
      dpopKey,
    );
    expect(tokens.status, tokens.text).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'DPoP', access_token: expect.any(String), refresh_token: expect.any(String) });

    // A batch of two jwt proofs (made by the wallet library), each of its own key with that key's attestation and the c_nonce.
    const proofKeys = [await holderKey(), await holderKey()];
    const prover = walletClient(proofKeys);
    const nonce = await svc.raw('POST', '/issuers/acme/nonce');
    expect(nonce.status, nonce.text).toBe(200);
    const c_nonce = nonce.body.c_nonce as string;
    const proofs: string[] = [];
    for (const key of proofKeys) {
      const keyAttestationJwt = await provider.keyAttestation([key.publicJwk as Record<string, unknown>], { nonce: c_nonce });
      const { jwt } = await prover.createCredentialRequestJwtProof({
        issuerMetadata,
        signer: key.signer,
        nonce: c_nonce,
        credentialConfigurationId: 'membership',
        keyAttestationJwt,
      });
      expect(decodeProtectedHeader(jwt).key_attestation).toBe(keyAttestationJwt);
      proofs.push(jwt);
    }
    const issued = await resource('credential', tokens.body.access_token, dpopKey, {
      credential_configuration_id: 'membership',
      proofs: { jwt: proofs },
    });
    expect(issued.status, issued.text).toBe(200);
    expect(issued.body).toMatchObject({ notification_id: expect.any(String) });
    const credentials = issued.body.credentials as { credential: string }[];
    expect(credentials).toHaveLength(2);

    // Each credential on its own: signed by the tenant's chain, with what both steps produced, bound to one proof key.
    const boundTo: string[] = [];
    for (const { credential } of credentials) {
      const { payload, claims } = await verifySdJwtIndependently(credential, rootCertificate);
      expect(payload).toMatchObject({ iss: issuer, vct: 'urn:example:membership' });
      expect(claims).toMatchObject({ given_name: 'Erika', family_name: 'Mustermann', member_level: 'gold' });
      boundTo.push(keyId(payload.cnf.jwk));
    }
    expect(boundTo.sort()).toEqual(proofKeys.map((k) => keyId(k.publicJwk)).sort());
    expect(new Set(boundTo).size).toBe(2);

    // The refresh_token grant: a proof of the same DPoP key, and the attestation.
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token }, dpopKey);
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.body).toMatchObject({ token_type: 'DPoP', access_token: expect.any(String), refresh_token: expect.any(String) });
    // A new refresh token and a new access token (each access token has its own jti, RFC 9068).
    expect(refreshed.body.refresh_token).not.toBe(tokens.body.refresh_token);
    expect(refreshed.body.access_token).not.toBe(tokens.body.access_token);

    // The refreshed access token works: the wallet reports the batch accepted at the notification endpoint.
    const notified = await resource('notification', refreshed.body.access_token, dpopKey, {
      notification_id: issued.body.notification_id,
      event: 'credential_accepted',
    });
    expect(notified.status, notified.text).toBe(204);
    const session = await svc.running.services.sessions.get('acme', sessionId);
    expect(session).toMatchObject({ status: 'completed', consumed: true });
    expect(session.public.notifications).toEqual([
      expect.objectContaining({ notificationId: issued.body.notification_id, event: 'credential_accepted' }),
    ]);

    // The spent refresh token, presented again with a valid DPoP proof and attestation: refused, and the chain revoked.
    const replayed = await token({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token }, dpopKey);
    expect(replayed.status, replayed.text).toBe(400);
    expect(replayed.body.error).toBe('invalid_grant');
    expect(replayed.body.error_description).toMatch(/already used/);
    const newest = await token({ grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token }, dpopKey);
    expect(newest.body.error, newest.text).toBe('invalid_grant');
    const revoked = await resource('notification', refreshed.body.access_token, dpopKey, {
      notification_id: issued.body.notification_id,
      event: 'credential_deleted',
    });
    expect(revoked.status, revoked.text).toBe(401);
    expect(revoked.body.error).toBe('invalid_token');
  });
});
