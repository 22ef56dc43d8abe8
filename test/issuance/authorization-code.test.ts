import 'reflect-metadata';
import { createHash, randomBytes } from 'node:crypto';
import { Oauth2Client } from '@openid4vc/oauth2';
import { importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issuanceCallbacks } from '../../wallet/callbacks.js';
import { authorizeRequest, pushAuthorizationRequest } from '../support/authorization.js';
import { engine } from '../support/database.js';
import { problemOf } from '../support/problems.js';
import { verifySdJwtIndependently } from '../support/sd-jwt-check.js';
import { startService, type TestService } from '../support/service.js';
import {
  authorizeFromOffer,
  dpopProof,
  type HolderKey,
  holderKey,
  keyProof,
  pkce,
  receiveCredentials,
  WALLET_REDIRECT_URI,
} from '../support/wallet.js';

let svc: TestService;
let acme: string;
let other: string;
let rootCertificate: string;

const configuration = (id: string, scope: string) => ({
  id,
  config: { format: 'dc+sd-jwt', scope },
  vct: `urn:example:${id}`,
  keyBinding: true,
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true },
    { path: ['family_name'], type: 'string', mandatory: true },
  ],
});
const CLAIMS = { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann' } };

const METRICS_TOKEN = 'metrics-token-for-authorization-code-tests';

beforeAll(async () => {
  svc = await startService({ METRICS_TOKEN });
  acme = (await svc.tenant('acme')).token;
  other = (await svc.tenant('other')).token;
  for (const token of [acme, other]) {
    for (const [id, scope] of [
      ['pid', 'pid_scope'],
      ['email', 'email_scope'],
    ] as const) {
      const created = await svc.raw('POST', '/api/issuer/credentials', { token, body: configuration(id, scope) });
      expect(created.status, created.text).toBe(201);
    }
  }
  rootCertificate = (await svc.raw('GET', '/api/key-chain/default-attestation', { token: acme })).body.rootCertificate;
});
afterAll(() => svc.stop());

const offer = async (ids = ['pid', 'email'], token = acme, extra: Record<string, unknown> = {}) => {
  const reply = await svc.raw('POST', '/api/issuer/offer', {
    token,
    body: {
      response_type: 'uri',
      flow: 'authorization_code',
      credentialConfigurationIds: ids,
      credentialClaims: Object.fromEntries(ids.map((id) => [id, CLAIMS])),
      ...extra,
    },
  });
  expect(reply.status, reply.text).toBe(201);
  return { ...reply.body, issuerState: reply.body.credentialOffer.grants.authorization_code.issuer_state as string };
};

const url = (tenant: string, path: string) => `${svc.url}/issuers/${tenant}/${path}`;

const par = (issuerState: string, fields: Record<string, string | undefined> = {}, options: { tenant?: string; dpop?: string } = {}) =>
  pushAuthorizationRequest(svc, options.tenant ?? 'acme', issuerState, fields, options.dpop ? { dpop: options.dpop } : {});

const authorize = (query: Record<string, string>, tenant = 'acme') => authorizeRequest(svc, tenant, query);

/** Offer, PAR and authorization by hand: a code and what the token request needs to redeem it. */
async function codeFor(options: { ids?: string[]; fields?: Record<string, string | undefined>; dpopKey?: HolderKey } = {}) {
  const created = await offer(options.ids);
  const { verifier, challenge } = pkce();
  const dpop = options.dpopKey && (await dpopProof(options.dpopKey, url('acme', 'par')));
  const pushed = await par(created.issuerState, { code_challenge: challenge, ...options.fields }, dpop ? { dpop } : {});
  expect(pushed.status, pushed.text).toBe(201);
  const answer = await authorize({ client_id: options.fields?.client_id ?? 'raw-wallet', request_uri: pushed.body.request_uri });
  expect(answer.status, answer.body).toBe(302);
  const code = answer.location?.searchParams.get('code') as string;
  return { created, code, verifier, requestUri: pushed.body.request_uri as string };
}

async function token(form: Record<string, string>, dpop?: string, tenant = 'acme') {
  return svc.raw('POST', `/issuers/${tenant}/token`, { form, ...(dpop && { headers: { dpop } }) });
}

const codeGrant = (code: string, verifier: string, extra: Record<string, string> = {}) => ({
  grant_type: 'authorization_code',
  code,
  code_verifier: verifier,
  redirect_uri: WALLET_REDIRECT_URI,
  client_id: 'raw-wallet',
  ...extra,
});

const verifySdJwt = (credential: string) => verifySdJwtIndependently(credential, rootCertificate);

describe('authorization code flow: metadata and offers', () => {
  it('publishes the authorization server metadata of PAR, PKCE S256, refresh tokens and RFC 9207', async () => {
    const as = (await svc.raw('GET', '/.well-known/oauth-authorization-server/issuers/acme')).body;
    expect(as).toMatchObject({
      issuer: url('acme', '').slice(0, -1),
      token_endpoint: url('acme', 'token'),
      authorization_endpoint: url('acme', 'authorize'),
      pushed_authorization_request_endpoint: url('acme', 'par'),
      require_pushed_authorization_requests: true,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      authorization_response_iss_parameter_supported: true,
      'pre-authorized_grant_anonymous_access_supported': true,
      token_endpoint_auth_methods_supported: ['none', 'attest_jwt_client_auth'],
    });
    expect(as.grant_types_supported).toEqual(
      expect.arrayContaining(['urn:ietf:params:oauth:grant-type:pre-authorized_code', 'authorization_code', 'refresh_token']),
    );
  });

  it('offers carry a fresh issuer_state (no pre-authorized code); tx_code is refused; an external authorization server only for this flow', async () => {
    const created = await offer();
    expect(Object.keys(created.credentialOffer.grants)).toEqual(['authorization_code']);
    expect(created.issuerState).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(created.credentialOffer.grants.authorization_code.authorization_server).toBeUndefined();
    expect((await offer()).issuerState).not.toBe(created.issuerState);
    const stored = await svc.db.selectFrom('session_handles').select('hash').where('session_id', '=', created.session).execute();
    expect(stored.map((h) => h.hash)).not.toContain(created.issuerState);

    const withTxCode = await svc.call('POST', '/api/issuer/offer', {
      token: acme,
      body: { response_type: 'uri', flow: 'authorization_code', credentialConfigurationIds: ['pid'], tx_code: '1234' },
    });
    expect(withTxCode.status).toBe(400);
    expect(problemOf(withTxCode).errors).toEqual([expect.objectContaining({ field: 'body.tx_code' })]);

    const multi = (await svc.tenant('multi')).token;
    await svc.raw('POST', '/api/issuer/credentials', { token: multi, body: configuration('pid', 'pid_scope') });
    const put = await svc.raw('PUT', '/api/issuer/config', {
      token: multi,
      body: { authorizationServers: [{ issuer: 'https://as.example.com' }] },
    });
    expect(put.status, put.text).toBe(200);
    const named = await offer(['pid'], multi);
    expect(named.credentialOffer.grants.authorization_code.authorization_server).toBe(url('multi', '').slice(0, -1));
    const external = await svc.raw('POST', '/api/issuer/offer', {
      token: multi,
      body: {
        response_type: 'uri',
        flow: 'authorization_code',
        credentialConfigurationIds: ['pid'],
        credentialClaims: { pid: CLAIMS },
        authorization_server: 'https://as.example.com',
      },
    });
    // An external authorization server serves the authorization itself: the offer names it, with issuer_state for it.
    expect(external.status, external.text).toBe(201);
    expect(external.body.credentialOffer.grants.authorization_code).toEqual({
      issuer_state: expect.any(String),
      authorization_server: 'https://as.example.com',
    });
    const preAuthorized = await svc.raw('POST', '/api/issuer/offer', {
      token: multi,
      body: {
        response_type: 'uri',
        flow: 'pre_authorized_code',
        credentialConfigurationIds: ['pid'],
        credentialClaims: { pid: CLAIMS },
        authorization_server: 'https://as.example.com',
      },
    });
    expect(preAuthorized.status).toBe(400);
    expect(problemOf(preAuthorized).errors).toEqual([expect.objectContaining({ field: 'body.authorization_server' })]);
  });
});

describe('authorization code flow with a wallet library', () => {
  it('offer, PAR with DPoP, authorize, token, credential, notification, refresh, credential again', async () => {
    const created = await offer();
    const flow = await authorizeFromOffer(created.uri, { dpop: true, scope: 'pid_scope email_scope' });
    const { client, issuerMetadata, authorizationServerMetadata, token, keys } = flow;
    const location = new URL(flow.redirect.headers.get('location') as string);
    expect(`${location.origin}${location.pathname}`).toBe(WALLET_REDIRECT_URI);
    expect(location.searchParams.get('iss')).toBe(issuerMetadata.credentialIssuer.credential_issuer);
    expect(flow.redirect.headers.get('cache-control')).toBe('no-store');
    expect(token.accessTokenResponse).toMatchObject({ token_type: 'DPoP', expires_in: 600, refresh_token: expect.any(String) });
    expect(token.accessTokenResponse.authorization_details).toBeUndefined();

    const receive = async (accessToken: string, dpop: typeof token.dpop, configurationId: string) => {
      const { c_nonce } = await client.requestNonce({ issuerMetadata });
      const proof = await client.createCredentialRequestJwtProof({
        issuerMetadata,
        signer: (keys[0] as HolderKey).signer,
        nonce: c_nonce,
        credentialConfigurationId: configurationId,
      });
      return client.retrieveCredentials({
        issuerMetadata,
        accessToken,
        credentialConfigurationId: configurationId,
        proofs: { jwt: [proof.jwt] },
        ...(dpop && { dpop }),
      });
    };
    const first = await receive(token.accessTokenResponse.access_token, token.dpop, 'pid');
    const pid = ((first.credentialResponse.credentials ?? [])[0] as { credential: string }).credential;
    const verified = await verifySdJwt(pid);
    expect(verified.payload).toMatchObject({
      iss: issuerMetadata.credentialIssuer.credential_issuer,
      vct: 'urn:example:pid',
      cnf: { jwk: { x: keys[0]?.publicJwk.x } },
    });
    expect(verified.claims).toMatchObject({ given_name: 'Erika', family_name: 'Mustermann' });
    await client.sendNotification({
      issuerMetadata,
      accessToken: token.accessTokenResponse.access_token,
      notification: { notificationId: first.credentialResponse.notification_id as string, event: 'credential_accepted' },
      ...(token.dpop && { dpop: { ...token.dpop, ...first.dpop } }),
    });

    const oauth2 = new Oauth2Client({ callbacks: { ...issuanceCallbacks(keys, 'test-wallet'), fetch } });
    const refreshed = await oauth2.retrieveRefreshTokenAccessToken({
      authorizationServerMetadata,
      refreshToken: token.accessTokenResponse.refresh_token as string,
      dpop: { signer: (keys[0] as HolderKey).signer },
    });
    const newRefresh = refreshed.accessTokenResponse.refresh_token;
    expect(newRefresh).toEqual(expect.any(String));
    expect(newRefresh).not.toBe(token.accessTokenResponse.refresh_token);
    expect(refreshed.accessTokenResponse.token_type).toBe('DPoP');
    const second = await receive(refreshed.accessTokenResponse.access_token, refreshed.dpop, 'email');
    const email = ((second.credentialResponse.credentials ?? [])[0] as { credential: string }).credential;
    expect((await verifySdJwt(email)).payload.vct).toBe('urn:example:email');

    const session = await svc.running.services.sessions.get('acme', created.session);
    expect(session).toMatchObject({ status: 'completed', consumed: true });
    expect(session.public.notifications).toEqual([expect.objectContaining({ event: 'credential_accepted' })]);
    // Refresh tokens, codes and request_uris are stored only as hashes.
    const hashes = (await svc.db.selectFrom('session_handles').select('hash').where('session_id', '=', created.session).execute()).map(
      (h) => h.hash,
    );
    expect(hashes).not.toContain(newRefresh);
    expect(hashes).toContain(
      createHash('sha256')
        .update(newRefresh as string)
        .digest('base64url'),
    );
  });

  it('authorization_details: the token response names credential_identifiers, and the credential is requested by one', async () => {
    const key = await holderKey();
    const details = JSON.stringify([{ type: 'openid_credential', credential_configuration_id: 'email' }]);
    const { code, verifier } = await codeFor({ fields: { scope: undefined, authorization_details: details } });
    const issued = await token(codeGrant(code, verifier));
    expect(issued.status, issued.text).toBe(200);
    expect(issued.body.authorization_details).toEqual([
      { type: 'openid_credential', credential_configuration_id: 'email', credential_identifiers: ['email'] },
    ]);
    const auth = { authorization: `Bearer ${issued.body.access_token}` };
    const proof = async () => {
      const nonce = (await svc.raw('POST', '/issuers/acme/nonce')).body.c_nonce;
      return new SignJWT({ aud: url('acme', '').slice(0, -1), nonce, iat: Math.floor(Date.now() / 1000) })
        .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: key.publicJwk })
        .sign(await importJWK(key.privateJwk, 'ES256'));
    };
    const byConfiguration = await svc.raw('POST', '/issuers/acme/credential', {
      headers: auth,
      body: { credential_configuration_id: 'email', proofs: { jwt: [await proof()] } },
    });
    expect(byConfiguration.body.error).toBe('invalid_credential_request');
    const notGranted = await svc.raw('POST', '/issuers/acme/credential', {
      headers: auth,
      body: { credential_configuration_id: 'pid', proofs: { jwt: [await proof()] } },
    });
    expect(notGranted.body.error).toBe('unknown_credential_configuration');
    const unknown = await svc.raw('POST', '/issuers/acme/credential', {
      headers: auth,
      body: { credential_identifier: 'pid', proofs: { jwt: [await proof()] } },
    });
    expect(unknown.body.error).toBe('unknown_credential_identifier');
    const received = await svc.raw('POST', '/issuers/acme/credential', {
      headers: auth,
      body: { credential_identifier: 'email', proofs: { jwt: [await proof()] } },
    });
    expect(received.status, received.text).toBe(200);
    expect((await verifySdJwt(received.body.credentials[0].credential)).payload.vct).toBe('urn:example:email');
  });
});

