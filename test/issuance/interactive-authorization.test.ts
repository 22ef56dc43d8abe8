// Interactive authorization (OpenID4VCI 1.1 draft) end to end over HTTP, at both of its endpoints:
// the Authorization Challenge Endpoint of the June 2026 draft (urn:openid:dcp:ia: types, ia_post,
// 401 insufficient_authorization, KB-JWT aud ia:<origin>) and the Interactive Authorization Endpoint
// of the drafts before (bare and urn:openid:dcp:iae: types, iae_post, KB-JWT aud iae:<endpoint URL>).
// A membership credential whose configuration asks for a PID presentation and a web step.
// The test is the wallet (the PID comes from this service's pre-authorized flow; the request object is
// verified with jose against its x5c; the presentation is built with @sd-jwt/sd-jwt-vc and jose) and
// the integrator (its page is where the browser is sent; it signs the step's result with its own key).
// @openid4vc/openid4vci and @openid4vc/oauth2 0.4.6 have no interactive authorization client, so the
// wallet's requests are made by hand in the draft's shapes.
import 'reflect-metadata';
import { createHash, randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redeemCode } from '../support/authorization.js';
import { PID_VCT } from '../support/fixtures.js';
import { encryptIaeResponse, openWebStep as openSharedWebStep, postWebResult, signWebResult, verifyIaeRequest } from '../support/iae.js';
import { presentSdJwt, type ResolvedRequest } from '../support/presenter.js';
import { verifySdJwtIndependently } from '../support/sd-jwt-check.js';
import { startService, type TestService } from '../support/service.js';
import { holderKey, pkce, receiveCredentials, WALLET_REDIRECT_URI, walletClient } from '../support/wallet.js';
import { attestationHeaders, walletInstance, walletProvider } from '../support/wallet-provider.js';

let svc: TestService;
let acme: string;
let other: string;
let rootCertificate: string;
let integrator: CryptoKeyPair;
let integratorJwk: JWK;
let kycJwk: JWK;
let pid: Issued;

const INTEGRATOR_PAGE = 'https://integrator.example/membership';
const CLIENT_ID = 'iae-wallet';
const STATUS_SIGNER = { type: 'internal', keyChainId: 'default-statusList', serviceType: 'revocation' };

const PID_CONFIG = {
  id: 'pid',
  config: { format: 'dc+sd-jwt' },
  vct: PID_VCT,
  statusManagement: true,
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true },
    { path: ['family_name'], type: 'string', mandatory: true },
    { path: ['age_over_18'], type: 'boolean' },
  ],
};
const PID_QUERY = {
  credentials: [
    { id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: [PID_VCT] }, claims: [{ path: ['given_name'] }, { path: ['family_name'] }] },
  ],
};
const membership = (id: string, scope: string, iaeActions: unknown[]) => ({
  id,
  config: { format: 'dc+sd-jwt', scope },
  vct: `urn:example:${id}`,
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true },
    { path: ['family_name'], type: 'string', mandatory: true },
    { path: ['member_level'], type: 'string', mandatory: true },
  ],
  iaeActions,
});

interface Issued {
  credential: string;
  holder: JWK;
  sessionId: string;
}

const iaeUrl = (tenant = 'acme') => `${svc.url}/issuers/${tenant}/iae`;
const aceUrl = (tenant = 'acme') => `${svc.url}/issuers/${tenant}/authorize-challenge`;
/** The two endpoints: the current draft's authorization challenge endpoint and the earlier drafts' interactive authorization endpoint. */
type Endpoint = 'authorize-challenge' | 'iae';
/** The interaction types as the June 2026 draft spells them (authorization challenge endpoint) and as the March 2026 one did (IAE). */
const IA_TYPES = 'urn:openid:dcp:ia:openid4vp_presentation,urn:openid:dcp:ia:auth_via_web';
const IAE_URN_TYPES = 'urn:openid:dcp:iae:openid4vp_presentation,urn:openid:dcp:iae:redirect_to_web';
/** The key binding audience each endpoint's draft asks for: ia: + the endpoint's origin, iae: + the endpoint's URL. */
const audienceOf = (endpoint: Endpoint) => (endpoint === 'iae' ? `iae:${iaeUrl()}` : `ia:${new URL(svc.url).origin}`);
beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  other = (await svc.tenant('other')).token;
  integrator = (await generateKeyPair('ES256', { extractable: true })) as CryptoKeyPair;
  integratorJwk = await exportJWK(integrator.publicKey);
  kycJwk = await exportJWK((await generateKeyPair('ES256', { extractable: true })).publicKey);
  for (const token of [acme, other]) {
    const statusConfig = await svc.call('PUT', '/api/status-list-config', { token, body: { bits: 2, immediateUpdate: true, ttl: 60 } });
    expect(statusConfig.status, statusConfig.text).toBe(200);
    const created = await svc.raw('POST', '/api/issuer/credentials', { token, body: PID_CONFIG });
    expect(created.status, created.text).toBe(201);
  }
  const trust = await svc.raw('POST', '/api/trust-list', {
    token: acme,
    body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }, STATUS_SIGNER] },
  });
  expect(trust.status, trust.text).toBe(201);
  const check = await svc.call('POST', '/api/verifier/config', { token: acme, body: { id: 'pid-check', dcql_query: PID_QUERY } });
  expect(check.status, check.text).toBe(201);
  const actions = [
    { type: 'openid4vp-presentation', presentationConfigId: 'pid-check', label: 'PID' },
    { type: 'redirect-to-web', url: INTEGRATOR_PAGE, callbackKey: integratorJwk, label: 'membership form' },
  ];
  for (const body of [
    membership('membership', 'membership_scope', actions),
    // Web step first, and a presentation answered in the clear (iae_post) rather than encrypted.
    membership('web-first', 'web_first_scope', [actions[1], { ...actions[0], responseMode: 'iae_post' }]),
    // One step each, for the attack of a flow that switches requests: the wallet completes the
    // integrator's web step or the PID presentation, never the KYC page (whose key it does not have).
    membership('web-only', 'web_only_scope', [actions[1]]),
    membership('pid-only', 'pid_only_scope', [actions[0]]),
    membership('kyc', 'kyc_scope', [
      { type: 'redirect-to-web', url: 'https://kyc.example/check', callbackKey: kycJwk, label: 'identity check' },
    ]),
  ]) {
    const created = await svc.raw('POST', '/api/issuer/credentials', { token: acme, body });
    expect(created.status, created.text).toBe(201);
  }
  rootCertificate = (await svc.raw('GET', '/api/key-chain/default-attestation', { token: acme })).body.rootCertificate;
  pid = await issuePid(acme);
});
afterAll(() => svc.stop());

