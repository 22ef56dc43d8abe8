// Wallet (client) attestation, attestation-based client authentication, at PAR and the token endpoint.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { clientAuthenticationClientAttestationJwt } from '@openid4vc/oauth2';
import { Openid4vciClient } from '@openid4vc/openid4vci';
import * as x509 from '@peculiar/x509';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issuanceCallbacks } from '../../wallet/callbacks.js';
import { startService, type TestService } from '../support/service.js';
import { holderKey, pkce, WALLET_REDIRECT_URI } from '../support/wallet.js';
import {
  attestationHeaders,
  type WalletInstance,
  type WalletProvider,
  walletInstance,
  walletProvider,
} from '../support/wallet-provider.js';

let svc: TestService;
let acme: string;
let trusted: WalletProvider;
let rogue: WalletProvider;
let instance: WalletInstance;
let issuer: string;

const CLIENT_ID = 'attested-wallet';
const PRE_AUTHORIZED_GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const CLAIMS = { pid: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann' } } };

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  const created = await svc.call('POST', '/api/issuer/credentials', {
    token: acme,
    body: {
      id: 'pid',
      config: { format: 'dc+sd-jwt', scope: 'pid_scope' },
      vct: 'urn:example:pid',
      keyBinding: true,
      fields: [
        { path: ['given_name'], type: 'string', mandatory: true },
        { path: ['family_name'], type: 'string', mandatory: true },
      ],
    },
  });
  expect(created.status, created.text).toBe(201);
  [trusted, rogue, instance] = await Promise.all([walletProvider('Trusted Wallets'), walletProvider('Rogue Wallets'), walletInstance()]);
  issuer = `${svc.url}/issuers/acme`;
});
afterAll(() => svc.stop());

async function settings(extra: Record<string, unknown> = {}) {
  const reply = await svc.raw('PUT', '/api/issuer/config', {
    token: acme,
    body: { walletProviders: [{ name: trusted.name, certificates: [trusted.caPem] }], ...extra },
  });
  expect(reply.status, reply.text).toBe(200);
}

const headersFor = (options: Parameters<typeof attestationHeaders>[4] = {}, provider = trusted, wallet = instance) =>
  attestationHeaders(provider, wallet, CLIENT_ID, issuer, options);

async function offer(flow: 'authorization_code' | 'pre_authorized_code' = 'authorization_code') {
  const reply = await svc.raw('POST', '/api/issuer/offer', {
    token: acme,
    body: { response_type: 'uri', flow, credentialConfigurationIds: ['pid'], credentialClaims: CLAIMS },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body.credentialOffer.grants;
}

async function par(headers: Record<string, string>, challenge = pkce().challenge) {
  const grants = await offer();
  return svc.raw('POST', '/issuers/acme/par', {
    form: {
      client_id: CLIENT_ID,
      response_type: 'code',
      redirect_uri: WALLET_REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      issuer_state: grants.authorization_code.issuer_state,
      scope: 'pid_scope',
    },
    headers,
  });
}

/** PAR (attested) and the authorization endpoint: a code and its verifier. */
async function code() {
  const { verifier, challenge } = pkce();
  const pushed = await par(await headersFor(), challenge);
  expect(pushed.status, pushed.text).toBe(201);
  const answer = await fetch(`${issuer}/authorize?${new URLSearchParams({ client_id: CLIENT_ID, request_uri: pushed.body.request_uri })}`, {
    redirect: 'manual',
  });
  expect(answer.status).toBe(302);
  return { code: new URL(answer.headers.get('location') as string).searchParams.get('code') as string, verifier };
}

const token = (form: Record<string, string>, headers: Record<string, string> = {}) =>
  svc.raw('POST', '/issuers/acme/token', { form, headers });

const codeGrant = (grant: { code: string; verifier: string }) => ({
  grant_type: 'authorization_code',
  code: grant.code,
  code_verifier: grant.verifier,
  redirect_uri: WALLET_REDIRECT_URI,
  client_id: CLIENT_ID,
});

function expectError(reply: { status: number; body: any; text: string }, error: string, status = error === 'invalid_client' ? 401 : 400) {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.body.error, reply.text).toBe(error);
}

const challenge = async () => {
  const reply = await svc.raw('POST', '/issuers/acme/challenge');
  expect(reply.status, reply.text).toBe(200);
  return reply.body.attestation_challenge as string;
};

describe('wallet attestation: metadata and challenge endpoint', () => {
  it('advertises attest_jwt_client_auth, the challenge endpoint and the signing algorithms', async () => {
    await settings();
    const as = (await svc.call('GET', '/.well-known/oauth-authorization-server/issuers/acme')).body;
    expect(as).toMatchObject({
      token_endpoint_auth_methods_supported: ['none', 'attest_jwt_client_auth'],
      challenge_endpoint: `${issuer}/challenge`,
      client_attestation_signing_alg_values_supported: expect.arrayContaining(['ES256']),
      client_attestation_pop_signing_alg_values_supported: expect.arrayContaining(['ES256']),
    });
    await settings({ walletAttestationRequired: true });
    const required = (await svc.raw('GET', '/.well-known/oauth-authorization-server/issuers/acme')).body;
    expect(required.token_endpoint_auth_methods_supported).toEqual(['attest_jwt_client_auth']);
  });

  it('hands out fresh challenges, not cached, and 404 for an unknown issuer', async () => {
    const reply = await svc.raw('POST', '/issuers/acme/challenge');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    expect(reply.body.attestation_challenge).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(await challenge()).not.toBe(reply.body.attestation_challenge);
    expect((await svc.call('POST', '/issuers/nobody/challenge')).status).toBe(404);
  });

  it('refuses a wallet provider anchor that is not a certificate', async () => {
    const reply = await svc.raw('PUT', '/api/issuer/config', {
      token: acme,
      body: { walletProviders: [{ name: 'X', certificates: ['not a certificate'] }] },
    });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.text).toContain('walletProviders.0.certificates.0');
  });
});

