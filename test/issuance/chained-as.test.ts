// The chained authorization server against a real OpenID Provider (oidc-provider) on a loopback
// port: a wallet (@openid4vc/openid4vci) pushes its request with DPoP, the user is sent to the
// provider, logs in through its pages over HTTP, comes back through the callback, and the wallet
// gets a code, a DPoP-bound token and a credential carrying the claims the provider gave. Then every
// way the login can go wrong, and the settings that configure it.
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { Openid4vciClient } from '@openid4vc/openid4vci';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issuanceCallbacks } from '../../wallet/callbacks.js';
import { type LoginProvider, loginAt, startLoginProvider } from '../support/oidc-provider.js';
import { expectFieldErrors, expectProblem } from '../support/problems.js';
import { verifySdJwtIndependently } from '../support/sd-jwt-check.js';
import { startService, type TestService } from '../support/service.js';
import { dpopProof, type HolderKey, holderKey, keyProof, pkce, WALLET_REDIRECT_URI } from '../support/wallet.js';
import { attestationHeaders, walletInstance, walletProvider } from '../support/wallet-provider.js';

let svc: TestService;
let acme: string;
let provider: LoginProvider;
let rootCertificate: string;

const CLIENT_SECRET = `svc-secret-${randomBytes(12).toString('base64url')}`;
const ERIKA = { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12', email: 'erika@example.com' };

const chainedId = (tenant = 'acme') => `${svc.url}/api/issuers/${tenant}/chained-as-vp`;
const chainedUrl = (path: string, tenant = 'acme') => `${chainedId(tenant)}/${path}`;

const chainedSettings = (extra: Record<string, unknown> = {}) => ({
  issuer: provider.issuer,
  clientId: 'svc',
  clientSecret: CLIENT_SECRET,
  scopes: ['openid', 'profile'],
  claimMapping: [
    { upstreamClaim: ['given_name'], credentialClaim: ['given_name'] },
    { upstreamClaim: ['family_name'], credentialClaim: ['family_name'] },
    { upstreamClaim: ['birthdate'], credentialClaim: ['birth', 'date'] },
    // Not given for the profile scope: left out of the credential.
    { upstreamClaim: ['email'], credentialClaim: ['email'] },
  ],
  ...extra,
});

async function putSettings(settings: Record<string, unknown>, token = acme) {
  return svc.raw('PUT', '/api/issuer/config', { token, body: settings });
}

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  // The callback of the service is the redirect URI registered at the provider, so the service starts first.
  provider = await startLoginProvider({
    clients: [
      { clientId: 'svc', secret: CLIENT_SECRET, redirectUri: chainedUrl('callback') },
      { clientId: 'another-relying-party', secret: 'another-secret-0123456789', redirectUri: 'https://rp.example/cb' },
    ],
    users: { erika: ERIKA, max: { given_name: 'Max' } },
  });
  const created = await svc.call('POST', '/api/issuer/credentials', {
    token: acme,
    body: {
      id: 'pid',
      config: { format: 'dc+sd-jwt', scope: 'pid_scope' },
      vct: 'urn:example:pid',
      keyBinding: true,
      fields: [
        { path: ['given_name'], type: 'string' },
        { path: ['family_name'], type: 'string' },
        { path: ['birth'], type: 'object', children: [{ path: ['date'], type: 'string' }] },
        { path: ['email'], type: 'string' },
      ],
    },
  });
  expect(created.status, created.text).toBe(201);
  const strict = await svc.call('POST', '/api/issuer/credentials', {
    token: acme,
    body: {
      id: 'pid-strict',
      config: { format: 'dc+sd-jwt', scope: 'pid_strict_scope' },
      vct: 'urn:example:pid-strict',
      keyBinding: true,
      fields: [
        { path: ['given_name'], type: 'string', mandatory: true },
        { path: ['family_name'], type: 'string', mandatory: true },
        // No birth or email: of the claims the mapping makes for the session, this credential takes the ones it declares.
      ],
    },
  });
  expect(strict.status, strict.text).toBe(201);
  const saved = await putSettings({ chainedAuthorizationServer: chainedSettings() });
  expect(saved.status, saved.text).toBe(200);
  rootCertificate = (await svc.raw('GET', '/api/key-chain/default-attestation', { token: acme })).body.rootCertificate;
});
afterAll(async () => {
  await provider?.stop();
  await svc?.stop();
});

const offer = async (extra: Record<string, unknown> = {}) => {
  const reply = await svc.raw('POST', '/api/issuer/offer', {
    token: acme,
    body: {
      response_type: 'uri',
      flow: 'authorization_code',
      credentialConfigurationIds: ['pid'],
      authorization_server: chainedId(),
      ...extra,
    },
  });
  expect(reply.status, reply.text).toBe(201);
  return { ...reply.body, issuerState: reply.body.credentialOffer.grants.authorization_code.issuer_state as string };
};