describe('pushed authorization requests', () => {
  it('answers 201 with a single-use urn request_uri of 60 seconds', async () => {
    const pushed = await par((await offer()).issuerState);
    expect(pushed.status, pushed.text).toBe(201);
    expect(pushed.body).toEqual({
      request_uri: expect.stringMatching(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/),
      expires_in: 60,
    });
    expect(pushed.headers.get('cache-control')).toBe('no-store');
  });

  it('requires PKCE with S256', async () => {
    const { issuerState } = await offer();
    for (const fields of [
      { code_challenge: undefined },
      { code_challenge_method: undefined },
      { code_challenge_method: 'plain' },
      { code_challenge: 'short' },
    ]) {
      const reply = await par(issuerState, fields);
      expect(reply.status, JSON.stringify(fields)).toBe(400);
      expect(reply.body.error, JSON.stringify(fields)).toBe('invalid_request');
    }
  });

  it('takes redirect URIs per RFC 8252: https, loopback http, reverse-domain private-use schemes; never a fragment', async () => {
    const { issuerState } = await offer();
    for (const good of [
      'https://wallet.example/cb',
      'http://127.0.0.1:4000/cb',
      'http://127.9.8.7/cb',
      'http://localhost/cb',
      'http://[::1]/cb',
      'http://[::1]:8080/cb',
      'com.example.wallet:/cb',
      'com.example.wallet://cb',
      'Com.Example.Wallet:/cb',
    ]) {
      const reply = await par(issuerState, { redirect_uri: good });
      expect(reply.status, `${good}: ${reply.text}`).toBe(201);
    }
    for (const bad of [
      '/relative',
      '.com.example:/cb',
      'https://wallet.example/cb#x',
      'com.example.wallet:/cb#',
      'https://u:p@wallet.example/',
    ]) {
      const reply = await par(issuerState, { redirect_uri: bad });
      expect(reply.status, bad).toBe(400);
      expect(reply.body.error, bad).toBe('invalid_request');
      expect(reply.body.error_description, bad).toMatch(/redirect_uri/);
    }
  });

  it('refuses every other scheme, naming redirect_uri and what is allowed: the browser would hand the code to an OS handler', async () => {
    const { issuerState } = await offer();
    for (const bad of [
      'javascript:alert(1)',
      'JavaScript:alert(1)',
      'x-javascript:alert(1)',
      'data:text/html,x',
      'ms-msdt:/id PCWDiagnostic /skip force',
      'search-ms:query=x&crumb=location:\\\\attacker.example\\share',
      'view-source:https://wallet.example/cb',
      'chrome://settings',
      'jar:https://wallet.example/a.jar!/cb',
      'intent://cb',
      'file:///etc/passwd',
      'eudi-wallet://cb',
      'openid-credential-offer://cb',
      'http://example.com/cb',
      'http://wallet.example/cb',
      'http://128.0.0.1/cb',
      'http://localhost.attacker.example/cb',
      'http://127.0.0.1.attacker.example/cb',
      'com..example:/cb',
      ' javascript:alert(1)',
      'java\tscript:alert(1)',
    ]) {
      const reply = await par(issuerState, { redirect_uri: bad });
      expect(reply.status, bad).toBe(400);
      expect(reply.body.error, bad).toBe('invalid_request');
      expect(reply.body.error_description, bad).toMatch(/^redirect_uri must be https, http to a loopback address .*reverse-domain/);
    }
  });

  it('refuses an unknown issuer_state, one of another tenant, and an offer of the pre-authorized flow', async () => {
    const unknown = await par('not-an-issuer-state');
    expect(unknown.body).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('issuer_state') });
    const theirs = await offer(['pid'], other);
    const crossTenant = await par(theirs.issuerState);
    expect(crossTenant.status).toBe(400);
    expect(crossTenant.body.error).toBe('invalid_request');
    expect((await par(theirs.issuerState, {}, { tenant: 'other' })).status).toBe(201);
    const missing = await par('', { issuer_state: undefined });
    expect(missing.body.error).toBe('invalid_request');
  });

  it('names credentials by authorization_details in the offer, or by scope', async () => {
    const { issuerState } = await offer(['pid']);
    const details = (value: unknown) => par(issuerState, { scope: undefined, authorization_details: JSON.stringify(value) });
    const notOffered = await details([{ type: 'openid_credential', credential_configuration_id: 'email' }]);
    expect(notOffered.body.error).toBe('invalid_authorization_details');
    expect((await details([{ type: 'other', credential_configuration_id: 'pid' }])).body.error).toBe('invalid_authorization_details');
    expect((await details({ type: 'openid_credential' })).body.error).toBe('invalid_authorization_details');
    expect((await par(issuerState, { scope: undefined, authorization_details: '[{' })).body.error).toBe('invalid_authorization_details');
    expect((await details([{ type: 'openid_credential', credential_configuration_id: 'pid' }])).status).toBe(201);
    expect((await par(issuerState, { scope: 'openid email_scope' })).body.error).toBe('invalid_scope');
    expect((await par(issuerState, { scope: 'openid pid_scope' })).status).toBe(201);
    expect((await par(issuerState, { scope: undefined })).body.error).toBe('invalid_request');
    expect((await par(issuerState, { response_type: 'token' })).body.error).toBe('unsupported_response_type');
    expect((await par(issuerState, { resource: 'https://elsewhere.example' })).body.error).toBe('invalid_target');
    expect((await par(issuerState, { request_uri: 'urn:x' })).body.error).toBe('invalid_request');
  });
});