describe('wallet attestation required', () => {
  beforeAll(() => settings({ walletAttestationRequired: true }));

  it('runs the authorization code flow with attestation at PAR and the token endpoint', async () => {
    const reply = await token(codeGrant(await code()), await headersFor());
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String) });
  });

  it('interoperates with an independent wallet library (attest_jwt_client_auth of @openid4vc/oauth2) through PAR and token', async () => {
    const key = await holderKey();
    const callbacks = issuanceCallbacks([key], CLIENT_ID);
    const clientAttestationJwt = await trusted.attestation(key, { sub: CLIENT_ID });
    const client = new Openid4vciClient({
      callbacks: { ...callbacks, clientAuthentication: clientAuthenticationClientAttestationJwt({ clientAttestationJwt, callbacks }) },
    });
    const created = await svc.raw('POST', '/api/issuer/offer', {
      token: acme,
      body: { response_type: 'uri', flow: 'authorization_code', credentialConfigurationIds: ['pid'], credentialClaims: CLAIMS },
    });
    const credentialOffer = await client.resolveCredentialOffer(created.body.uri);
    const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
    const request = await client.createAuthorizationRequestUrlFromOffer({
      clientId: CLIENT_ID,
      credentialOffer,
      issuerMetadata,
      redirectUri: WALLET_REDIRECT_URI,
      scope: 'pid_scope',
    });
    const redirect = await fetch(request.authorizationRequestUrl, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const authorizationCode = new URL(redirect.headers.get('location') as string).searchParams.get('code') as string;
    const { accessTokenResponse } = await client.retrieveAuthorizationCodeAccessTokenFromOffer({
      credentialOffer,
      issuerMetadata,
      authorizationCode,
      redirectUri: WALLET_REDIRECT_URI,
      ...(request.pkce && { pkceCodeVerifier: request.pkce.codeVerifier }),
    });
    expect(accessTokenResponse.access_token).toEqual(expect.any(String));
  });

  it('refuses PAR and the token request without attestation (invalid_client)', async () => {
    expectError(await par({}), 'invalid_client');
    expectError(await token(codeGrant(await code())), 'invalid_client');
  });

  it('refuses a request with only one of the two headers', async () => {
    const { 'oauth-client-attestation': attestation, 'oauth-client-attestation-pop': pop } = await headersFor();
    expectError(await par({ 'oauth-client-attestation': attestation as string }), 'invalid_client');
    expectError(await par({ 'oauth-client-attestation-pop': pop as string }), 'invalid_client');
  });

  it('takes the attestation at the pre-authorized code token request too', async () => {
    const preAuthorized = async () => (await offer('pre_authorized_code'))[PRE_AUTHORIZED_GRANT]['pre-authorized_code'] as string;
    expectError(await token({ grant_type: PRE_AUTHORIZED_GRANT, 'pre-authorized_code': await preAuthorized() }), 'invalid_client');
    const reply = await token({ grant_type: PRE_AUTHORIZED_GRANT, 'pre-authorized_code': await preAuthorized() }, await headersFor());
    expect(reply.status, reply.text).toBe(200);
    const other = await token(
      { grant_type: PRE_AUTHORIZED_GRANT, 'pre-authorized_code': await preAuthorized(), client_id: 'someone-else' },
      await headersFor(),
    );
    expectError(other, 'invalid_client');
  });

  it('refuses an expired attestation', async () => {
    const now = Math.floor(Date.now() / 1000);
    const reply = await par(await headersFor({ attestation: { iat: now - 7200, exp: now - 3600 } }));
    expectError(reply, 'invalid_client');
    expect(reply.body.error_description).toMatch(/expired/);
  });

  it('refuses an attestation by a wallet provider the issuer does not trust', async () => {
    const reply = await par(await headersFor({}, rogue));
    expectError(reply, 'invalid_client');
    expect(reply.body.error_description).toMatch(/trusted wallet provider/);
  });

  it('refuses at a tenant trusting another provider the chain another tenant just accepted (accepted chains are remembered per set of anchors)', async () => {
    const other = (await svc.tenant('attestation-other')).token;
    const created = await svc.call('POST', '/api/issuer/credentials', {
      token: other,
      body: {
        id: 'pid',
        config: { format: 'dc+sd-jwt', scope: 'pid_scope' },
        vct: 'urn:example:pid',
        fields: [
          { path: ['given_name'], type: 'string' },
          { path: ['family_name'], type: 'string' },
        ],
      },
    });
    expect(created.status, created.text).toBe(201);
    const configured = await svc.raw('PUT', '/api/issuer/config', {
      token: other,
      body: { walletProviders: [{ name: rogue.name, certificates: [rogue.caPem] }], walletAttestationRequired: true },
    });
    expect(configured.status, configured.text).toBe(200);
    const offered = await svc.raw('POST', '/api/issuer/offer', {
      token: other,
      body: { response_type: 'uri', flow: 'authorization_code', credentialConfigurationIds: ['pid'], credentialClaims: CLAIMS },
    });
    expect(offered.status, offered.text).toBe(201);
    // The trusted provider's chain, accepted at acme a moment ago.
    expect((await par(await headersFor())).status).toBe(201);
    const otherIssuer = `${svc.url}/issuers/attestation-other`;
    const refused = await svc.raw('POST', '/issuers/attestation-other/par', {
      form: {
        client_id: CLIENT_ID,
        response_type: 'code',
        redirect_uri: WALLET_REDIRECT_URI,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        issuer_state: offered.body.credentialOffer.grants.authorization_code.issuer_state,
        scope: 'pid_scope',
      },
      headers: await attestationHeaders(trusted, instance, CLIENT_ID, otherIssuer),
    });
    expectError(refused, 'invalid_client');
    expect(refused.body.error_description).toMatch(/trusted wallet provider/);
    // And its own provider's chain is accepted there.
    const accepted = await svc.raw('POST', '/issuers/attestation-other/par', {
      form: {
        client_id: CLIENT_ID,
        response_type: 'code',
        redirect_uri: WALLET_REDIRECT_URI,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        issuer_state: offered.body.credentialOffer.grants.authorization_code.issuer_state,
        scope: 'pid_scope',
      },
      headers: await attestationHeaders(rogue, instance, CLIENT_ID, otherIssuer),
    });
    expect(accepted.status, accepted.text).toBe(201);
  });

  it("refuses an attestation whose signer's certificate was issued by a certificate that is no CA (the provider's own leaf)", async () => {
    // A CA, its leaf (no basicConstraints cA), and a certificate the leaf's key issued: every signature
    // verifies, but a leaf may not issue certificates, so the chain reaches no trusted CA.
    const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
    const day = 86_400_000;
    const validity = { notBefore: new Date(Date.now() - day), notAfter: new Date(Date.now() + day) };
    const caKeys = await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']);
    const ca = await x509.X509CertificateGenerator.createSelfSigned({
      name: 'CN=Leafy Wallets CA',
      keys: caKeys,
      signingAlgorithm: EC,
      ...validity,
      extensions: [new x509.BasicConstraintsExtension(true, 1, true)],
    });
    const leafKeys = await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']);
    const leaf = await x509.X509CertificateGenerator.create({
      subject: 'CN=Leafy Wallets',
      issuer: ca.subject,
      publicKey: leafKeys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: EC,
      ...validity,
    });
    const issuedKeys = await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']);
    const issued = await x509.X509CertificateGenerator.create({
      subject: 'CN=Issued by a leaf',
      issuer: leaf.subject,
      publicKey: issuedKeys.publicKey,
      signingKey: leafKeys.privateKey,
      signingAlgorithm: EC,
      ...validity,
    });
    const now = Math.floor(Date.now() / 1000);
    const attestation = await new SignJWT({
      iss: 'https://leafy.example',
      sub: CLIENT_ID,
      iat: now,
      exp: now + 3600,
      cnf: { jwk: instance.publicJwk },
    })
      .setProtectedHeader({
        alg: 'ES256',
        typ: 'oauth-client-attestation+jwt',
        x5c: [issued, leaf, ca].map((c) => Buffer.from(c.rawData).toString('base64')),
      })
      .sign(issuedKeys.privateKey);
    await settings({ walletProviders: [{ name: 'Leafy Wallets', certificates: [ca.toString('pem')] }] });
    try {
      const reply = await par({ ...(await headersFor()), 'oauth-client-attestation': attestation });
      expectError(reply, 'invalid_client');
      expect(reply.body.error_description).toMatch(/trusted wallet provider/);
    } finally {
      await settings({ walletAttestationRequired: true });
    }
  });

  it('refuses an attestation issued to another client (sub is not client_id)', async () => {
    const reply = await par(await headersFor({ attestation: { sub: 'another-wallet' } }));
    expectError(reply, 'invalid_client');
    expect(reply.body.error_description).toMatch(/another client/);
  });

  it('refuses a proof not signed by the attested instance key', async () => {
    const stranger = await walletInstance();
    const headers = await headersFor();
    headers['oauth-client-attestation-pop'] = await stranger.pop({ iss: CLIENT_ID, aud: issuer });
    const reply = await par(headers);
    expectError(reply, 'invalid_client');
    expect(reply.body.error_description).toMatch(/cnf\.jwk/);
  });

  it('refuses a proof for another authorization server, and a stale one', async () => {
    const elsewhere = await par(await headersFor({ pop: { aud: 'https://elsewhere.example' } }));
    expectError(elsewhere, 'invalid_client');
    expect(elsewhere.body.error_description).toMatch(/aud/);
    const stale = await par(await headersFor({ pop: { iat: Math.floor(Date.now() / 1000) - 600 } }));
    expectError(stale, 'invalid_client');
    expect(stale.body.error_description).toMatch(/iat/);
  });

  it('refuses a replayed proof (the same jti twice)', async () => {
    const headers = await headersFor();
    expect((await par(headers)).status).toBe(201);
    const replay = await par(headers);
    expectError(replay, 'invalid_client');
    expect(replay.body.error_description).toMatch(/used before/);
  });
});