async function get(url: string) {
  const response = await fetch(url, { redirect: 'manual' });
  const location = response.headers.get('location');
  const text = await response.text();
  return {
    status: response.status,
    location: location ? new URL(location) : undefined,
    text,
    body: text.startsWith('{') ? JSON.parse(text) : undefined,
  };
}

/** PAR by hand at the chained server (with DPoP), then its authorization endpoint: the provider URL it sends the user to. */
async function startLogin(issuerState: string | undefined, options: { headers?: Record<string, string> } = {}) {
  const key = await holderKey();
  const { verifier, challenge } = pkce();
  const parUrl = chainedUrl('par');
  const pushed = await svc.raw('POST', new URL(parUrl).pathname, {
    form: {
      client_id: 'raw-wallet',
      response_type: 'code',
      redirect_uri: WALLET_REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'wallet-state',
      ...(issuerState !== undefined && { issuer_state: issuerState }),
      scope: 'pid_scope',
    },
    headers: { dpop: await dpopProof(key, parUrl), ...options.headers },
  });
  expect(pushed.status, pushed.text).toBe(201);
  const authorized = await get(
    `${chainedUrl('authorize')}?${new URLSearchParams({ client_id: 'raw-wallet', request_uri: pushed.body.request_uri })}`,
  );
  expect(authorized.status, authorized.text).toBe(302);
  return { key, verifier, requestUri: pushed.body.request_uri as string, providerUrl: authorized.location as URL };
}

/** Offer, PAR, authorization and the login at the provider: the callback URL the provider sends the user to. */
async function loginUntilCallback(options: { headers?: Record<string, string>; user?: string } = {}) {
  const created = await offer();
  const started = await startLogin(created.issuerState, options);
  const callback = await loginAt(started.providerUrl.toString(), options.user ?? 'erika');
  expect(callback.toString().startsWith(chainedUrl('callback'))).toBe(true);
  return { created, ...started, callback };
}

const logsOf = async (session: string) =>
  ((await svc.call('GET', `/api/session/${session}/logs`, { token: acme })).body as { message: string; details: any }[]).map(
    (entry) => `${entry.message}${entry.details?.reason ? `: ${entry.details.reason}` : ''}`,
  );

/** The wallet's redirect after a failed login: the error, with the wallet's state and this server as iss. */
function expectWalletError(location: URL | undefined, error: string) {
  expect(location?.origin + (location?.pathname ?? '')).toBe(WALLET_REDIRECT_URI);
  expect(location?.searchParams.get('error')).toBe(error);
  expect(location?.searchParams.get('state')).toBe('wallet-state');
  expect(location?.searchParams.get('iss')).toBe(chainedId());
  expect(location?.searchParams.get('code')).toBeNull();
}

describe('chained authorization server: metadata and offers', () => {
  it('is an authorization server of its own, listed in the credential issuer metadata beside the built-in one', async () => {
    const issuerMetadata = (await svc.raw('GET', '/.well-known/openid-credential-issuer/issuers/acme')).body;
    expect(issuerMetadata.authorization_servers).toEqual([`${svc.url}/issuers/acme`, chainedId()]);
    const as = await svc.call('GET', '/.well-known/oauth-authorization-server/api/issuers/acme/chained-as-vp');
    expect(as.status, as.text).toBe(200);
    expect(as.body).toMatchObject({
      issuer: chainedId(),
      pushed_authorization_request_endpoint: chainedUrl('par'),
      authorization_endpoint: chainedUrl('authorize'),
      token_endpoint: chainedUrl('token'),
      require_pushed_authorization_requests: true,
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      authorization_response_iss_parameter_supported: true,
      dpop_signing_alg_values_supported: expect.arrayContaining(['ES256']),
    });
    // The configurations' scope values, as the built-in server lists them too (RFC 8414 scopes_supported).
    expect((as.body as { scopes_supported?: string[] }).scopes_supported).toEqual(['pid_scope', 'pid_strict_scope']);
  });

  it('offers name it as their authorization server, with issuer_state; the pre-authorized flow stays with the built-in server', async () => {
    const created = await offer();
    expect(created.credentialOffer.grants.authorization_code).toEqual({
      issuer_state: expect.any(String),
      authorization_server: chainedId(),
    });
    const preAuthorized = await svc.call('POST', '/api/issuer/offer', {
      token: acme,
      body: { response_type: 'uri', flow: 'pre_authorized_code', credentialConfigurationIds: ['pid'], authorization_server: chainedId() },
    });
    expectFieldErrors(preAuthorized, ['body.authorization_server']);
    // Interactive authorization steps are the built-in server's (its interactive authorization endpoint).
    const { publicKey } = await generateKeyPair('ES256');
    const interactive = await svc.raw('POST', '/api/issuer/credentials', {
      token: acme,
      body: {
        id: 'pid-interactive',
        config: { format: 'dc+sd-jwt', scope: 'pid_interactive_scope' },
        vct: 'urn:example:pid-interactive',
        fields: [{ path: ['given_name'], type: 'string' }],
        iaeActions: [{ type: 'redirect-to-web', url: 'https://integrator.example/step', callbackKey: await exportJWK(publicKey) }],
      },
    });
    expect(interactive.status, interactive.text).toBe(201);
    const withSteps = await svc.call('POST', '/api/issuer/offer', {
      token: acme,
      body: {
        response_type: 'uri',
        flow: 'authorization_code',
        credentialConfigurationIds: ['pid-interactive'],
        authorization_server: chainedId(),
      },
    });
    expectFieldErrors(withSteps, ['body.authorization_server']);
    const unknown = await svc.call('POST', '/api/issuer/offer', {
      token: acme,
      body: {
        response_type: 'uri',
        flow: 'authorization_code',
        credentialConfigurationIds: ['pid'],
        authorization_server: 'https://as.example',
      },
    });
    expectFieldErrors(unknown, ['body.authorization_server']);
  });
});