/** A PID from `token`'s tenant, by the pre-authorized flow, to a fresh holder key. */
async function issuePid(token: string): Promise<Issued> {
  const offer = await svc.call('POST', '/api/issuer/offer', {
    token,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: ['pid'],
      credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true } } },
    },
  });
  expect(offer.status, offer.text).toBe(201);
  const key = await holderKey();
  const { response } = await receiveCredentials(offer.body.uri, { keys: [key] });
  const credential = (response.credentialResponse.credentials as { credential: string }[])[0]?.credential as string;
  return { credential, holder: key.privateJwk, sessionId: offer.body.session };
}

/** An authorization code offer of `id`, without claims: they come from the interactive steps. */
async function offer(id = 'membership') {
  const reply = await svc.raw('POST', '/api/issuer/offer', {
    token: acme,
    body: { response_type: 'uri', flow: 'authorization_code', credentialConfigurationIds: [id] },
  });
  expect(reply.status, reply.text).toBe(201);
  return {
    session: reply.body.session as string,
    issuerState: reply.body.credentialOffer.grants.authorization_code.issuer_state as string,
  };
}

const iae = (form: Record<string, string>, options: { tenant?: string; headers?: Record<string, string>; endpoint?: Endpoint } = {}) =>
  svc.raw('POST', `/issuers/${options.tenant ?? 'acme'}/${options.endpoint ?? 'iae'}`, {
    form,
    ...(options.headers && { headers: options.headers }),
  });
/** A request to the authorization challenge endpoint. */
const ace = (form: Record<string, string>) => iae(form, { endpoint: 'authorize-challenge' });

/** The first request: the authorization request as PAR takes it, and the interaction types. */
async function start(
  options: {
    id?: string;
    scope?: string;
    types?: string;
    headers?: Record<string, string>;
    issuerState?: string;
    redirectUri?: string;
    endpoint?: Endpoint;
  } = {},
) {
  const created = options.issuerState ? { session: '', issuerState: options.issuerState } : await offer(options.id);
  const { verifier, challenge } = pkce();
  const reply = await iae(
    {
      client_id: CLIENT_ID,
      response_type: 'code',
      redirect_uri: options.redirectUri ?? WALLET_REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'wallet-state',
      issuer_state: created.issuerState,
      scope: options.scope ?? 'membership_scope',
      interaction_types_supported: options.types ?? 'openid4vp_presentation,redirect_to_web',
    },
    { ...(options.headers && { headers: options.headers }), ...(options.endpoint && { endpoint: options.endpoint }) },
  );
  return { ...created, verifier, reply };
}

/**
 * What a wallet checks of the embedded OpenID4VP request: the x5c signature, the x509_hash client_id,
 * the endpoint's response mode (iae_post at the IAE, ia_post at the authorization challenge endpoint),
 * the expected origin, and expected_url where the IAE drafts had it.
 */
async function openRequest(openid4vpRequest: { request: string }, endpoint: Endpoint = 'iae'): Promise<ResolvedRequest> {
  const request = await verifyIaeRequest(openid4vpRequest, endpoint === 'iae' ? iaeUrl() : aceUrl());
  const { payload } = request;
  expect(payload).toMatchObject({ response_type: 'vp_token', expected_origins: [new URL(svc.url).origin] });
  if (endpoint === 'iae') {
    expect(payload.expected_url).toBe(iaeUrl());
    expect(['iae_post.jwt', 'iae_post']).toContain(payload.response_mode);
  } else {
    expect(payload.expected_url).toBeUndefined();
    expect(['ia_post.jwt', 'ia_post']).toContain(payload.response_mode);
  }
  if (payload.response_mode.endsWith('.jwt')) expect(payload.client_metadata.jwks.keys[0]).toMatchObject({ kty: 'EC', use: 'enc' });
  expect(payload.response_uri).toBeUndefined();
  expect(payload.dcql_query).toEqual(PID_QUERY);
  return request;
}

/** The wallet's follow-up with its presentation of `issued` (KB-JWT aud the endpoint's, unless told otherwise). */
async function present(
  authSession: string,
  request: ResolvedRequest,
  issued: Issued = pid,
  kb: { aud?: string; nonce?: string } = {},
  headers?: Record<string, string>,
  options: { plain?: boolean; endpoint?: Endpoint } = {},
) {
  const endpoint = options.endpoint ?? 'iae';
  const presentation = await presentSdJwt(issued.credential, issued.holder, request, ['given_name', 'family_name'], {
    aud: audienceOf(endpoint),
    ...kb,
  });
  const response = { vp_token: { pid: [presentation] } };
  const encrypted = request.responseMode.endsWith('.jwt') && !options.plain;
  const openid4vpResponse = encrypted ? { response: await encryptIaeResponse(request, response) } : response;
  return iae({ auth_session: authSession, openid4vp_response: JSON.stringify(openid4vpResponse) }, { headers, endpoint });
}

/** Start, present the PID: the answer to the presentation (the web step, if it was accepted). */
async function throughPresentation(issued: Issued = pid, kb: { aud?: string; nonce?: string } = {}) {
  const started = await start();
  expect(started.reply.status, started.reply.text).toBe(200);
  const request = await openRequest(started.reply.body.openid4vp_request);
  const answer = await present(started.reply.body.auth_session, request, issued, kb);
  return { ...started, request, answer };
}

/** The wallet opens the authorization endpoint with the web step's request_uri; the browser is sent to the integrator's page. */
const openWebStep = (requestUri: string) => openSharedWebStep(`${svc.url}/issuers/acme/authorize`, CLIENT_ID, requestUri);

const pkceChallenge = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** The integrator's signed result for the page it was opened with. */
const signResult = (page: URL, payload: Record<string, unknown> = {}, options: { key?: CryptoKey; typ?: string } = {}) =>
  signWebResult(page, options.key ?? integrator.privateKey, payload, options.typ);

/** The integrator's page posts the result (the browser follows the 303 back to the wallet). */
const postResult = (page: URL, result: string | undefined) => postWebResult(page, result, `${svc.url}/issuers/acme/iae/web-result`);

/** The code at the token endpoint, then the credential with a proof of a fresh holder key. */
async function redeem(code: string, verifier: string, configurationId = 'membership') {
  const token = await svc.raw('POST', '/issuers/acme/token', {
    form: { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: WALLET_REDIRECT_URI, client_id: CLIENT_ID },
  });
  expect(token.status, token.text).toBe(200);
  const key = await holderKey();
  const client = walletClient([key]);
  const issuerMetadata = await client.resolveIssuerMetadata(`${svc.url}/issuers/acme`);
  const { c_nonce } = await client.requestNonce({ issuerMetadata });
  const proof = await client.createCredentialRequestJwtProof({
    issuerMetadata,
    signer: key.signer,
    nonce: c_nonce,
    credentialConfigurationId: configurationId,
  });
  const response = await client.retrieveCredentials({
    issuerMetadata,
    accessToken: token.body.access_token,
    credentialConfigurationId: configurationId,
    proofs: { jwt: [proof.jwt] },
  });
  return (response.credentialResponse.credentials as { credential: string }[])[0]?.credential as string;
}