describe('wallet attestation with challenges', () => {
  beforeAll(() => settings({ walletAttestationRequired: true, walletAttestationChallengeRequired: true }));

  it('asks for a challenge when the proof has none, and accepts the one it hands out', async () => {
    const missing = await par(await headersFor());
    expectError(missing, 'use_attestation_challenge');
    const offered = missing.headers.get('oauth-client-attestation-challenge');
    expect(offered).toBeTruthy();
    expect((await par(await headersFor({ pop: { challenge: offered as string } }))).status).toBe(201);
  });

  it('accepts a challenge from the challenge endpoint once', async () => {
    const value = await challenge();
    expect((await par(await headersFor({ pop: { challenge: value } }))).status).toBe(201);
    expectError(await par(await headersFor({ pop: { challenge: value } })), 'use_attestation_challenge');
  });

  it('refuses a challenge it never issued', async () => {
    expectError(await par(await headersFor({ pop: { challenge: 'made-up-challenge' } })), 'use_attestation_challenge');
  });

  it('runs the whole flow with a challenge at PAR and at the token endpoint', async () => {
    const { verifier, challenge: codeChallenge } = pkce();
    const pushed = await par(await headersFor({ pop: { challenge: await challenge() } }), codeChallenge);
    expect(pushed.status, pushed.text).toBe(201);
    const answer = await fetch(
      `${issuer}/authorize?${new URLSearchParams({ client_id: CLIENT_ID, request_uri: pushed.body.request_uri })}`,
      {
        redirect: 'manual',
      },
    );
    const code = new URL(answer.headers.get('location') as string).searchParams.get('code') as string;
    const reply = await token(codeGrant({ code, verifier }), await headersFor({ pop: { challenge: await challenge() } }));
    expect(reply.status, reply.text).toBe(200);
  });
});