/**
 * The flow as a wallet runs it (@openid4vc/openid4vci, DPoP) with the user logging in at the provider
 * as `user`: what each step answered, and the credential request still to make.
 */
async function walletFlow(offerUri: string, options: { user?: string; configurationId?: string; scope?: string } = {}) {
  const configurationId = options.configurationId ?? 'pid';
  const keys = [await holderKey()];
  const signer = (keys[0] as HolderKey).signer;
  const client = new Openid4vciClient({ callbacks: issuanceCallbacks(keys, 'test-wallet') });
  const credentialOffer = await client.resolveCredentialOffer(offerUri);
  const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
  const request = await client.createAuthorizationRequestUrlFromOffer({
    clientId: 'test-wallet',
    credentialOffer,
    issuerMetadata,
    redirectUri: WALLET_REDIRECT_URI,
    scope: options.scope ?? 'pid_scope',
    dpop: { signer },
  });
  // The user agent goes to the provider, logs in there and comes back through the callback.
  const toProvider = await get(request.authorizationRequestUrl);
  expect(toProvider.status, toProvider.text).toBe(302);
  const providerUrl = toProvider.location as URL;
  const callback = await loginAt(providerUrl.toString(), options.user ?? 'erika');
  const back = await get(callback.toString());
  expect(back.status, back.text).toBe(302);
  const authorizationServerMetadata = issuerMetadata.authorizationServers.find((as) => as.issuer === chainedId());
  if (!authorizationServerMetadata) throw new Error('the chained server is not in the issuer metadata');
  // The wallet's own check of the response: its state, and iss naming the chained server (RFC 9207).
  const response = client.parseAndVerifyAuthorizationResponseRedirectUrl({
    url: back.location?.toString() as string,
    authorizationServerMetadata,
  });
  const token = await client.retrieveAuthorizationCodeAccessTokenFromOffer({
    credentialOffer,
    issuerMetadata,
    authorizationCode: response.code as string,
    redirectUri: WALLET_REDIRECT_URI,
    ...(request.pkce && { pkceCodeVerifier: request.pkce.codeVerifier }),
    ...(request.dpop && { dpop: request.dpop }),
  });
  const credential = async () => {
    const { c_nonce } = await client.requestNonce({ issuerMetadata });
    const proof = await client.createCredentialRequestJwtProof({
      issuerMetadata,
      signer,
      nonce: c_nonce,
      credentialConfigurationId: configurationId,
    });
    const credentials = await client.retrieveCredentials({
      issuerMetadata,
      accessToken: token.accessTokenResponse.access_token,
      credentialConfigurationId: configurationId,
      proofs: { jwt: [proof.jwt] },
      ...(token.dpop && { dpop: token.dpop }),
    });
    const [issued] = (credentials.credentialResponse.credentials ?? []) as { credential: string }[];
    return issued?.credential as string;
  };
  return { request, providerUrl, response, token, credential };
}