describe('authorization endpoint', () => {
  it('requires a pushed request: no request_uri is a 400, not a redirect', async () => {
    const reply = await authorize({ client_id: 'raw-wallet', response_type: 'code', redirect_uri: WALLET_REDIRECT_URI });
    expect(reply.status).toBe(400);
    expect(reply.location).toBeUndefined();
    expect(JSON.parse(reply.body)).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('pushed') });
    const repeated = await fetch(`${url('acme', 'authorize')}?client_id=a&client_id=b&request_uri=x`, { redirect: 'manual' });
    expect(await repeated.json()).toEqual({ error: 'invalid_request', error_description: 'client_id: expected string, received array' });
  });

  it('redirects with code, state and iss; a request_uri works once and only for its client and tenant', async () => {
    const { issuerState } = await offer();
    const pushed = await par(issuerState);
    const wrongClient = await authorize({ client_id: 'someone-else', request_uri: pushed.body.request_uri });
    expect(wrongClient.status).toBe(400);
    expect(JSON.parse(wrongClient.body).error).toBe('invalid_request');
    // The failed attempt used the request_uri up: single use, whoever presents it.
    expect(JSON.parse((await authorize({ client_id: 'raw-wallet', request_uri: pushed.body.request_uri })).body).error).toBe(
      'invalid_request_uri',
    );

    const again = await par(issuerState);
    const crossTenant = await authorize({ client_id: 'raw-wallet', request_uri: again.body.request_uri }, 'other');
    expect(JSON.parse(crossTenant.body).error).toBe('invalid_request_uri');
    const fresh = await par(issuerState);
    const answer = await authorize({ client_id: 'raw-wallet', request_uri: fresh.body.request_uri });
    expect(answer.status).toBe(302);
    expect(answer.location?.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(answer.location?.searchParams.get('state')).toBe('xyz');
    expect(answer.location?.searchParams.get('iss')).toBe(url('acme', '').slice(0, -1));
    const reused = await authorize({ client_id: 'raw-wallet', request_uri: fresh.body.request_uri });
    expect(reused.status).toBe(400);
    expect(JSON.parse(reused.body).error).toBe('invalid_request_uri');
    const garbage = await authorize({ client_id: 'raw-wallet', request_uri: 'urn:ietf:params:oauth:request_uri:nope' });
    expect(JSON.parse(garbage.body).error).toBe('invalid_request_uri');
  });

  it('refuses an expired request_uri', async () => {
    const created = await offer();
    const pushed = await par(created.issuerState);
    await svc.db
      .updateTable('session_handles')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('session_id', '=', created.session)
      .where('purpose', '=', 'request_uri')
      .execute();
    const reply = await authorize({ client_id: 'raw-wallet', request_uri: pushed.body.request_uri });
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.body).error).toBe('invalid_request_uri');
  });

  it('once the redirect_uri is trusted, errors go there, with state and iss (an offer that expired meanwhile)', async () => {
    const created = await offer();
    const pushed = await par(created.issuerState);
    await svc.db
      .updateTable('sessions')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', created.session)
      .execute();
    const answer = await authorize({ client_id: 'raw-wallet', request_uri: pushed.body.request_uri });
    expect(answer.status).toBe(302);
    expect(`${answer.location?.origin}${answer.location?.pathname}`).toBe(WALLET_REDIRECT_URI);
    expect(Object.fromEntries(answer.location?.searchParams ?? [])).toEqual({
      error: 'invalid_request',
      error_description: 'the credential offer has expired',
      state: 'xyz',
      iss: url('acme', '').slice(0, -1),
    });
  });

  /** The session's live authorization codes and the log lines that announced one. */
  const codesOf = async (sessionId: string) => ({
    codes: (
      await svc.db
        .selectFrom('session_handles')
        .select('hash')
        .where('session_id', '=', sessionId)
        .where('purpose', '=', 'authorization_code')
        .execute()
    ).length,
    logged: (
      await svc.db
        .selectFrom('session_logs')
        .select('seq')
        .where('session_id', '=', sessionId)
        .where('message', '=', 'authorization code issued')
        .execute()
    ).length,
  });

  it('a refused authorization leaves no code and no log line of one, though the request_uri is spent', async () => {
    const created = await offer();
    const wrongClient = await authorize({ client_id: 'someone-else', request_uri: (await par(created.issuerState)).body.request_uri });
    expect(JSON.parse(wrongClient.body)).toEqual({
      error: 'invalid_request',
      error_description: 'client_id does not match the pushed authorization request',
    });
    expect(await codesOf(created.session)).toEqual({ codes: 0, logged: 0 });

    const pushed = await par(created.issuerState);
    await svc.db
      .updateTable('sessions')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', created.session)
      .execute();
    const expired = await authorize({ client_id: 'raw-wallet', request_uri: pushed.body.request_uri });
    expect(expired.location?.searchParams.get('error_description')).toBe('the credential offer has expired');
    expect(await codesOf(created.session)).toEqual({ codes: 0, logged: 0 });
    const handles = await svc.db.selectFrom('session_handles').select('purpose').where('session_id', '=', created.session).execute();
    expect(handles.map((h) => h.purpose)).not.toContain('request_uri');
  });

  it('racing authorizations of one request_uri: exactly one gets a code, the only one the session holds, and it redeems', async () => {
    const created = await offer();
    const { verifier, challenge } = pkce();
    const pushed = await par(created.issuerState, { code_challenge: challenge });
    const replies = await Promise.all(
      Array.from({ length: 8 }, () => authorize({ client_id: 'raw-wallet', request_uri: pushed.body.request_uri })),
    );
    const granted = replies.filter((reply) => reply.status === 302);
    expect(granted).toHaveLength(1);
    for (const refused of replies.filter((reply) => reply.status !== 302)) {
      expect(JSON.parse(refused.body)).toEqual({
        error: 'invalid_request_uri',
        error_description: 'request_uri is unknown, expired or already used',
      });
    }
    expect(await codesOf(created.session)).toEqual({ codes: 1, logged: 1 });
    const code = granted[0]?.location?.searchParams.get('code') as string;
    expect((await token(codeGrant(code, verifier))).status).toBe(200);
  });

  it.skipIf(engine !== 'postgres')(
    'grants in one round trip on PostgreSQL: request_uri spent, session read, code and log line written',
    async () => {
      /** Statements sent while answering requests (svc_db_request_round_trips_total: the scrape and background work aside). */
      const requestRoundTrips = async () => {
        const text = await (await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
        return Number(/^svc_db_request_round_trips_total (\d+)/m.exec(text)?.[1]);
      };
      const created = await offer();
      const pushed = await par(created.issuerState);
      const before = await requestRoundTrips();
      const answer = await authorize({ client_id: 'raw-wallet', request_uri: pushed.body.request_uri });
      expect(answer.location?.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect((await requestRoundTrips()) - before).toBe(1);
    },
  );

  it('refuses to push a request for an offer already redeemed', async () => {
    const { created, code, verifier } = await codeFor();
    expect((await token(codeGrant(code, verifier))).status).toBe(200);
    const pushed = await par(created.issuerState);
    expect(pushed.body).toEqual({ error: 'invalid_request', error_description: 'the credential offer has already been redeemed' });
  });
});