describe("wallet providers listed in the tenant's trust lists", () => {
  const listProvider = (serviceType: string) =>
    svc.raw('POST', '/api/trust-list', {
      token: acme,
      body: { id: 'wallet-providers', entities: [{ type: 'external', name: trusted.name, certificates: [trusted.caPem], serviceType }] },
    });
  const unlist = async () => expect((await svc.call('DELETE', '/api/trust-list/wallet-providers', { token: acme })).status).toBe(204);

  it('accepts attestations of a walletIssuance entity at once, and no longer once the list drops it', async () => {
    const reply = await svc.raw('PUT', '/api/issuer/config', {
      token: acme,
      body: { walletProviders: [], walletAttestationRequired: true },
    });
    expect(reply.status, reply.text).toBe(200);
    expectError(await par(await headersFor()), 'invalid_client');
    const listed = await listProvider('walletIssuance');
    expect(listed.status, listed.text).toBe(201);
    const pushed = await par(await headersFor());
    expect(pushed.status, pushed.text).toBe(201);
    await unlist();
    const refused = await par(await headersFor());
    expectError(refused, 'invalid_client');
    expect(refused.body.error_description).toMatch(/not signed by a trusted wallet provider/);
  });

  it('does not take an entity listed for credential issuance as a wallet provider', async () => {
    expect((await listProvider('issuance')).status).toBe(201);
    try {
      expectError(await par(await headersFor()), 'invalid_client');
    } finally {
      await unlist();
    }
  });

  it('publishes the entity with the ETSI wallet solution service type', async () => {
    expect((await listProvider('walletIssuance')).status).toBe(201);
    try {
      const published = await fetch(`${svc.url}/issuers/acme/trust-lists/wallet-providers`);
      expect(published.status).toBe(200);
      const [, payload] = (await published.text()).split('.');
      const lote = JSON.parse(Buffer.from(payload as string, 'base64url').toString());
      const services = lote.LoTE.TrustedEntitiesList.flatMap((e: any) => e.TrustedEntityServices);
      expect(services.map((s: any) => s.ServiceInformation.ServiceTypeIdentifier)).toEqual([
        'http://uri.etsi.org/19602/SvcType/WalletSolution/Issuance',
      ]);
    } finally {
      await unlist();
    }
  });
});