describe('chained authorization server: the whole flow with a wallet', () => {
  it('PAR with DPoP, login at the provider, code, DPoP-bound token, and a credential with the claims the provider gave', async () => {
    const created = await offer();
    const { request, providerUrl, response, token, credential } = await walletFlow(created.uri);
    expect(request.authorizationRequestUrl.startsWith(chainedUrl('authorize'))).toBe(true);
    // The provider was asked with the chained server's own client, state, nonce and PKCE.
    expect(`${providerUrl.origin}/`).toBe(`${provider.issuer}/`);
    expect(Object.fromEntries(providerUrl.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: 'svc',
      redirect_uri: chainedUrl('callback'),
      scope: 'openid profile',
      code_challenge_method: 'S256',
      state: expect.any(String),
      nonce: expect.any(String),
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
    });
    expect(providerUrl.searchParams.get('state')).not.toBe(new URL(request.authorizationRequestUrl).searchParams.get('state'));
    expect(response.code).toEqual(expect.any(String));
    expect(token.accessTokenResponse.token_type).toBe('DPoP');
    expect(token.accessTokenResponse.refresh_token).toEqual(expect.any(String));

    const { claims } = await verifySdJwtIndependently(await credential(), rootCertificate);
    expect(claims).toMatchObject({ given_name: 'Erika', family_name: 'Mustermann', birth: { date: '1964-08-12' } });
    // email was mapped but the provider did not give it for these scopes.
    expect(claims.email).toBeUndefined();

    const logs = await logsOf(created.session);
    expect(logs).toEqual(expect.arrayContaining(['upstream login started', 'upstream login succeeded', 'authorization code issued']));
    const session = (await svc.call('GET', `/api/session/${created.session}`, { token: acme })).body;
    expect(session.status).toBe('completed');
  });

  it('mandatory claims are checked when the credential is issued, not when the offer is made: the provider supplies them', async () => {
    const created = await offer({ credentialConfigurationIds: ['pid-strict'] });
    const { claims } = await verifySdJwtIndependently(
      await (await walletFlow(created.uri, { configurationId: 'pid-strict', scope: 'pid_strict_scope' })).credential(),
      rootCertificate,
    );
    expect(claims).toMatchObject({ given_name: 'Erika', family_name: 'Mustermann' });
    // The mapped birth.date is not a claim of this configuration: left out, not a refusal.
    expect(claims.birth).toBeUndefined();
    // A user the provider knows no family name of gets no credential of this configuration.
    const incomplete = await offer({ credentialConfigurationIds: ['pid-strict'] });
    const flow = await walletFlow(incomplete.uri, { configurationId: 'pid-strict', scope: 'pid_strict_scope', user: 'max' });
    await expect(flow.credential()).rejects.toThrow(/credential_request_denied|family_name/);
  });

  it('a wallet-initiated request (no issuer_state): the login at the provider identifies the person, and the credential carries its claims', async () => {
    const { key, verifier, providerUrl } = await startLogin(undefined);
    const back = await get((await loginAt(providerUrl.toString(), 'erika')).toString());
    const code = back.location?.searchParams.get('code') as string;
    expect(code, back.text).toEqual(expect.any(String));
    const tokenUrl = chainedUrl('token');
    const token = await svc.raw('POST', new URL(tokenUrl).pathname, {
      form: { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: WALLET_REDIRECT_URI, client_id: 'raw-wallet' },
      headers: { dpop: await dpopProof(key, tokenUrl) },
    });
    expect(token.status, token.text).toBe(200);
    const credentialUrl = `${svc.url}/issuers/acme/credential`;
    const { c_nonce } = (await svc.raw('POST', '/issuers/acme/nonce')).body;
    const proof = await keyProof(key, `${svc.url}/issuers/acme`, c_nonce);
    const issued = await svc.raw('POST', '/issuers/acme/credential', {
      headers: {
        authorization: `DPoP ${token.body.access_token}`,
        dpop: await dpopProof(key, credentialUrl, { accessToken: token.body.access_token }),
      },
      body: { credential_configuration_id: 'pid', proofs: { jwt: [proof] } },
    });
    expect(issued.status, issued.text).toBe(200);
    const { claims } = await verifySdJwtIndependently(issued.body.credentials[0].credential, rootCertificate);
    expect(claims).toMatchObject({ given_name: 'Erika', family_name: 'Mustermann', birth: { date: '1964-08-12' } });
    // No offer made the session: the request opened one of its own.
    const [row] = await svc.db.selectFrom('sessions').select('id').where('public_data', 'like', '%"wallet-initiated"%').execute();
    const opened = (await svc.call('GET', `/api/session/${row?.id}`, { token: acme })).body;
    expect(opened).toMatchObject({ status: 'completed', credentialConfigurationIds: ['pid'] });
    expect(await logsOf(opened.id)).toEqual(expect.arrayContaining(['wallet-initiated authorization request', 'upstream login succeeded']));
  });

  it('a refresh token of the chained server is redeemed at its token endpoint', async () => {
    const { verifier, key, callback } = await loginUntilCallback();
    const back = await get(callback.toString());
    const code = back.location?.searchParams.get('code') as string;
    const tokenUrl = chainedUrl('token');
    const form = {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: WALLET_REDIRECT_URI,
      client_id: 'raw-wallet',
    };
    const issued = await svc.raw('POST', new URL(tokenUrl).pathname, { form, headers: { dpop: await dpopProof(key, tokenUrl) } });
    expect(issued.status, issued.text).toBe(200);
    const refreshed = await svc.raw('POST', new URL(tokenUrl).pathname, {
      form: { grant_type: 'refresh_token', refresh_token: issued.body.refresh_token, client_id: 'raw-wallet' },
      headers: { dpop: await dpopProof(key, tokenUrl) },
    });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.body.token_type).toBe('DPoP');
  });
});