const logEntriesOf = async (session: string) =>
  (await svc.call('GET', `/api/session/${session}/logs`, { token: acme })).body as { message: string; details?: unknown }[];
const logsOf = async (session: string) => (await logEntriesOf(session)).map((l) => l.message);

describe('interactive authorization: metadata and configuration', () => {
  it('advertises the interactive authorization endpoint in the authorization server metadata', async () => {
    const as = (await svc.raw('GET', '/.well-known/oauth-authorization-server/issuers/acme')).body;
    expect(as.interactive_authorization_endpoint).toBe(iaeUrl());
  });

  it('advertises both endpoints: the current draft’s authorization challenge endpoint and the earlier drafts’ one', async () => {
    const as = (await svc.call('GET', '/.well-known/oauth-authorization-server/issuers/acme')).body;
    expect(as).toMatchObject({ authorization_challenge_endpoint: aceUrl(), interactive_authorization_endpoint: iaeUrl() });
  });

  it('while the built-in authorization server is disabled, neither endpoint is advertised nor starts a flow', async () => {
    expect((await svc.raw('PUT', '/api/issuer/config', { token: other, body: { builtinAuthorizationServerEnabled: false } })).status).toBe(
      200,
    );
    try {
      const as = (await svc.call('GET', '/.well-known/oauth-authorization-server/issuers/other')).body;
      expect(as).not.toHaveProperty('authorization_challenge_endpoint');
      expect(as).not.toHaveProperty('interactive_authorization_endpoint');
      const refused = await iae(
        { interaction_types_supported: IA_TYPES, client_id: CLIENT_ID },
        { tenant: 'other', endpoint: 'authorize-challenge' },
      );
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ error: 'invalid_request', error_description: expect.stringMatching(/disabled/) });
    } finally {
      expect((await svc.raw('PUT', '/api/issuer/config', { token: other, body: {} })).status).toBe(200);
    }
  });

  it('types iaeActions: a presentation names a presentation configuration, a web step a URL and a public callback key', async () => {
    const save = (iaeActions: unknown[]) =>
      svc.raw('POST', '/api/issuer/credentials', {
        token: acme,
        body: membership(`bad-${randomBytes(4).toString('hex')}`, 'x', iaeActions),
      });
    for (const action of [
      { type: 'redirect-to-web', url: INTEGRATOR_PAGE },
      { type: 'redirect-to-web', url: INTEGRATOR_PAGE, callbackKey: { ...integratorJwk, d: 'secret' } },
      { type: 'redirect-to-web', url: 'javascript:alert(1)', callbackKey: integratorJwk },
      { type: 'openid4vp-presentation' },
      { type: 'openid4vp-presentation', dcql_query: PID_QUERY },
      { type: 'phone-call' },
    ]) {
      const reply = await save([action]);
      expect(reply.status, JSON.stringify(action)).toBe(400);
      expect(reply.body.errors[0].field).toMatch(/^body\.iaeActions\.0/);
    }
  });
});

describe('interactive authorization: end to end', () => {
  it('runs presentation then web step, and the credential carries what both produced', async () => {
    const started = await start();
    expect(started.reply.status, started.reply.text).toBe(200);
    expect(started.reply.headers.get('cache-control')).toBe('no-store');
    expect(started.reply.body).toMatchObject({
      status: 'require_interaction',
      type: 'openid4vp_presentation',
      auth_session: expect.any(String),
      openid4vp_request: { request: expect.any(String) },
    });
    const request = await openRequest(started.reply.body.openid4vp_request);
    expect(request.responseMode).toBe('iae_post.jwt');

    const web = await present(started.reply.body.auth_session, request);
    expect(web.status, web.text).toBe(200);
    expect(web.body).toMatchObject({
      status: 'require_interaction',
      type: 'redirect_to_web',
      auth_session: expect.any(String),
      request_uri: expect.stringMatching(/^urn:ietf:params:oauth:request_uri:/),
      expires_in: expect.any(Number),
    });
    expect(web.body.auth_session).not.toBe(started.reply.body.auth_session);

    const page = await openWebStep(web.body.request_uri);
    expect(page.origin + page.pathname).toBe(INTEGRATOR_PAGE);
    expect(page.searchParams.get('callback_uri')).toBe(`${svc.url}/issuers/acme/iae/web-result`);
    expect(page.searchParams.get('session')).toBe(started.session);

    const back = await postResult(page, await signResult(page));
    expect(back.status, JSON.stringify(back.body)).toBe(303);
    expect(back.location?.origin + (back.location?.pathname ?? '')).toBe(WALLET_REDIRECT_URI);
    expect(back.location?.searchParams.get('state')).toBe('wallet-state');
    expect(back.location?.searchParams.get('iss')).toBe(`${svc.url}/issuers/acme`);
    const code = back.location?.searchParams.get('code') as string;
    expect(code).toBeTruthy();

    const credential = await redeem(code, started.verifier);
    const { claims } = await verifySdJwtIndependently(credential, rootCertificate);
    expect(claims).toMatchObject({ given_name: 'Erika', family_name: 'Mustermann', member_level: 'gold' });
    expect(claims.age_over_18).toBeUndefined();

    const logs = await logsOf(started.session);
    for (const message of [
      'interactive authorization started',
      'interactive authorization: presentation requested',
      'interactive authorization: presentation verified',
      'interactive authorization: web step offered',
      'interactive authorization: web step opened',
      'interactive authorization: web result verified',
      'interactive authorization completed',
      'authorization code issued',
      'authorization code redeemed',
    ]) {
      expect(logs).toContain(message);
    }
    const stored = await svc.running.services.sessions.get('acme', started.session);
    expect((stored.private as any).authorizationResult.steps.map((s: { type: string }) => s.type)).toEqual([
      'openid4vp-presentation',
      'redirect-to-web',
    ]);
    const raw = await svc.db.selectFrom('sessions').select('private_data').where('id', '=', started.session).executeTakeFirstOrThrow();
    expect(raw.private_data).not.toContain('Mustermann');
  });

  it('web step first: the browser returns with an auth_session, the wallet continues with its code_verifier', async () => {
    const started = await start({ id: 'web-first', scope: 'web_first_scope' });
    expect(started.reply.body).toMatchObject({ status: 'require_interaction', type: 'redirect_to_web' });
    const early = await iae({ auth_session: started.reply.body.auth_session, code_verifier: started.verifier });
    expect(early.status).toBe(400);
    expect(early.body.error).toBe('invalid_request');

    const page = await openWebStep(started.reply.body.request_uri);
    const back = await postResult(page, await signResult(page));
    expect(back.status, JSON.stringify(back.body)).toBe(303);
    expect(back.location?.searchParams.get('code')).toBeNull();
    const authSession = back.location?.searchParams.get('auth_session') as string;
    expect(authSession).toBeTruthy();

    const wrongVerifier = await iae({ auth_session: authSession, code_verifier: pkce().verifier });
    expect(wrongVerifier.status).toBe(400);
    expect(wrongVerifier.body.error_description).toMatch(/code_verifier/);
    const next = await iae({ auth_session: authSession, code_verifier: started.verifier });
    expect(next.status, next.text).toBe(200);
    expect(next.body).toMatchObject({ status: 'require_interaction', type: 'openid4vp_presentation' });

    const request = await openRequest(next.body.openid4vp_request);
    expect(request.responseMode).toBe('iae_post');
    expect(request.payload.client_metadata.jwks).toBeUndefined();
    const done = await present(next.body.auth_session, request);
    expect(done.status, done.text).toBe(200);
    expect(done.body).toMatchObject({ status: 'ok', code: expect.any(String) });
    const credential = await redeem(done.body.code, started.verifier, 'web-first');
    expect((await verifySdJwtIndependently(credential, rootCertificate)).claims).toMatchObject({
      given_name: 'Erika',
      member_level: 'gold',
    });
  });

  it('accepts the request_uri of a request pushed before, once, from the client that pushed it', async () => {
    const push = async () => {
      const created = await offer();
      const pushed = await svc.raw('POST', '/issuers/acme/par', {
        form: {
          client_id: CLIENT_ID,
          response_type: 'code',
          redirect_uri: WALLET_REDIRECT_URI,
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
          issuer_state: created.issuerState,
          scope: 'membership_scope',
        },
      });
      expect(pushed.status, pushed.text).toBe(201);
      return { request_uri: pushed.body.request_uri as string, interaction_types_supported: 'openid4vp_presentation,redirect_to_web' };
    };
    const form = await push();
    const reply = await iae({ ...form, client_id: CLIENT_ID });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ status: 'require_interaction', type: 'openid4vp_presentation' });
    const replayed = await iae({ ...form, client_id: CLIENT_ID });
    expect(replayed.status).toBe(400);
    expect(replayed.body.error).toBe('invalid_request_uri');
    const otherClient = await iae({ ...(await push()), client_id: 'someone-else' });
    expect(otherClient.status).toBe(400);
    expect(otherClient.body).toMatchObject({ error: 'invalid_request', error_description: expect.stringMatching(/client_id/) });
  });
});