describe('wallet attestation not required', () => {
  beforeAll(() => settings({ walletAttestationRequired: false }));

  it('accepts a request without attestation', async () => {
    expect((await par({})).status).toBe(201);
  });

  it('takes the client_id from the attestation when the token request leaves it out', async () => {
    const { client_id: _, ...withoutClientId } = codeGrant(await code());
    expectError(await token(withoutClientId), 'invalid_request');
    expect((await token(withoutClientId, await headersFor())).status).toBe(200);
  });

  it('binds a code pushed with attestation to that wallet instance', async () => {
    const other = await walletInstance();
    const anotherInstance = await token(codeGrant(await code()), await headersFor({}, trusted, other));
    expectError(anotherInstance, 'invalid_grant');
    expect(anotherInstance.body.error_description).toMatch(/another wallet instance/);
    expectError(await token(codeGrant(await code())), 'invalid_grant');
    expect((await token(codeGrant(await code()), await headersFor())).status).toBe(200);
  });

  it('binds the refresh tokens of an attested code to that wallet instance too', async () => {
    const granted = await token(codeGrant(await code()), await headersFor());
    expect(granted.status, granted.text).toBe(200);
    const refresh = (refreshToken: string) => ({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: CLIENT_ID });
    const other = await token(refresh(granted.body.refresh_token), await headersFor({}, trusted, await walletInstance()));
    expectError(other, 'invalid_grant');
    expect(other.body.error_description).toMatch(/refresh token was issued to another wallet instance/);
    const bare = await token(refresh(granted.body.refresh_token));
    expectError(bare, 'invalid_grant');
    expect(bare.body.error_description).toMatch(/send its client attestation/);
    const refreshed = await token(refresh(granted.body.refresh_token), await headersFor());
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.body.access_token).not.toBe(granted.body.access_token);
  });

  it('still verifies an attestation that is sent, and refuses a bad one', async () => {
    expect((await par(await headersFor())).status).toBe(201);
    expectError(await par(await headersFor({}, rogue)), 'invalid_client');
    expectError(await par(await headersFor({ pop: { aud: 'https://elsewhere.example' } })), 'invalid_client');
    const pre = (await offer('pre_authorized_code'))[PRE_AUTHORIZED_GRANT]['pre-authorized_code'] as string;
    expectError(
      await token({ grant_type: PRE_AUTHORIZED_GRANT, 'pre-authorized_code': pre }, await headersFor({}, rogue)),
      'invalid_client',
    );
  });
});