describe('chained authorization server: failed logins', () => {
  const cases: [string, Parameters<LoginProvider['rewriteIdToken']>[0], RegExp][] = [
    ['an ID token with another nonce', (claims) => ({ ...claims, nonce: 'not-the-nonce-of-this-login' }), /nonce/],
    [
      'an ID token for another client (aud)',
      (claims) => ({ ...claims, aud: 'another-relying-party', azp: 'another-relying-party' }),
      /aud/,
    ],
    ['an ID token whose signature does not verify', 'bad-signature', /signature/],
    ['an ID token of another issuer', (claims) => ({ ...claims, iss: 'https://evil.example' }), /iss/],
    [
      'an expired ID token',
      (claims) => ({ ...claims, iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }),
      /expired|iat/,
    ],
  ];
  for (const [name, rewrite, reason] of cases) {
    it(`${name} sends the wallet access_denied, and the reason goes to the session log`, async () => {
      const { created, callback } = await loginUntilCallback();
      provider.rewriteIdToken(rewrite);
      try {
        const back = await get(callback.toString());
        expect(back.status, back.text).toBe(302);
        expectWalletError(back.location, 'access_denied');
      } finally {
        provider.rewriteIdToken(undefined);
      }
      const failed = (await logsOf(created.session)).find((entry) => entry.startsWith('upstream login failed'));
      expect(failed).toMatch(reason);
    });
  }

  it('an error from the provider (the user declined) sends the wallet access_denied', async () => {
    const created = await offer();
    const { providerUrl } = await startLogin(created.issuerState);
    const state = providerUrl.searchParams.get('state') as string;
    const back = await get(`${chainedUrl('callback')}?${new URLSearchParams({ state, error: 'access_denied', iss: provider.issuer })}`);
    expect(back.status, back.text).toBe(302);
    expectWalletError(back.location, 'access_denied');
    expect(await logsOf(created.session)).toContain('upstream login failed: the provider answered access_denied');
  });

  it('an answer naming another issuer (RFC 9207 mix-up) is refused', async () => {
    const { callback } = await loginUntilCallback();
    const forged = new URL(callback);
    forged.searchParams.set('iss', 'https://evil.example');
    const back = await get(forged.toString());
    expectWalletError(back.location, 'access_denied');
  });

  it('a callback with an unknown state is a 400 invalid_request, sent to nobody', async () => {
    const back = await get(`${chainedUrl('callback')}?${new URLSearchParams({ state: 'not-a-state-of-ours', code: 'whatever' })}`);
    expect(back.status).toBe(400);
    expect(back.body).toMatchObject({ error: 'invalid_request' });
    expect(back.location).toBeUndefined();
    const missing = await get(`${chainedUrl('callback')}?code=whatever`);
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ error: 'invalid_request', error_description: 'state is required' });
  });

  it('a replayed callback is refused: the state works once, and only the first gets a code', async () => {
    const { callback } = await loginUntilCallback();
    const first = await get(callback.toString());
    expect(first.location?.searchParams.get('code')).toEqual(expect.any(String));
    const replay = await get(callback.toString());
    expect(replay.status).toBe(400);
    expect(replay.body).toMatchObject({ error: 'invalid_request' });
  });

  it('a login started for a request that was replaced (a new PAR for the offer) no longer counts', async () => {
    const created = await offer();
    const first = await startLogin(created.issuerState);
    const callback = await loginAt(first.providerUrl.toString(), 'erika');
    await startLogin(created.issuerState);
    const back = await get(callback.toString());
    expect(back.status).toBe(400);
    expect(back.body).toMatchObject({ error: 'invalid_request' });
  });
});