describe('interactive authorization: refusals', () => {
  it('a first request takes redirect URIs as PAR does: no OS handler schemes, no http off loopback', async () => {
    for (const bad of ['search-ms:query=x', 'view-source:https://wallet.example/cb', 'http://example.com/cb']) {
      const started = await start({ redirectUri: bad });
      expect(started.reply.status, bad).toBe(400);
      expect(started.reply.body, bad).toMatchObject({
        error: 'invalid_request',
        error_description: expect.stringMatching(/^redirect_uri /),
      });
    }
    const native = await start({ redirectUri: 'com.example.wallet:/cb' });
    expect(native.reply.status, native.reply.text).toBe(200);
  });

  it('missing_interaction_type when the wallet does not support a step the configuration needs', async () => {
    const started = await start({ types: 'openid4vp_presentation' });
    expect(started.reply.status).toBe(400);
    expect(started.reply.body.error).toBe('missing_interaction_type');
    expect(started.reply.body.error_description).toMatch(/redirect_to_web/);
  });

  it('the plain authorization endpoint refuses a configuration with iaeActions, pointing at the interactive authorization endpoint', async () => {
    const created = await offer();
    const { challenge } = pkce();
    const pushed = await svc.raw('POST', '/issuers/acme/par', {
      form: {
        client_id: CLIENT_ID,
        response_type: 'code',
        redirect_uri: WALLET_REDIRECT_URI,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        issuer_state: created.issuerState,
        scope: 'membership_scope',
      },
    });
    expect(pushed.status, pushed.text).toBe(201);
    const query = new URLSearchParams({ client_id: CLIENT_ID, request_uri: pushed.body.request_uri });
    const response = await fetch(`${svc.url}/issuers/acme/authorize?${query}`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location') as string);
    expect(location.searchParams.get('code')).toBeNull();
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toContain(iaeUrl());
  });

  it('refuses a presentation of a credential whose issuer the tenant does not trust, and ends the flow', async () => {
    const untrusted = await issuePid(other);
    const { answer, session, reply } = await throughPresentation(untrusted);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('access_denied');
    expect(answer.body.error_description).toMatch(/untrusted issuer/);
    const again = await iae({ auth_session: reply.body.auth_session, openid4vp_response: '{"vp_token":{}}' });
    expect(again.body.error_description).toMatch(/auth_session is unknown, expired or already used/);
    expect(await logsOf(session)).toContain('interactive authorization stopped');
  });

  it("a presentation step whose presentation configuration is gone ends the flow as the issuer's fault, naming it only in the session log", async () => {
    const check = await svc.call('POST', '/api/verifier/config', { token: acme, body: { id: 'gone-check', dcql_query: PID_QUERY } });
    expect(check.status, check.text).toBe(201);
    const actions = [{ type: 'openid4vp-presentation', presentationConfigId: 'gone-check', label: 'PID' }];
    const created = await svc.raw('POST', '/api/issuer/credentials', { token: acme, body: membership('gone', 'gone_scope', actions) });
    expect(created.status, created.text).toBe(201);
    const deleted = await svc.call('DELETE', '/api/verifier/config/gone-check', { token: acme });
    expect(deleted.status, deleted.text).toBe(204);

    const started = await start({ id: 'gone', scope: 'gone_scope' });
    expect(started.reply.status).toBe(500);
    expect(started.reply.body.error).toBe('server_error');
    expect(started.reply.body.error_description).not.toContain('gone-check');
    const stopped = (await logEntriesOf(started.session)).find((entry) => entry.message === 'interactive authorization stopped');
    expect(JSON.stringify(stopped?.details)).toContain('gone-check');
  });

  it('a presentation step asking for a format that cannot be embedded (mdoc) ends the flow, naming the formats that can in the session log', async () => {
    const mdocQuery = {
      credentials: [
        {
          id: 'mdl',
          format: 'mso_mdoc',
          meta: { doctype_value: 'org.iso.18013.5.1.mDL' },
          claims: [{ path: ['org.iso.18013.5.1', 'given_name'] }],
        },
      ],
    };
    const check = await svc.call('POST', '/api/verifier/config', { token: acme, body: { id: 'mdl-check', dcql_query: mdocQuery } });
    expect(check.status, check.text).toBe(201);
    const actions = [{ type: 'openid4vp-presentation', presentationConfigId: 'mdl-check', label: 'mDL' }];
    const created = await svc.raw('POST', '/api/issuer/credentials', {
      token: acme,
      body: membership('mdl-gate', 'mdl_gate_scope', actions),
    });
    expect(created.status, created.text).toBe(201);

    const started = await start({ id: 'mdl-gate', scope: 'mdl_gate_scope' });
    expect(started.reply.status).toBe(500);
    expect(started.reply.body.error).toBe('server_error');
    const stopped = (await logEntriesOf(started.session)).find((entry) => entry.message === 'interactive authorization stopped');
    expect(JSON.stringify(stopped?.details)).toContain(
      'credential format mso_mdoc cannot be presented inside interactive authorization yet (dc+sd-jwt only)',
    );
  });

  it('refuses a presentation of a revoked credential (status list)', async () => {
    const revoked = await issuePid(acme);
    const changed = await svc.call('POST', '/api/session/revoke', { token: acme, body: { sessionId: revoked.sessionId, status: 1 } });
    expect(changed.status, changed.text).toBe(200);
    // Earlier presentations cached the status list token for its ttl: the verifier sees the change once it is cleared.
    expect((await svc.call('DELETE', '/api/cache/status-list', { token: acme })).status).toBe(204);
    const { answer } = await throughPresentation(revoked);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: 'access_denied', error_description: expect.stringMatching(/status: revoked/) });
  });

  it('refuses a key binding to another audience or nonce', async () => {
    for (const kb of [{ aud: `iae:${iaeUrl('other')}` }, { aud: 'x509_hash:whatever' }, { nonce: 'another-nonce' }]) {
      const { answer } = await throughPresentation(pid, kb);
      expect(answer.status, JSON.stringify(kb)).toBe(400);
      expect(answer.body.error).toBe('access_denied');
      expect(answer.body.error_description).toMatch(kb.nonce ? /nonce/i : /aud/);
    }
  });

  it("accepts a key binding to iae: + the endpoint's origin (the drafts since January 2026), and to iae: + its URL", async () => {
    for (const aud of [`iae:${new URL(svc.url).origin}`, `iae:${iaeUrl()}`]) {
      const { answer } = await throughPresentation(pid, { aud });
      expect(answer.status, `${aud}: ${answer.text}`).toBe(200);
      expect(answer.body).toMatchObject({ status: 'require_interaction' });
    }
  });

  it('takes an auth_session once, and only at the issuer that gave it', async () => {
    const started = await start();
    const request = await openRequest(started.reply.body.openid4vp_request);
    const elsewhere = await iae(
      { auth_session: started.reply.body.auth_session, openid4vp_response: '{"vp_token":{}}' },
      { tenant: 'other' },
    );
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.error_description).toMatch(/auth_session is unknown/);
    const first = await present(started.reply.body.auth_session, request);
    expect(first.status, first.text).toBe(200);
    const replayed = await present(started.reply.body.auth_session, request);
    expect(replayed.status).toBe(400);
    expect(replayed.body).toMatchObject({ error: 'invalid_request', error_description: expect.stringMatching(/already used/) });
  });

  it('refuses a response in the clear where the request asked for an encrypted one', async () => {
    const started = await start();
    const request = await openRequest(started.reply.body.openid4vp_request);
    expect(request.responseMode).toBe('iae_post.jwt');
    const plain = await present(started.reply.body.auth_session, request, pid, {}, undefined, { plain: true });
    expect(plain.status).toBe(400);
    expect(plain.body).toMatchObject({ error: 'access_denied', error_description: expect.stringMatching(/must be encrypted/) });
  });

  it('an auth_session expires', async () => {
    const started = await start();
    const request = await openRequest(started.reply.body.openid4vp_request);
    await svc.db
      .updateTable('session_handles')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('session_id', '=', started.session)
      .where('purpose', '=', 'iae_auth_session')
      .execute();
    const late = await present(started.reply.body.auth_session, request);
    expect(late.status).toBe(400);
    expect(late.body.error_description).toMatch(/auth_session is unknown, expired or already used/);
  });

  it('refuses a follow-up by another client', async () => {
    const started = await start();
    const reply = await iae({ auth_session: started.reply.body.auth_session, client_id: 'someone-else', openid4vp_response: '{}' });
    expect(reply.status).toBe(400);
    expect(reply.body.error_description).toMatch(/client/);
  });

  it('a wallet that declines the presentation ends the flow with access_denied', async () => {
    const started = await start();
    const reply = await iae({
      auth_session: started.reply.body.auth_session,
      openid4vp_response: JSON.stringify({ error: 'access_denied', error_description: 'the user declined' }),
    });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ error: 'access_denied', error_description: expect.stringMatching(/user declined/) });
  });

  it('a request pushed for the same offer meanwhile ends the flow under way', async () => {
    const started = await start();
    const request = await openRequest(started.reply.body.openid4vp_request);
    const pushed = await svc.call('POST', '/issuers/acme/par', {
      form: {
        client_id: CLIENT_ID,
        response_type: 'code',
        redirect_uri: WALLET_REDIRECT_URI,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        issuer_state: started.issuerState,
        scope: 'membership_scope',
      },
    });
    expect(pushed.status, pushed.text).toBe(201);
    const stale = await present(started.reply.body.auth_session, request);
    expect(stale.status).toBe(400);
    expect(stale.body.error_description).toMatch(/auth_session is unknown/);
  });

  it('wallet attestation: required when the issuer says so, and the flow stays with the attested wallet instance', async () => {
    const provider = await walletProvider('IAE Wallets');
    const [attested, another] = await Promise.all([walletInstance(), walletInstance()]);
    const issuer = `${svc.url}/issuers/acme`;
    const headersOf = (instance: typeof attested) => attestationHeaders(provider, instance, CLIENT_ID, issuer);
    const configured = await svc.raw('PUT', '/api/issuer/config', {
      token: acme,
      body: { walletProviders: [{ name: provider.name, certificates: [provider.caPem] }], walletAttestationRequired: true },
    });
    expect(configured.status, configured.text).toBe(200);
    try {
      const { issuerState } = await offer();
      const bare = await start({ issuerState });
      expect(bare.reply.status).toBe(401);
      expect(bare.reply.body.error).toBe('invalid_client');
      const started = await start({ issuerState, headers: await headersOf(attested) });
      expect(started.reply.status, started.reply.text).toBe(200);
      const request = await openRequest(started.reply.body.openid4vp_request);
      const authSession = started.reply.body.auth_session;
      const unattested = await present(authSession, request);
      expect(unattested.status).toBe(401);
      expect(unattested.body.error).toBe('invalid_client');
      const otherInstance = await present(authSession, request, pid, {}, await headersOf(another));
      expect(otherInstance.status).toBe(401);
      expect(otherInstance.body).toMatchObject({
        error: 'invalid_client',
        error_description: expect.stringMatching(/another wallet instance/),
      });
      const accepted = await present(authSession, request, pid, {}, await headersOf(attested));
      expect(accepted.status, accepted.text).toBe(200);
      expect(accepted.body).toMatchObject({ status: 'require_interaction', type: 'redirect_to_web' });
    } finally {
      expect((await svc.raw('PUT', '/api/issuer/config', { token: acme, body: {} })).status).toBe(200);
    }
  });

  describe('the web step completes only with the integrator’s signed, fresh, single-use result', () => {
    async function webPage() {
      const { answer, verifier } = await throughPresentation();
      expect(answer.status, answer.text).toBe(200);
      return { page: await openWebStep(answer.body.request_uri), verifier, requestUri: answer.body.request_uri as string };
    }

    it('refuses an unsigned post, another key, another typ, another audience, a stale result; then takes the right one once', async () => {
      const { page, verifier } = await webPage();
      const stranger = (await generateKeyPair('ES256')).privateKey;
      const now = Math.floor(Date.now() / 1000);
      const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'iae-web-result+jwt' })).toString('base64url')}.${Buffer.from(
        JSON.stringify({ aud: page.searchParams.get('callback_uri'), web_session: page.searchParams.get('web_session') }),
      ).toString('base64url')}.`;
      for (const [result, reason] of [
        [undefined, /result is required/],
        ['member_level=gold', /compact JWS/],
        [unsigned, /alg/],
        [await signResult(page, {}, { key: stranger }), /signature/],
        [await signResult(page, {}, { typ: 'JWT' }), /typ/],
        [await signResult(page, { aud: `${svc.url}/issuers/other/iae/web-result` }), /aud/],
        [await signResult(page, { iat: now - 3600, exp: now - 3000 }), /iat is not recent|expired/],
        [await signResult(page, { exp: now + 3600 }), /at most/],
        [await signResult(page, { web_session: 'guessed' }), /web_session is unknown/],
        // Too large: refused without spending the web_session (the right result below still ends the step).
        [await signResult(page, { claims: { note: 'x'.repeat(40_000) } }), /claims exceed/],
      ] as const) {
        const refused = await postResult(page, result);
        expect(refused.status, String(result)).toBe(400);
        expect(refused.body.error).toBe('invalid_request');
        expect(refused.body.error_description).toMatch(reason);
      }
      const result = await signResult(page);
      const accepted = await postResult(page, result);
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(303);
      const replayed = await postResult(page, result);
      expect(replayed.status).toBe(400);
      expect(replayed.body.error_description).toMatch(/web_session is unknown, expired or already used/);
      expect(await redeem(accepted.location?.searchParams.get('code') as string, verifier)).toBeTruthy();
    });

    it('the web step request_uri works once', async () => {
      const { requestUri } = await webPage();
      const query = new URLSearchParams({ client_id: CLIENT_ID, request_uri: requestUri });
      const again = await fetch(`${svc.url}/issuers/acme/authorize?${query}`, { redirect: 'manual' });
      expect(again.status).toBe(400);
      expect((await again.json()).error).toBe('invalid_request_uri');
    });

    it('an error result sends the user back to the wallet with access_denied and ends the flow', async () => {
      const { page } = await webPage();
      const back = await postResult(
        page,
        await signResult(page, { claims: undefined, error: 'cancelled', error_description: 'user left' }),
      );
      expect(back.status).toBe(303);
      expect(back.location?.searchParams.get('error')).toBe('access_denied');
      expect(back.location?.searchParams.get('code')).toBeNull();
      expect(back.location?.searchParams.get('state')).toBe('wallet-state');
    });
  });
});

describe('interactive authorization: a flow is bound to the request it started for', () => {
  /** An offer of an easy configuration and the KYC one, and a first request for the easy one alone. */
  async function startEasyThenSwitch(easy: 'web-only' | 'pid-only') {
    const created = await svc.raw('POST', '/api/issuer/offer', {
      token: acme,
      body: { response_type: 'uri', flow: 'authorization_code', credentialConfigurationIds: [easy, 'kyc'] },
    });
    expect(created.status, created.text).toBe(201);
    const issuerState = created.body.credentialOffer.grants.authorization_code.issuer_state as string;
    const started = await start({ issuerState, scope: easy === 'web-only' ? 'web_only_scope' : 'pid_only_scope' });
    expect(started.reply.status, started.reply.text).toBe(200);
    /** The attacker's second push: the same client and PKCE challenge, now for the KYC configuration. */
    const pushForKyc = () =>
      svc.raw('POST', '/issuers/acme/par', {
        form: {
          client_id: CLIENT_ID,
          response_type: 'code',
          redirect_uri: WALLET_REDIRECT_URI,
          code_challenge: pkceChallenge(started.verifier),
          code_challenge_method: 'S256',
          issuer_state: issuerState,
          authorization_details: JSON.stringify([{ type: 'openid_credential', credential_configuration_id: 'kyc' }]),
        },
      });
    return { ...started, session: created.body.session as string, pushForKyc };
  }

  it('a web step completed after the same client pushed a request for another configuration issues no code', async () => {
    const flow = await startEasyThenSwitch('web-only');
    const page = await openWebStep(flow.reply.body.request_uri);
    const pushed = await flow.pushForKyc();
    expect(pushed.status, pushed.text).toBe(201);

    const back = await postResult(page, await signResult(page));
    expect(back.status).toBe(400);
    expect(back.body.error_description).toMatch(/web_session is unknown, expired or already used/);
    const logs = await logsOf(flow.session);
    expect(logs).toContain('interactive authorization ended: a new authorization request was pushed');
    expect(logs).not.toContain('authorization code issued');
    const live = await svc.db
      .selectFrom('session_handles')
      .select('purpose')
      .where('session_id', '=', flow.session)
      .where('purpose', 'not like', '%:spent')
      .execute();
    // No auth_session, web_session or code of the ended flow is left: only the offer's and the new request_uri.
    expect(live.map((h) => h.purpose).sort()).toEqual(['credential_offer', 'issuer_state', 'request_uri']);

    // The KYC request itself goes nowhere without its own step.
    const authorize = await fetch(
      `${svc.url}/issuers/acme/authorize?${new URLSearchParams({ client_id: CLIENT_ID, request_uri: pushed.body.request_uri })}`,
      { redirect: 'manual' },
    );
    expect(new URL(authorize.headers.get('location') as string).searchParams.get('error')).toBe('invalid_request');
  });

  it('a presentation step answered after such a push issues no code either', async () => {
    const flow = await startEasyThenSwitch('pid-only');
    const request = await openRequest(flow.reply.body.openid4vp_request);
    expect((await flow.pushForKyc()).status).toBe(201);
    const answer = await present(flow.reply.body.auth_session, request);
    expect(answer.status).toBe(400);
    expect(answer.body.error_description).toMatch(/auth_session is unknown/);
    expect(await logsOf(flow.session)).not.toContain('authorization code issued');
  });

  it('a flow left alone still ends in a code for exactly what it asked', async () => {
    const flow = await startEasyThenSwitch('web-only');
    const page = await openWebStep(flow.reply.body.request_uri);
    const back = await postResult(page, await signResult(page));
    expect(back.status, JSON.stringify(back.body)).toBe(303);
    const code = back.location?.searchParams.get('code') as string;
    const token = await redeemCode(svc, 'acme', code, flow.verifier, CLIENT_ID);
    expect(token.status, token.text).toBe(200);
    const stored = await svc.running.services.sessions.get('acme', flow.session);
    expect(stored.public.authorized).toEqual(['web-only']);
  });
});

describe('interactive authorization at the authorization challenge endpoint (OpenID4VCI 1.1 draft of June 2026)', () => {
  it('runs presentation then web step in the draft’s shapes and spellings, and the credential carries what both produced', async () => {
    const started = await start({ endpoint: 'authorize-challenge', types: IA_TYPES });
    expect(started.reply.status, started.reply.text).toBe(401);
    expect(started.reply.headers.get('cache-control')).toBe('no-store');
    expect(started.reply.body).toEqual({
      error: 'insufficient_authorization',
      interaction_type_required: 'urn:openid:dcp:ia:openid4vp_presentation',
      auth_session: expect.any(String),
      openid4vp_request: { request: expect.any(String) },
    });
    const request = await openRequest(started.reply.body.openid4vp_request, 'authorize-challenge');
    expect(request.responseMode).toBe('ia_post.jwt');

    const web = await present(started.reply.body.auth_session, request, pid, {}, undefined, { endpoint: 'authorize-challenge' });
    expect(web.status, web.text).toBe(401);
    expect(web.body).toEqual({
      error: 'insufficient_authorization',
      interaction_type_required: 'urn:openid:dcp:ia:auth_via_web',
      auth_session: expect.any(String),
      request_uri: expect.stringMatching(/^urn:ietf:params:oauth:request_uri:/),
      expires_in: expect.any(Number),
    });
    expect(web.body.auth_session).not.toBe(started.reply.body.auth_session);

    const page = await openWebStep(web.body.request_uri);
    expect(page.origin + page.pathname).toBe(INTEGRATOR_PAGE);
    const back = await postResult(page, await signResult(page));
    expect(back.status, JSON.stringify(back.body)).toBe(303);
    expect(back.location?.searchParams.get('state')).toBe('wallet-state');
    const code = back.location?.searchParams.get('code') as string;
    expect(code).toBeTruthy();

    const credential = await redeem(code, started.verifier);
    expect((await verifySdJwtIndependently(credential, rootCertificate)).claims).toMatchObject({
      given_name: 'Erika',
      family_name: 'Mustermann',
      member_level: 'gold',
    });
    const started_ = (await logEntriesOf(started.session)).find((entry) => entry.message === 'interactive authorization started');
    expect(started_?.details).toMatchObject({ endpoint: 'authorization-challenge' });
  });

  it('web step first: the browser returns with an auth_session, the intermediate request proves PKCE, an ia_post presentation ends in authorization_code', async () => {
    const started = await start({ endpoint: 'authorize-challenge', types: IA_TYPES, id: 'web-first', scope: 'web_first_scope' });
    expect(started.reply.status, started.reply.text).toBe(401);
    expect(started.reply.body).toMatchObject({ interaction_type_required: 'urn:openid:dcp:ia:auth_via_web' });
    const page = await openWebStep(started.reply.body.request_uri);
    const back = await postResult(page, await signResult(page));
    expect(back.status, JSON.stringify(back.body)).toBe(303);
    const authSession = back.location?.searchParams.get('auth_session') as string;
    expect(authSession).toBeTruthy();

    const wrongVerifier = await ace({ auth_session: authSession, code_verifier: pkce().verifier });
    expect(wrongVerifier.status).toBe(400);
    expect(wrongVerifier.body.error_description).toMatch(/code_verifier/);
    const next = await ace({ auth_session: authSession, code_verifier: started.verifier });
    expect(next.status, next.text).toBe(401);
    expect(next.body).toMatchObject({
      error: 'insufficient_authorization',
      interaction_type_required: 'urn:openid:dcp:ia:openid4vp_presentation',
    });
    const request = await openRequest(next.body.openid4vp_request, 'authorize-challenge');
    expect(request.responseMode).toBe('ia_post');
    const done = await present(next.body.auth_session, request, pid, {}, undefined, { endpoint: 'authorize-challenge' });
    expect(done.status, done.text).toBe(200);
    expect(done.body).toEqual({ authorization_code: expect.any(String) });
    const credential = await redeem(done.body.authorization_code, started.verifier, 'web-first');
    expect((await verifySdJwtIndependently(credential, rootCertificate)).claims).toMatchObject({ member_level: 'gold' });
  });

  it('takes only the current draft’s type names, and the interactive authorization endpoint only the earlier ones', async () => {
    for (const types of ['openid4vp_presentation,redirect_to_web', IAE_URN_TYPES]) {
      const started = await start({ endpoint: 'authorize-challenge', types });
      expect(started.reply.status, types).toBe(400);
      expect(started.reply.body.error).toBe('missing_interaction_type');
      expect(started.reply.body.error_description).toMatch(/urn:openid:dcp:ia:openid4vp_presentation/);
    }
    const current = await start({ types: IA_TYPES });
    expect(current.reply.status).toBe(400);
    expect(current.reply.body.error).toBe('missing_interaction_type');
    expect(current.reply.body.error_description).toMatch(/urn:openid:dcp:iae:openid4vp_presentation or openid4vp_presentation/);
  });

  it('an auth_session used, expired or unknown is invalid_session', async () => {
    const started = await start({ endpoint: 'authorize-challenge', types: IA_TYPES });
    const request = await openRequest(started.reply.body.openid4vp_request, 'authorize-challenge');
    const options = { endpoint: 'authorize-challenge' } as const;
    const first = await present(started.reply.body.auth_session, request, pid, {}, undefined, options);
    expect(first.status, first.text).toBe(401);
    const replayed = await present(started.reply.body.auth_session, request, pid, {}, undefined, options);
    expect(replayed.status).toBe(400);
    expect(replayed.body).toMatchObject({ error: 'invalid_session', error_description: expect.stringMatching(/already used/) });
    const guessed = await ace({ auth_session: 'guessed', code_verifier: pkce().verifier });
    expect(guessed.status).toBe(400);
    expect(guessed.body.error).toBe('invalid_session');
  });

  it('a request pushed for the same offer meanwhile ends the flow under way', async () => {
    const started = await start({ endpoint: 'authorize-challenge', types: IA_TYPES });
    const request = await openRequest(started.reply.body.openid4vp_request, 'authorize-challenge');
    const pushed = await svc.call('POST', '/issuers/acme/par', {
      form: {
        client_id: CLIENT_ID,
        response_type: 'code',
        redirect_uri: WALLET_REDIRECT_URI,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        issuer_state: started.issuerState,
        scope: 'membership_scope',
      },
    });
    expect(pushed.status, pushed.text).toBe(201);
    const stale = await present(started.reply.body.auth_session, request, pid, {}, undefined, { endpoint: 'authorize-challenge' });
    expect(stale.status).toBe(400);
    expect(stale.body.error).toBe('invalid_session');
    expect(await logsOf(started.session)).not.toContain('authorization code issued');
  });
});

describe('interactive authorization endpoint with the urn:openid:dcp:iae: spellings (OpenID4VCI 1.1 draft of March 2026)', () => {
  it('runs presentation then web step, answering each type as the wallet listed it', async () => {
    const started = await start({ types: IAE_URN_TYPES });
    expect(started.reply.status, started.reply.text).toBe(200);
    expect(started.reply.body).toEqual({
      status: 'require_interaction',
      type: 'urn:openid:dcp:iae:openid4vp_presentation',
      auth_session: expect.any(String),
      openid4vp_request: { request: expect.any(String) },
    });
    const request = await openRequest(started.reply.body.openid4vp_request);
    expect(request.responseMode).toBe('iae_post.jwt');
    const web = await present(started.reply.body.auth_session, request);
    expect(web.status, web.text).toBe(200);
    expect(web.body).toMatchObject({
      status: 'require_interaction',
      type: 'urn:openid:dcp:iae:redirect_to_web',
      request_uri: expect.any(String),
    });
    const page = await openWebStep(web.body.request_uri);
    const back = await postResult(page, await signResult(page));
    expect(back.status, JSON.stringify(back.body)).toBe(303);
    const credential = await redeem(back.location?.searchParams.get('code') as string, started.verifier);
    expect((await verifySdJwtIndependently(credential, rootCertificate)).claims).toMatchObject({
      given_name: 'Erika',
      member_level: 'gold',
    });
  });

  it('a wallet that lists one type in each spelling gets each in its own', async () => {
    const started = await start({ types: 'openid4vp_presentation,urn:openid:dcp:iae:redirect_to_web' });
    expect(started.reply.body).toMatchObject({ status: 'require_interaction', type: 'openid4vp_presentation' });
    const web = await present(started.reply.body.auth_session, await openRequest(started.reply.body.openid4vp_request));
    expect(web.status, web.text).toBe(200);
    expect(web.body.type).toBe('urn:openid:dcp:iae:redirect_to_web');
  });
});

describe('interactive authorization: a flow stays with the endpoint it started at', () => {
  it('refuses a presentation bound to the other endpoint’s audience, at either endpoint and in either spelling', async () => {
    const cases: { endpoint: Endpoint; types: string; aud: string }[] = [
      { endpoint: 'authorize-challenge', types: IA_TYPES, aud: audienceOf('iae') },
      // The draft's dc+sd-jwt binding is the derived origin; the full URL its example shows is not taken.
      { endpoint: 'authorize-challenge', types: IA_TYPES, aud: `ia:${aceUrl()}` },
      // The origin form of /iae is still /iae's, not the challenge endpoint's.
      { endpoint: 'authorize-challenge', types: IA_TYPES, aud: `iae:${new URL(svc.url).origin}` },
      { endpoint: 'iae', types: IAE_URN_TYPES, aud: audienceOf('authorize-challenge') },
      { endpoint: 'iae', types: 'openid4vp_presentation,redirect_to_web', aud: audienceOf('authorize-challenge') },
    ];
    for (const { endpoint, types, aud } of cases) {
      const started = await start({ endpoint, types });
      const request = await openRequest(started.reply.body.openid4vp_request, endpoint);
      const answer = await present(started.reply.body.auth_session, request, pid, { aud }, undefined, { endpoint });
      expect(answer.status, `${endpoint} ${aud}`).toBe(400);
      expect(answer.body).toMatchObject({ error: 'access_denied', error_description: expect.stringMatching(/aud/) });
      expect(await logsOf(started.session)).toContain('interactive authorization stopped');
    }
  });

  it('takes an auth_session only at the endpoint its flow started at, which still takes it afterwards', async () => {
    const atAce = await start({ endpoint: 'authorize-challenge', types: IA_TYPES });
    const atIae = await start({ types: IAE_URN_TYPES });
    const aceRequest = await openRequest(atAce.reply.body.openid4vp_request, 'authorize-challenge');
    const iaeRequest = await openRequest(atIae.reply.body.openid4vp_request);

    const aceSessionAtIae = await present(atAce.reply.body.auth_session, aceRequest, pid, { aud: audienceOf('iae') });
    expect(aceSessionAtIae.status).toBe(400);
    expect(aceSessionAtIae.body).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringMatching(/auth_session is unknown/),
    });
    const iaeSessionAtAce = await present(
      atIae.reply.body.auth_session,
      iaeRequest,
      pid,
      { aud: audienceOf('authorize-challenge') },
      undefined,
      {
        endpoint: 'authorize-challenge',
      },
    );
    expect(iaeSessionAtAce.status).toBe(400);
    expect(iaeSessionAtAce.body.error).toBe('invalid_session');

    const aceNext = await present(atAce.reply.body.auth_session, aceRequest, pid, {}, undefined, { endpoint: 'authorize-challenge' });
    expect(aceNext.status, aceNext.text).toBe(401);
    expect(aceNext.body.interaction_type_required).toBe('urn:openid:dcp:ia:auth_via_web');
    const iaeNext = await present(atIae.reply.body.auth_session, iaeRequest);
    expect(iaeNext.status, iaeNext.text).toBe(200);
    expect(iaeNext.body.type).toBe('urn:openid:dcp:iae:redirect_to_web');
  });
});