describe('token endpoint: authorization_code grant', () => {
  it('checks the PKCE verifier, redirect_uri and client_id; a failed attempt spends the code', async () => {
    const cases: [string, Record<string, string>, string][] = [
      ['wrong verifier', { code_verifier: randomBytes(32).toString('base64url') }, 'invalid_grant'],
      ['another redirect_uri', { redirect_uri: 'https://wallet.example/other' }, 'invalid_grant'],
      ['another client', { client_id: 'someone-else' }, 'invalid_grant'],
    ];
    for (const [name, change, error] of cases) {
      const { code, verifier } = await codeFor();
      const reply = await token(codeGrant(code, verifier, change));
      expect(reply.status, name).toBe(400);
      expect(reply.body.error, name).toBe(error);
      expect((await token(codeGrant(code, verifier))).body.error, `${name}: the code is spent`).toBe('invalid_grant');
    }
    const { code, verifier } = await codeFor();
    const { code_verifier: _, ...withoutVerifier } = codeGrant(code, verifier);
    expect((await token(withoutVerifier)).body.error).toBe('invalid_request');
    expect((await token(codeGrant(code, 'too-short'))).body.error).toBe('invalid_request');
    expect((await token({ grant_type: 'implicit' })).body.error).toBe('unsupported_grant_type');
    expect((await token(codeGrant(code, verifier))).status).toBe(200);
  });

  it('a code used twice is refused, and what its first use obtained is revoked', async () => {
    const { created, code, verifier } = await codeFor();
    const first = await token(codeGrant(code, verifier));
    expect(first.status).toBe(200);
    const second = await token(codeGrant(code, verifier));
    expect(second.status).toBe(400);
    expect(second.body.error).toBe('invalid_grant');
    const refresh = await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token });
    expect(refresh.body.error).toBe('invalid_grant');
    const credential = await svc.raw('POST', '/issuers/acme/credential', {
      headers: { authorization: `Bearer ${first.body.access_token}` },
      body: { credential_configuration_id: 'pid' },
    });
    expect(credential.status).toBe(401);
    expect(credential.body.error).toBe('invalid_token');
    const session = await svc.running.services.sessions.get('acme', created.session);
    expect(session).toMatchObject({ status: 'failed', errorReason: 'an authorization code was used twice' });
  });

  it('two racing redemptions of one code: at most one gets tokens, and the replay revokes them', async () => {
    const { created, code, verifier } = await codeFor();
    const replies = await Promise.all([token(codeGrant(code, verifier)), token(codeGrant(code, verifier))]);
    expect(replies.filter((r) => r.status === 200).length).toBeLessThanOrEqual(1);
    expect(replies.filter((r) => r.status === 400).every((r) => r.body.error === 'invalid_grant')).toBe(true);
    const session = await svc.running.services.sessions.get('acme', created.session);
    expect(session.status).toBe('failed');
    const winner = replies.find((r) => r.status === 200);
    if (winner)
      expect((await token({ grant_type: 'refresh_token', refresh_token: winner.body.refresh_token })).body.error).toBe('invalid_grant');
  });

  it('a code is redeemed only at its tenant', async () => {
    const { code, verifier } = await codeFor();
    const elsewhere = await token(codeGrant(code, verifier), undefined, 'other');
    expect(elsewhere.body.error).toBe('invalid_grant');
    expect((await token(codeGrant(code, verifier))).status).toBe(200);
  });

  it('a request pushed with DPoP binds the code to that key', async () => {
    const key = await holderKey();
    const stranger = await holderKey();
    const { code, verifier } = await codeFor({ dpopKey: key });
    const withoutProof = await token(codeGrant(code, verifier));
    expect(withoutProof.body.error).toBe('invalid_grant');
    const bound = await codeFor({ dpopKey: key });
    const otherKey = await token(codeGrant(bound.code, bound.verifier), await dpopProof(stranger, url('acme', 'token')));
    expect(otherKey.body.error).toBe('invalid_grant');
    const good = await codeFor({ dpopKey: key });
    const issued = await token(codeGrant(good.code, good.verifier), await dpopProof(key, url('acme', 'token')));
    expect(issued.status, issued.text).toBe(200);
    expect(issued.body.token_type).toBe('DPoP');
    const mismatch = await par(
      (await offer()).issuerState,
      { dpop_jkt: 'not-the-thumbprint' },
      { dpop: await dpopProof(key, url('acme', 'par')) },
    );
    expect(mismatch.body.error).toBe('invalid_dpop_proof');
  });
});