describe('chained authorization server: an unreachable provider', () => {
  it('the wallet gets temporarily_unavailable, and the session log says why', async () => {
    const created = await offer();
    const saved = await putSettings({ chainedAuthorizationServer: chainedSettings({ issuer: 'http://127.0.0.1:9' }) });
    expect(saved.status, saved.text).toBe(200);
    try {
      const pushed = await svc.raw('POST', '/api/issuers/acme/chained-as-vp/par', {
        form: {
          client_id: 'raw-wallet',
          response_type: 'code',
          redirect_uri: WALLET_REDIRECT_URI,
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
          state: 'wallet-state',
          issuer_state: created.issuerState,
          scope: 'pid_scope',
        },
      });
      expect(pushed.status, pushed.text).toBe(201);
      const answer = await get(
        `${chainedUrl('authorize')}?${new URLSearchParams({ client_id: 'raw-wallet', request_uri: pushed.body.request_uri })}`,
      );
      expect(answer.status).toBe(302);
      expectWalletError(answer.location, 'temporarily_unavailable');
      expect((await logsOf(created.session)).find((entry) => entry.startsWith('upstream login could not start'))).toMatch(/discovery/);
    } finally {
      expect((await putSettings({ chainedAuthorizationServer: chainedSettings() })).status).toBe(200);
    }
  });
});

describe('chained authorization server: kept apart from the built-in one', () => {
  it('an offer of the chained server is unknown at the built-in PAR endpoint, and the other way round', async () => {
    const chained = await offer();
    const builtin = await offer({ authorization_server: `${svc.url}/issuers/acme` });
    const form = (issuerState: string) => ({
      client_id: 'raw-wallet',
      response_type: 'code',
      redirect_uri: WALLET_REDIRECT_URI,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      issuer_state: issuerState,
      scope: 'pid_scope',
    });
    const atBuiltin = await svc.call('POST', '/issuers/acme/par', { form: form(chained.issuerState) });
    expect(atBuiltin.status).toBe(400);
    expect(atBuiltin.body).toMatchObject({ error: 'invalid_request' });
    const atChained = await svc.call('POST', '/api/issuers/acme/chained-as-vp/par', { form: form(builtin.issuerState) });
    expect(atChained.status).toBe(400);
    expect(atChained.body).toMatchObject({ error: 'invalid_request' });
  });

  it("the chained server's request_uri and code do not work at the built-in endpoints", async () => {
    const created = await offer();
    const key = await holderKey();
    const { challenge, verifier } = pkce();
    const pushed = await svc.raw('POST', '/api/issuers/acme/chained-as-vp/par', {
      form: {
        client_id: 'raw-wallet',
        response_type: 'code',
        redirect_uri: WALLET_REDIRECT_URI,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        issuer_state: created.issuerState,
        scope: 'pid_scope',
      },
    });
    expect(pushed.status, pushed.text).toBe(201);
    const builtinAuthorize = await get(
      `${svc.url}/issuers/acme/authorize?${new URLSearchParams({ client_id: 'raw-wallet', request_uri: pushed.body.request_uri })}`,
    );
    expect(builtinAuthorize.status).toBe(400);
    expect(builtinAuthorize.body).toMatchObject({ error: 'invalid_request_uri' });

    const { callback } = await loginUntilCallback();
    const code = (await get(callback.toString())).location?.searchParams.get('code') as string;
    const atBuiltin = await svc.call('POST', '/issuers/acme/token', {
      form: { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: WALLET_REDIRECT_URI, client_id: 'raw-wallet' },
      headers: { dpop: await dpopProof(key, `${svc.url}/issuers/acme/token`) },
    });
    expect(atBuiltin.status).toBe(400);
    expect(atBuiltin.body).toMatchObject({ error: 'invalid_grant' });
  });

  it('the chained token endpoint takes no pre-authorized code', async () => {
    const reply = await svc.call('POST', '/api/issuers/acme/chained-as-vp/token', {
      form: { grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code', 'pre-authorized_code': 'x' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ error: 'unsupported_grant_type' });
  });

  it('PAR keeps its checks at the chained server: PKCE plain is refused, a DPoP proof must name its URL, redirect URIs as at the built-in one', async () => {
    const created = await offer();
    const key = await holderKey();
    const base = {
      client_id: 'raw-wallet',
      response_type: 'code',
      redirect_uri: WALLET_REDIRECT_URI,
      issuer_state: created.issuerState,
      scope: 'pid_scope',
    };
    const plain = await svc.call('POST', '/api/issuers/acme/chained-as-vp/par', {
      form: { ...base, code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' },
    });
    expect(plain.body).toMatchObject({ error: 'invalid_request' });
    const otherUrl = await svc.call('POST', '/api/issuers/acme/chained-as-vp/par', {
      form: { ...base, code_challenge: pkce().challenge, code_challenge_method: 'S256' },
      headers: { dpop: await dpopProof(key, `${svc.url}/issuers/acme/par`) },
    });
    expect(otherUrl.body).toMatchObject({ error: 'invalid_dpop_proof' });
    const pushWith = (redirect_uri: string) =>
      svc.call('POST', '/api/issuers/acme/chained-as-vp/par', {
        form: { ...base, redirect_uri, code_challenge: pkce().challenge, code_challenge_method: 'S256' },
      });
    for (const bad of ['ms-msdt:/id PCWDiagnostic', 'intent://cb', 'http://example.com/cb', 'https://wallet.example/cb#x']) {
      const refused = await pushWith(bad);
      expect(refused.status, bad).toBe(400);
      expect(refused.body, bad).toMatchObject({ error: 'invalid_request', error_description: expect.stringMatching(/^redirect_uri /) });
    }
    for (const good of ['com.example.wallet:/cb', 'http://127.0.0.1:4000/cb']) {
      const taken = await pushWith(good);
      expect(taken.status, `${good}: ${taken.text}`).toBe(201);
    }
  });
});

describe('chained authorization server: wallet attestation', () => {
  it('PAR and token endpoint verify the attestation, whose proof must be for this server (aud), not the built-in one', async () => {
    const [provider, instance] = await Promise.all([walletProvider('Chained Wallets'), walletInstance()]);
    const attested = (audience: string) => attestationHeaders(provider, instance, 'raw-wallet', audience);
    const required = await putSettings({
      chainedAuthorizationServer: chainedSettings(),
      walletAttestationRequired: true,
      walletProviders: [{ name: provider.name, certificates: [provider.caPem] }],
    });
    expect(required.status, required.text).toBe(200);
    try {
      const created = await offer();
      const form = {
        client_id: 'raw-wallet',
        response_type: 'code',
        redirect_uri: WALLET_REDIRECT_URI,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        issuer_state: created.issuerState,
        scope: 'pid_scope',
      };
      const without = await svc.call('POST', '/api/issuers/acme/chained-as-vp/par', { form });
      expect(without.status).toBe(401);
      expect(without.body).toMatchObject({ error: 'invalid_client' });
      const forBuiltin = await svc.raw('POST', '/api/issuers/acme/chained-as-vp/par', {
        form,
        headers: await attested(`${svc.url}/issuers/acme`),
      });
      expect(forBuiltin.status).toBe(401);
      expect(forBuiltin.body.error_description).toContain('aud');

      const { verifier, key, callback } = await loginUntilCallback({ headers: await attested(chainedId()) });
      const code = (await get(callback.toString())).location?.searchParams.get('code') as string;
      const tokenUrl = chainedUrl('token');
      const grant = {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: WALLET_REDIRECT_URI,
        client_id: 'raw-wallet',
      };
      const issued = await svc.raw('POST', new URL(tokenUrl).pathname, {
        form: grant,
        headers: { dpop: await dpopProof(key, tokenUrl), ...(await attested(chainedId())) },
      });
      expect(issued.status, issued.text).toBe(200);
    } finally {
      expect((await putSettings({ chainedAuthorizationServer: chainedSettings() })).status).toBe(200);
    }
  });
});

describe('chained authorization server: settings', () => {
  it('the client secret is write-only: GET shows that it is set, never the secret, nor does the audit log', async () => {
    const shown = await svc.raw('GET', '/api/issuer/config', { token: acme });
    expect(shown.status).toBe(200);
    expect(shown.body.chainedAuthorizationServer).toMatchObject({ issuer: provider.issuer, clientId: 'svc', clientSecretSet: true });
    expect(shown.body.chainedAuthorizationServer.clientSecret).toBeUndefined();
    expect(shown.text).not.toContain(CLIENT_SECRET);
    const audit = await svc.call('GET', '/api/admin/audit-logs', { token: acme });
    expect(audit.status, audit.text).toBe(200);
    expect(audit.text).toContain('chainedAuthorizationServer');
    expect(audit.text).not.toContain(CLIENT_SECRET);
    // At rest it is sealed: the stored settings document does not hold it either.
    const stored = await svc.db.selectFrom('issuer_settings').select('document').where('tenant_id', '=', 'acme').executeTakeFirstOrThrow();
    expect(stored.document).toContain('clientSecret');
    expect(stored.document).not.toContain(CLIENT_SECRET);
  });

  it('a PUT without the secret keeps the stored one (logins still work); with another client it needs a new one', async () => {
    const { clientSecret: _secret, ...withoutSecret } = chainedSettings();
    const kept = await putSettings({ chainedAuthorizationServer: withoutSecret });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.body.chainedAuthorizationServer.clientSecretSet).toBe(true);
    const { callback } = await loginUntilCallback();
    expect((await get(callback.toString())).location?.searchParams.get('code')).toEqual(expect.any(String));

    const otherClient = await putSettings({ chainedAuthorizationServer: { ...withoutSecret, clientId: 'another-relying-party' } });
    expectFieldErrors(otherClient, ['body.chainedAuthorizationServer.clientSecret']);
    // A secret sealed elsewhere (an exported configuration of another tenant) is not taken for the secret itself.
    const foreign = await putSettings({
      chainedAuthorizationServer: chainedSettings({ clientSecret: 'v1.aaaaaaaaaaaaaaaa.bbbbbbbb.cccccccccccccccccccccc' }),
    });
    expectFieldErrors(foreign, ['body.chainedAuthorizationServer.clientSecret']);
  });

  it('validation names each faulty field', async () => {
    const noOpenid = await putSettings({ chainedAuthorizationServer: chainedSettings({ scopes: ['profile'] }) });
    expectFieldErrors(noOpenid, ['body.chainedAuthorizationServer.scopes']);
    const badIssuer = await putSettings({ chainedAuthorizationServer: chainedSettings({ issuer: 'javascript:alert(1)' }) });
    expectFieldErrors(badIssuer, ['body.chainedAuthorizationServer.issuer']);
    const badScope = await putSettings({ chainedAuthorizationServer: chainedSettings({ scopes: ['openid', 'two words'] }) });
    expectFieldErrors(badScope, ['body.chainedAuthorizationServer.scopes.1']);
    const badMapping = await putSettings({
      chainedAuthorizationServer: chainedSettings({
        claimMapping: [{ upstreamClaim: ['given_name'], credentialClaim: ['__proto__', 'x'] }],
      }),
    });
    expectFieldErrors(badMapping, ['body.chainedAuthorizationServer.claimMapping.0.credentialClaim.0']);
    const unknownField = await putSettings({ chainedAuthorizationServer: chainedSettings({ clientSecretSealed: 'x' }) });
    expectProblem(unknownField, 400);
    expect(unknownField.text).toContain('clientSecretSealed');
  });

  it('a client without issuance:manage may not read or change the settings (403)', async () => {
    const offerOnly = await svc.client(acme, 'acme-offers', ['issuance:offer']);
    expectProblem(await svc.call('GET', '/api/issuer/config', { token: offerOnly }), 403);
    expectProblem(await putSettings({ chainedAuthorizationServer: chainedSettings() }, offerOnly), 403);
  });

  it('disabled, it is gone from the metadata and its endpoints answer 404; offers may not name it', async () => {
    const disabled = await putSettings({ chainedAuthorizationServer: chainedSettings({ enabled: false }) });
    expect(disabled.status, disabled.text).toBe(200);
    try {
      const issuerMetadata = (await svc.raw('GET', '/.well-known/openid-credential-issuer/issuers/acme')).body;
      expect(issuerMetadata.authorization_servers).toBeUndefined();
      const as = await svc.call('GET', '/.well-known/oauth-authorization-server/api/issuers/acme/chained-as-vp');
      expect(as.status).toBe(404);
      expect(as.body).toMatchObject({ error: 'invalid_request' });
      const par = await svc.call('POST', '/api/issuers/acme/chained-as-vp/par', { form: { client_id: 'x' } });
      expect(par.status).toBe(404);
      const refused = await svc.call('POST', '/api/issuer/offer', {
        token: acme,
        body: { response_type: 'uri', flow: 'authorization_code', credentialConfigurationIds: ['pid'], authorization_server: chainedId() },
      });
      expectFieldErrors(refused, ['body.authorization_server']);
    } finally {
      expect((await putSettings({ chainedAuthorizationServer: chainedSettings() })).status).toBe(200);
    }
  });

  it('an external authorization server of the settings may serve an offer: issuer_state goes to it, and no endpoint here takes it', async () => {
    const external = 'https://as.example.com';
    const saved = await putSettings({ authorizationServers: [{ issuer: external }], chainedAuthorizationServer: chainedSettings() });
    expect(saved.status, saved.text).toBe(200);
    try {
      const created = await offer({ authorization_server: external });
      expect(created.credentialOffer.grants.authorization_code).toEqual({
        issuer_state: expect.any(String),
        authorization_server: external,
      });
      for (const path of ['/issuers/acme/par', '/api/issuers/acme/chained-as-vp/par']) {
        const pushed = await svc.raw('POST', path, {
          form: {
            client_id: 'raw-wallet',
            response_type: 'code',
            redirect_uri: WALLET_REDIRECT_URI,
            code_challenge: pkce().challenge,
            code_challenge_method: 'S256',
            issuer_state: created.issuerState,
            scope: 'pid_scope',
          },
        });
        expect(pushed.body, path).toMatchObject({ error: 'invalid_request' });
      }
    } finally {
      expect((await putSettings({ chainedAuthorizationServer: chainedSettings() })).status).toBe(200);
    }
  });
});