describe('token endpoint: refresh_token grant', () => {
  async function tokens(dpopKey?: HolderKey) {
    const { created, code, verifier } = await codeFor(dpopKey ? { dpopKey } : {});
    const reply = await token(codeGrant(code, verifier), dpopKey && (await dpopProof(dpopKey, url('acme', 'token'))));
    expect(reply.status, reply.text).toBe(200);
    return { session: created.session as string, ...(reply.body as { access_token: string; refresh_token: string }) };
  }
  const refresh = (refreshToken: string, dpop?: string, tenant = 'acme') =>
    token({ grant_type: 'refresh_token', refresh_token: refreshToken }, dpop, tenant);

  it('rotates: each use returns a new refresh token; reusing a spent one kills the chain', async () => {
    const issued = await tokens();
    const first = await refresh(issued.refresh_token);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ token_type: 'Bearer', refresh_token: expect.any(String) });
    const second = await refresh(first.body.refresh_token);
    expect(second.status).toBe(200);
    const replay = await refresh(issued.refresh_token);
    expect(replay.body.error).toBe('invalid_grant');
    // The chain is dead: the newest refresh token and the access tokens too.
    expect((await refresh(second.body.refresh_token)).body.error).toBe('invalid_grant');
    const credential = await svc.raw('POST', '/issuers/acme/credential', {
      headers: { authorization: `Bearer ${second.body.access_token}` },
      body: { credential_configuration_id: 'pid' },
    });
    expect(credential.body.error).toBe('invalid_token');
  });

  it('a DPoP-bound refresh token needs a proof of the same key', async () => {
    const key = await holderKey();
    const issued = await tokens(key);
    expect((await refresh(issued.refresh_token)).body.error).toBe('invalid_grant');
    const stranger = await holderKey();
    expect((await refresh(issued.refresh_token, await dpopProof(stranger, url('acme', 'token')))).body.error).toBe('invalid_grant');
    const good = await refresh(issued.refresh_token, await dpopProof(key, url('acme', 'token')));
    expect(good.status, good.text).toBe(200);
    expect(good.body.token_type).toBe('DPoP');
  });

  it('refuses an expired refresh token, one of another tenant, and one whose session was deleted', async () => {
    const issued = await tokens();
    expect((await refresh(issued.refresh_token, undefined, 'other')).body.error).toBe('invalid_grant');
    await svc.db
      .updateTable('session_handles')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('session_id', '=', issued.session)
      .where('purpose', '=', 'refresh_token')
      .execute();
    expect((await refresh(issued.refresh_token)).body.error).toBe('invalid_grant');

    const deleted = await tokens();
    expect((await svc.call('DELETE', `/api/session/${deleted.session}`, { token: acme })).status).toBeLessThan(300);
    expect((await refresh(deleted.refresh_token)).body.error).toBe('invalid_grant');
  });

  describe('refused when the session may no longer obtain credentials', () => {
    // A configuration whose credentials get status list entries (of 2 bits: suspended is 2), so that the session's can be revoked.
    beforeAll(async () => {
      expect((await svc.call('PUT', '/api/status-list-config', { token: acme, body: { bits: 2 } })).status).toBe(200);
      const badge = { ...configuration('badge', 'badge_scope'), statusManagement: true };
      const created = await svc.raw('POST', '/api/issuer/credentials', { token: acme, body: badge });
      expect(created.status, created.text).toBe(201);
    });

    /** Tokens of a session that obtained its badge credential (so it has a status entry). */
    async function issuedBadge() {
      const { created, code, verifier } = await codeFor({ ids: ['badge'], fields: { scope: 'badge_scope' } });
      const reply = await token(codeGrant(code, verifier));
      expect(reply.status, reply.text).toBe(200);
      const nonce = (await svc.raw('POST', '/issuers/acme/nonce')).body.c_nonce;
      const proof = await keyProof(await holderKey(), url('acme', '').slice(0, -1), nonce);
      const credential = await svc.raw('POST', '/issuers/acme/credential', {
        headers: { authorization: `Bearer ${reply.body.access_token}` },
        body: { credential_configuration_id: 'badge', proofs: { jwt: [proof] } },
      });
      expect(credential.status, credential.text).toBe(200);
      return { session: created.session as string, refreshToken: reply.body.refresh_token as string };
    }
    const setStatus = async (session: string, status: 0 | 1 | 2) => {
      const changed = await svc.call('POST', '/api/session/revoke', { token: acme, body: { sessionId: session, status } });
      expect(changed.status, changed.text).toBe(200);
      expect(changed.body.updatedEntries).toBe(1);
    };
    const refusals = async (session: string) =>
      (await svc.call('GET', `/api/session/${session}/logs`, { token: acme })).body.filter((line) => line.message === 'refresh refused');

    it('revoked: invalid_grant saying why, logged in the session; the token stays unspent', async () => {
      const issued = await issuedBadge();
      await setStatus(issued.session, 1);
      const refused = await refresh(issued.refreshToken);
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ error: 'invalid_grant', error_description: "the session's credentials are revoked or suspended" });
      expect(await refusals(issued.session)).toEqual([
        expect.objectContaining({ level: 'warn', details: { reason: "the session's credentials are revoked or suspended" } }),
      ]);
      // Not a replay: the session and its tokens are not revoked for it.
      expect((await svc.running.services.sessions.get('acme', issued.session)).status).toBe('completed');
    });

    it('suspended: refused; reinstated: the same token refreshes again', async () => {
      const issued = await issuedBadge();
      await setStatus(issued.session, 2);
      expect((await refresh(issued.refreshToken)).body.error).toBe('invalid_grant');
      await setStatus(issued.session, 0);
      const refreshed = await refresh(issued.refreshToken);
      expect(refreshed.status, refreshed.text).toBe(200);
      expect(refreshed.body.refresh_token).toEqual(expect.any(String));
    });

    it('past the session expiresAt: refused, whatever its status says', async () => {
      const issued = await issuedBadge();
      const valid = await issuedBadge();
      await svc.db
        .updateTable('sessions')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', issued.session)
        .execute();
      const refused = await refresh(issued.refreshToken);
      expect(refused.body).toEqual({ error: 'invalid_grant', error_description: 'the issuance session of this refresh token has expired' });
      expect(await refusals(issued.session)).toHaveLength(1);
      // A session in use and with valid credentials still refreshes.
      expect((await refresh(valid.refreshToken)).status).toBe(200);
    });

    it('revocations racing refreshes: once the revocation answered, the live token of every session is refused', async () => {
      const sessions = await Promise.all(Array.from({ length: 8 }, () => issuedBadge()));
      const latest = await Promise.all(
        sessions.map(async (issued) => {
          const [reply] = await Promise.all([refresh(issued.refreshToken), setStatus(issued.session, 1)]);
          // A refresh that came first rotated the token: its successor is the live one.
          return reply.status === 200 ? (reply.body.refresh_token as string) : issued.refreshToken;
        }),
      );
      for (const live of latest) expect((await refresh(live)).body.error).toBe('invalid_grant');
    });
  });

  it('refreshTokenLifetimeSeconds 0 issues no refresh token and drops the grant from the metadata', async () => {
    const solo = (await svc.tenant('solo')).token;
    await svc.raw('POST', '/api/issuer/credentials', { token: solo, body: configuration('pid', 'pid_scope') });
    expect((await svc.raw('PUT', '/api/issuer/config', { token: solo, body: { refreshTokenLifetimeSeconds: 0 } })).status).toBe(200);
    const created = await offer(['pid'], solo);
    const { verifier, challenge } = pkce();
    const pushed = await par(created.issuerState, { code_challenge: challenge }, { tenant: 'solo' });
    const answer = await authorize({ client_id: 'raw-wallet', request_uri: pushed.body.request_uri }, 'solo');
    const code = answer.location?.searchParams.get('code') as string;
    const issued = await token(codeGrant(code, verifier), undefined, 'solo');
    expect(issued.status, issued.text).toBe(200);
    expect(issued.body.refresh_token).toBeUndefined();
    const as = (await svc.raw('GET', '/.well-known/oauth-authorization-server/issuers/solo')).body;
    expect(as.grant_types_supported).not.toContain('refresh_token');
  });
});

describe('DPoP server nonces (dpopNonceRequired)', () => {
  let strict: string;
  beforeAll(async () => {
    strict = (await svc.tenant('strict')).token;
    for (const [id, scope] of [
      ['pid', 'pid_scope'],
      ['email', 'email_scope'],
    ] as const) {
      await svc.raw('POST', '/api/issuer/credentials', { token: strict, body: configuration(id, scope) });
    }
    expect((await svc.raw('PUT', '/api/issuer/config', { token: strict, body: { dpopNonceRequired: true } })).status).toBe(200);
  });

  it('a wallet library retries with the nonce at PAR, token and credential endpoints', async () => {
    const created = await offer(['pid'], strict);
    const { client, issuerMetadata, token: tokens, keys } = await authorizeFromOffer(created.uri, { dpop: true, scope: 'pid_scope' });
    expect(tokens.accessTokenResponse.token_type).toBe('DPoP');
    const { c_nonce } = await client.requestNonce({ issuerMetadata });
    const proof = await client.createCredentialRequestJwtProof({
      issuerMetadata,
      signer: (keys[0] as HolderKey).signer,
      nonce: c_nonce,
      credentialConfigurationId: 'pid',
    });
    const received = await client.retrieveCredentials({
      issuerMetadata,
      accessToken: tokens.accessTokenResponse.access_token,
      credentialConfigurationId: 'pid',
      proofs: { jwt: [proof.jwt] },
      ...(tokens.dpop && { dpop: tokens.dpop }),
    });
    expect(received.credentialResponse.credentials).toHaveLength(1);
  });

  it('answers use_dpop_nonce with a DPoP-Nonce: 400 at the token endpoint, 401 with a DPoP challenge at the credential endpoint', async () => {
    const key = await holderKey();
    const created = await offer(['pid'], strict);
    const { verifier, challenge } = pkce();
    const pushed = await par(created.issuerState, { code_challenge: challenge }, { tenant: 'strict' });
    expect(pushed.status, pushed.text).toBe(201);
    const answer = await authorize({ client_id: 'raw-wallet', request_uri: pushed.body.request_uri }, 'strict');
    const code = answer.location?.searchParams.get('code') as string;

    const withoutNonce = await token(codeGrant(code, verifier), await dpopProof(key, url('strict', 'token')), 'strict');
    expect(withoutNonce.status).toBe(400);
    expect(withoutNonce.body.error).toBe('use_dpop_nonce');
    const nonce = withoutNonce.headers.get('dpop-nonce') as string;
    expect(nonce).toEqual(expect.any(String));
    const forged = await token(
      codeGrant(code, verifier),
      await dpopProof(key, url('strict', 'token'), { claims: { nonce: `${nonce}x` } }),
      'strict',
    );
    expect(forged.body.error).toBe('use_dpop_nonce');
    const issued = await token(codeGrant(code, verifier), await dpopProof(key, url('strict', 'token'), { claims: { nonce } }), 'strict');
    expect(issued.status, issued.text).toBe(200);

    const credential = await svc.raw('POST', '/issuers/strict/credential', {
      headers: {
        authorization: `DPoP ${issued.body.access_token}`,
        dpop: await dpopProof(key, url('strict', 'credential'), { accessToken: issued.body.access_token }),
      },
      body: { credential_configuration_id: 'pid' },
    });
    expect(credential.status).toBe(401);
    expect(credential.headers.get('www-authenticate')).toMatch(/^DPoP error="use_dpop_nonce"/);
    expect(credential.headers.get('dpop-nonce')).toEqual(expect.any(String));
  });
});

describe('builtinAuthorizationServerEnabled false', () => {
  let closed: string;
  const settings = (body: Record<string, unknown>) => svc.raw('PUT', '/api/issuer/config', { token: closed, body });
  const offerReply = (body: Record<string, unknown>) =>
    svc.raw('POST', '/api/issuer/offer', {
      token: closed,
      body: { response_type: 'uri', credentialConfigurationIds: ['pid'], credentialClaims: { pid: CLAIMS }, ...body },
    });
  const expectRefusedServer = (reply: { status: number; text: string; body: unknown }) => {
    expect(reply.status, reply.text).toBe(400);
    expect(problemOf(reply).errors).toEqual([expect.objectContaining({ field: 'body.authorization_server' })]);
  };

  beforeAll(async () => {
    closed = (await svc.tenant('closed')).token;
    await svc.raw('POST', '/api/issuer/credentials', { token: closed, body: configuration('pid', 'pid_scope') });
  });

  it('refuses authorization code offers, PAR, authorization, interactive authorization and the authorization_code grant; pre-authorized codes and refresh tokens still work', async () => {
    // Made while the built-in server was enabled: a request pushed (not yet authorized), a code not yet
    // redeemed, and the refresh token of a session it authorized.
    const pending = await offer(['pid'], closed);
    const pushed = await par(pending.issuerState, {}, { tenant: 'closed' });
    expect(pushed.status, pushed.text).toBe(201);
    const unredeemed = await offer(['pid'], closed);
    const { verifier, challenge } = pkce();
    const pushedForCode = await par(unredeemed.issuerState, { code_challenge: challenge }, { tenant: 'closed' });
    const code = (
      await authorize({ client_id: 'raw-wallet', request_uri: pushedForCode.body.request_uri }, 'closed')
    ).location?.searchParams.get('code') as string;
    const redeemed = await offer(['pid'], closed);
    const pkceRedeemed = pkce();
    const pushedRedeemed = await par(redeemed.issuerState, { code_challenge: pkceRedeemed.challenge }, { tenant: 'closed' });
    const redeemedCode = (
      await authorize({ client_id: 'raw-wallet', request_uri: pushedRedeemed.body.request_uri }, 'closed')
    ).location?.searchParams.get('code') as string;
    const tokens = await token(codeGrant(redeemedCode, pkceRedeemed.verifier), undefined, 'closed');
    expect(tokens.status, tokens.text).toBe(200);

    expect((await settings({ builtinAuthorizationServerEnabled: false })).status).toBe(200);
    const disabled = "this issuer's built-in authorization server is disabled";

    // Offers: an authorization code offer has no server left (default) and may not name the built-in one.
    const byDefault = await offerReply({ flow: 'authorization_code' });
    expectRefusedServer(byDefault);
    expect(problemOf(byDefault).detail).toContain('no enabled authorization server serves the authorization code flow');
    const named = await offerReply({ flow: 'authorization_code', authorization_server: url('closed', '').slice(0, -1) });
    expectRefusedServer(named);
    expect(named.text).toContain('the built-in authorization server is disabled');

    // The built-in endpoints: PAR, authorize (the request_uri pushed before is not spent), IAE, the code grant.
    const refusedPar = await par(pending.issuerState, {}, { tenant: 'closed' });
    expect(refusedPar.status).toBe(400);
    expect(refusedPar.body).toEqual({ error: 'invalid_request', error_description: disabled });
    const refusedAuthorize = await authorize({ client_id: 'raw-wallet', request_uri: pushed.body.request_uri }, 'closed');
    expect(refusedAuthorize.status).toBe(400);
    expect(refusedAuthorize.location).toBeUndefined();
    expect(JSON.parse(refusedAuthorize.body)).toEqual({ error: 'invalid_request', error_description: disabled });
    const refusedIae = await svc.call('POST', '/issuers/closed/iae', {
      form: { interaction_types_supported: 'redirect_to_web', client_id: 'raw-wallet', request_uri: pushed.body.request_uri },
    });
    expect(refusedIae.status).toBe(400);
    expect(refusedIae.body).toEqual({ error: 'invalid_request', error_description: disabled });
    const refusedCode = await token(codeGrant(code, verifier), undefined, 'closed');
    expect(refusedCode.status).toBe(400);
    expect(refusedCode.body).toEqual({ error: 'unsupported_grant_type', error_description: disabled });
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token }, undefined, 'closed');
    expect(refreshed.status, refreshed.text).toBe(200);

    // Metadata: the built-in server is not listed, and its own metadata keeps only what it still serves.
    const issuerMetadata = (await svc.raw('GET', '/.well-known/openid-credential-issuer/issuers/closed')).body;
    expect(issuerMetadata.authorization_servers).toBeUndefined();
    const as = (await svc.raw('GET', '/.well-known/oauth-authorization-server/issuers/closed')).body;
    expect(as.token_endpoint).toBe(url('closed', 'token'));
    expect(as).not.toHaveProperty('authorization_endpoint');
    expect(as).not.toHaveProperty('pushed_authorization_request_endpoint');
    expect(as).not.toHaveProperty('interactive_authorization_endpoint');
    expect(as.grant_types_supported).toEqual(['urn:ietf:params:oauth:grant-type:pre-authorized_code', 'refresh_token']);

    // The pre-authorized code flow is no authorization server flow: offered by default, redeemed by a wallet.
    const preAuthorized = await offerReply({ flow: 'pre_authorized_code' });
    expect(preAuthorized.status, preAuthorized.text).toBe(201);
    const received = await receiveCredentials(preAuthorized.body.uri);
    expect(received.response.credentialResponse.credentials).toHaveLength(1);
    const namedPreAuthorized = await offerReply({ flow: 'pre_authorized_code', authorization_server: url('closed', '').slice(0, -1) });
    expect(namedPreAuthorized.status, namedPreAuthorized.text).toBe(201);

    // With an external server enabled, authorization code offers default to it; the built-in one stays refused.
    expect(
      (await settings({ builtinAuthorizationServerEnabled: false, authorizationServers: [{ issuer: 'https://as.example.com' }] })).status,
    ).toBe(200);
    const external = await offerReply({ flow: 'authorization_code' });
    expect(external.status, external.text).toBe(201);
    expect((await svc.raw('GET', '/.well-known/openid-credential-issuer/issuers/closed')).body.authorization_servers).toEqual([
      'https://as.example.com',
    ]);
    expectRefusedServer(await offerReply({ flow: 'authorization_code', authorization_server: url('closed', '').slice(0, -1) }));

    // Enabled again, the request pushed before still works: the refusal spent nothing.
    expect((await settings({})).status).toBe(200);
    const resumed = await authorize({ client_id: 'raw-wallet', request_uri: pushed.body.request_uri }, 'closed');
    expect(resumed.status, resumed.body).toBe(302);
    expect(resumed.location?.searchParams.get('code')).toEqual(expect.any(String));
  });
});
