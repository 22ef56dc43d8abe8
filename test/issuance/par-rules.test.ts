// Each rule of the pushed authorization request (RFC 9126), PKCE (RFC 7636, S256 only), the
// redirect_uri rule (RFC 8252) and the authorization endpoint, through the real server, one refusal
// at a time with the description it gives, and each accepted edge beside it: what the request
// authorizes (details and scope together), what it binds the code to (a DPoP key, a wallet
// instance), how long its request_uri lives, and that a new request replaces the one before. The
// whole flow with wallet libraries is in authorization-code.test.ts; wallet-initiated requests in
// wallet-initiated.test.ts. The last part holds the refusals of the code and refresh token grants that
// the token endpoint names (the dpop set runs them).
import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ecThumbprint } from '../../src/platform/crypto/ec-jws.js';
import { authorizeRequest, pushAuthorizationRequest, redeemCode } from '../support/authorization.js';
import { startService, type TestService } from '../support/service.js';
import { dpopProof, holderKey, pkce, WALLET_REDIRECT_URI } from '../support/wallet.js';
import { attestationHeaders, walletInstance, walletProvider } from '../support/wallet-provider.js';

let svc: TestService;
let acme: string;
let other: string;

const CLAIMS = { type: 'inline', claims: { given_name: 'Erika' } };
const configuration = (id: string) => ({
  id,
  config: { format: 'dc+sd-jwt', scope: `${id}_scope` },
  vct: `urn:example:${id}`,
  keyBinding: true,
  fields: [{ path: ['given_name'], type: 'string', mandatory: true }],
});

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  other = (await svc.tenant('other')).token;
  for (const [token, id] of [
    [acme, 'pid'],
    [acme, 'email'],
    [other, 'pid'],
  ] as const) {
    const created = await svc.raw('POST', '/api/issuer/credentials', { token, body: configuration(id) });
    expect(created.status, created.text).toBe(201);
  }
});
afterAll(() => svc.stop());

const issuerId = (tenant = 'acme') => `${svc.url}/issuers/${tenant}`;
async function offer(ids = ['pid', 'email'], token = acme) {
  const reply = await svc.raw('POST', '/api/issuer/offer', {
    token,
    body: {
      response_type: 'uri',
      flow: 'authorization_code',
      credentialConfigurationIds: ids,
      credentialClaims: Object.fromEntries(ids.map((id) => [id, CLAIMS])),
    },
  });
  expect(reply.status, reply.text).toBe(201);
  return {
    session: reply.body.session as string,
    issuerState: reply.body.credentialOffer.grants.authorization_code.issuer_state as string,
  };
}
const par = (issuerState: string, fields: Record<string, string | undefined> = {}, headers: Record<string, string> = {}, tenant = 'acme') =>
  pushAuthorizationRequest(svc, tenant, issuerState, fields, headers);
const authorize = (requestUri: string, clientId = 'raw-wallet', tenant = 'acme') =>
  authorizeRequest(svc, tenant, { client_id: clientId, request_uri: requestUri });
const expectError = (reply: { status: number; body: any; text: string }, error: string, description: string | RegExp) => {
  expect(reply.status, reply.text).toBe(400);
  expect(reply.body.error, reply.text).toBe(error);
  expect(reply.body.error_description, reply.text).toMatch(description);
};
/** PAR with `fields`, then authorization: the code and its verifier. */
async function codeOf(issuerState: string, fields: Record<string, string | undefined> = {}, headers: Record<string, string> = {}) {
  const { verifier, challenge } = pkce();
  const pushed = await par(issuerState, { code_challenge: challenge, ...fields }, headers);
  expect(pushed.status, pushed.text).toBe(201);
  const answer = await authorize(pushed.body.request_uri);
  expect(answer.status, answer.body).toBe(302);
  return { code: answer.location?.searchParams.get('code') as string, verifier, requestUri: pushed.body.request_uri as string };
}
const publicOf = async (session: string) =>
  JSON.parse((await svc.db.selectFrom('sessions').select('public_data').where('id', '=', session).executeTakeFirstOrThrow()).public_data);

describe('PKCE', () => {
  it.each([
    ['no code_challenge', { code_challenge: undefined }, /^code_challenge is required \(PKCE\)$/],
    ['no method', { code_challenge_method: undefined }, /^code_challenge_method must be S256$/],
    ['plain', { code_challenge_method: 'plain' }, /^code_challenge_method must be S256$/],
    ['42 characters', { code_challenge: 'a'.repeat(42) }, /^code_challenge must be a base64url SHA-256 digest$/],
    ['44 characters', { code_challenge: 'a'.repeat(44) }, /must be a base64url SHA-256 digest/],
    ['a base64 (not url) character', { code_challenge: `${'a'.repeat(42)}+` }, /must be a base64url SHA-256 digest/],
  ])('refuses %s: invalid_request', async (_name, fields, description) => {
    expectError(await par((await offer()).issuerState, fields), 'invalid_request', description);
  });

  it('the verifier must hash to the challenge', async () => {
    const { issuerState } = await offer();
    const { code, verifier } = await codeOf(issuerState, {});
    const wrong = await redeemCode(svc, 'acme', code, `${verifier}x`);
    expectError(wrong, 'invalid_grant', /code_verifier does not match the code_challenge/);
    const fresh = await codeOf(issuerState, { code_challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url') });
    expect((await redeemCode(svc, 'acme', fresh.code, 'v'.repeat(43))).status).toBe(200);
  });
});

describe('redirect_uri', () => {
  it.each([
    'https://wallet.example/cb',
    'http://localhost:9/cb',
    'http://[::1]/cb',
    'http://127.0.0.1/cb',
    'http://127.200.3.4/cb',
    'http://127.0.10.100/cb',
    'http://0x7f.1/cb',
    'com.example.wallet:/cb',
  ])('takes %s', async (redirectUri) => {
    const pushed = await par((await offer()).issuerState, { redirect_uri: redirectUri });
    expect(pushed.status, pushed.text).toBe(201);
  });

  it.each([
    ['wallet.example/cb', /^redirect_uri must be an absolute URL$/],
    ['https://wallet.example/cb#x', /^redirect_uri must not contain a fragment$/],
    ['https://wallet.example/cb#', /^redirect_uri must not contain a fragment$/],
    ['https://user@wallet.example/cb', /^redirect_uri must not carry credentials$/],
    ['https://:secret@wallet.example/cb', /^redirect_uri must not carry credentials$/],
    ['http://wallet.example/cb', /^redirect_uri must be https, http to a loopback address/],
    ['http://localhostx/cb', /^redirect_uri must be https, http to a loopback address/],
    ['http://[::2]/cb', /^redirect_uri must be https, http to a loopback address/],
    ['http://127.0.0.1.wallet.example/cb', /^redirect_uri must be https, http to a loopback address/],
    ['walletapp:/cb', /^redirect_uri must be https, http to a loopback address/],
    ['com.example.:/cb', /^redirect_uri must be https, http to a loopback address/],
    ['javascript:alert(1)', /^redirect_uri must be https, http to a loopback address/],
  ])('refuses %s', async (redirectUri, description) => {
    expectError(await par((await offer()).issuerState, { redirect_uri: redirectUri }), 'invalid_request', description);
  });
});

describe('the request', () => {
  it('refuses another response_type, another resource, and naming no credential', async () => {
    const { issuerState } = await offer();
    expectError(await par(issuerState, { response_type: 'token' }), 'unsupported_response_type', /^response_type must be code$/);
    expectError(
      await par(issuerState, { resource: `${issuerId()}/x` }),
      'invalid_target',
      /^resource must be the credential issuer identifier$/,
    );
    expect((await par(issuerState, { resource: issuerId() })).status).toBe(201);
    expectError(
      await par(issuerState, { scope: undefined }),
      'invalid_request',
      /^authorization_details or scope is required: name the credentials to issue$/,
    );
  });

  it("refuses an unknown issuer_state, another tenant's, and an offer that expired or was redeemed", async () => {
    expectError(await par('unknown'), 'invalid_request', /^issuer_state names no credential offer of this issuer$/);
    const theirs = await offer(['pid'], other);
    expectError(await par(theirs.issuerState), 'invalid_request', /^issuer_state names no credential offer of this issuer$/);
    expect((await par(theirs.issuerState, {}, {}, 'other')).status).toBe(201);
    const lapsed = await offer();
    await svc.db.updateTable('sessions').set({ status: 'expired' }).where('id', '=', lapsed.session).execute();
    expectError(await par(lapsed.issuerState), 'invalid_request', /^the credential offer has expired$/);
    const redeemed = await offer();
    const { code, verifier } = await codeOf(redeemed.issuerState);
    expect((await redeemCode(svc, 'acme', code, verifier)).status).toBe(200);
    expectError(await par(redeemed.issuerState), 'invalid_request', /^the credential offer has already been redeemed$/);
  });

  it('authorization_details: each names a configuration of the offer, at this issuer', async () => {
    const { issuerState } = await offer(['pid']);
    const details = (value: unknown) => par(issuerState, { scope: undefined, authorization_details: JSON.stringify(value) });
    const detail = (extra: Record<string, unknown> = {}) => [{ type: 'openid_credential', credential_configuration_id: 'pid', ...extra }];
    expectError(
      await par(issuerState, { scope: undefined, authorization_details: '[{' }),
      'invalid_authorization_details',
      /^authorization_details must be a JSON array$/,
    );
    expectError(
      await par(issuerState, { scope: undefined, authorization_details: '[{"__proto__":{"x":1}}]' }),
      'invalid_authorization_details',
      /^authorization_details.*__proto__/,
    );
    expectError(
      await details({ type: 'openid_credential' }),
      'invalid_authorization_details',
      /^authorization_details must be an array of \{type: openid_credential/,
    );
    expectError(
      await details([{ type: 'openid_credential', credential_configuration_id: 'email' }]),
      'invalid_authorization_details',
      /^'email' is not a credential configuration of this credential offer$/,
    );
    expectError(
      await details(detail({ locations: ['https://elsewhere.example'] })),
      'invalid_authorization_details',
      /^locations must name this credential issuer$/,
    );
    expectError(
      await details(detail({ locations: issuerId() })),
      'invalid_authorization_details',
      /^locations must name this credential issuer$/,
    );
    expect((await details(detail({ locations: ['https://elsewhere.example', issuerId()] }))).status).toBe(201);
  });

  it('scope: values that name no configuration of the offer are ignored; none at all is invalid_scope', async () => {
    const { issuerState } = await offer(['pid']);
    expectError(
      await par(issuerState, { scope: 'openid email_scope' }),
      'invalid_scope',
      /^no scope value names a credential configuration of this offer$/,
    );
    expect((await par(issuerState, { scope: '  openid   pid_scope ' })).status).toBe(201);
  });

  it('authorizes what the details and the scope name together, once each; the token response names those by details', async () => {
    const created = await offer();
    const detail = JSON.stringify([
      { type: 'openid_credential', credential_configuration_id: 'pid' },
      { type: 'openid_credential', credential_configuration_id: 'pid' },
    ]);
    const { code, verifier } = await codeOf(created.issuerState, { scope: 'email_scope pid_scope', authorization_details: detail });
    const issued = await redeemCode(svc, 'acme', code, verifier);
    expect(issued.status, issued.text).toBe(200);
    expect(issued.body.authorization_details.map((d: { credential_configuration_id: string }) => d.credential_configuration_id)).toEqual([
      'pid',
    ]);
    const stored = await publicOf(created.session);
    expect(stored.authorized).toEqual(['pid', 'email']);
    expect(stored.authorizedByDetails).toEqual(['pid']);
    const scoped = await offer();
    const byScope = await codeOf(scoped.issuerState, { scope: 'email_scope' });
    expect((await redeemCode(svc, 'acme', byScope.code, byScope.verifier)).body.authorization_details).toBeUndefined();
    expect((await publicOf(scoped.session)).authorized).toEqual(['email']);
  });
});

describe('what the request binds the code to', () => {
  it('dpop_jkt without a proof binds the code to that key; with a proof it must be its key', async () => {
    const key = await holderKey();
    const jkt = ecThumbprint(key.publicJwk as Record<string, unknown>);
    const { issuerState } = await offer();
    const bound = await codeOf(issuerState, { dpop_jkt: jkt });
    expectError(await redeemCode(svc, 'acme', bound.code, bound.verifier), 'invalid_grant', /bound to a DPoP key/);
    const proof = async () => ({ dpop: await dpopProof(key, `${issuerId()}/par`) });
    expectError(
      await par(issuerState, { dpop_jkt: 'another' }, await proof()),
      'invalid_dpop_proof',
      /^dpop_jkt does not match the DPoP proof key$/,
    );
    expect((await par(issuerState, { dpop_jkt: jkt }, await proof())).status).toBe(201);
    const proven = await codeOf(issuerState, {}, await proof());
    expectError(await redeemCode(svc, 'acme', proven.code, proven.verifier), 'invalid_grant', /bound to a DPoP key/);
  });

  it('a client attestation binds the code to that wallet instance', async () => {
    const provider = await walletProvider();
    const settings = await svc.raw('PUT', '/api/issuer/config', {
      token: acme,
      body: { walletProviders: [{ name: provider.name, certificates: [provider.caPem] }] },
    });
    expect(settings.status, settings.text).toBe(200);
    const instance = await walletInstance();
    const { code, verifier } = await codeOf(
      (await offer()).issuerState,
      {},
      await attestationHeaders(provider, instance, 'raw-wallet', issuerId()),
    );
    expectError(
      await redeemCode(svc, 'acme', code, verifier),
      'invalid_grant',
      /^this authorization code was issued to an attested wallet instance: send its client attestation$/,
    );
  });
});

describe('the request_uri', () => {
  it('lives 60 s, or until the offer ends if that is sooner', async () => {
    const created = await offer();
    const pushed = await par(created.issuerState);
    expect(pushed.body).toEqual({
      request_uri: expect.stringMatching(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/),
      expires_in: 60,
    });
    await svc.db
      .updateTable('sessions')
      .set({ expires_at: new Date(Date.now() + 20_000).toISOString() })
      .where('id', '=', created.session)
      .execute();
    const shorter = await par(created.issuerState);
    expect(shorter.body.expires_in).toBeGreaterThanOrEqual(18);
    expect(shorter.body.expires_in).toBeLessThanOrEqual(20);
  });

  it('is stored with the offer while it is active or fetched, and logged with its client', async () => {
    const created = await offer();
    await svc.db.updateTable('sessions').set({ status: 'fetched' }).where('id', '=', created.session).execute();
    const pushed = await par(created.issuerState);
    expect(pushed.status, pushed.text).toBe(201);
    expect((await par(created.issuerState)).status).toBe(201);
    const logs = await svc.db.selectFrom('session_logs').select(['message', 'details']).where('session_id', '=', created.session).execute();
    const pushes = logs.filter((l) => l.message === 'authorization request pushed');
    expect(pushes).toHaveLength(2);
    expect(JSON.parse(String(pushes[0]?.details))).toEqual({ clientId: 'raw-wallet' });
    // No interactive authorization ran for these requests, so none is said to have ended.
    expect(logs.map((l) => l.message)).not.toContain('interactive authorization ended: a new authorization request was pushed');
  });

  it('a new request for the offer replaces the one before: its request_uri and its code stop working', async () => {
    const { issuerState } = await offer();
    const first = await par(issuerState);
    const earlier = await codeOf(issuerState);
    await par(issuerState);
    expectError(await authorizeJson(first.body.request_uri), 'invalid_request_uri', /request_uri is unknown, expired or already used/);
    expectError(await redeemCode(svc, 'acme', earlier.code, earlier.verifier), 'invalid_grant', /unknown or expired/);
  });
});

/** The authorization endpoint's 400 answer as a reply with a JSON body. */
async function authorizeJson(requestUri: string, clientId = 'raw-wallet', tenant = 'acme') {
  const answer = await authorize(requestUri, clientId, tenant);
  expect(answer.location).toBeUndefined();
  return { status: answer.status, body: JSON.parse(answer.body), text: answer.body };
}

describe('the authorization endpoint', () => {
  it('takes only a pushed request: no request_uri, or one without the urn prefix, is a 400', async () => {
    const none = await authorizeRequest(svc, 'acme', { client_id: 'raw-wallet', redirect_uri: WALLET_REDIRECT_URI });
    expect(none.status).toBe(400);
    expect(JSON.parse(none.body).error_description).toBe('request_uri is required: this server accepts only pushed authorization requests');
    const pushed = await par((await offer()).issuerState);
    const secret = (pushed.body.request_uri as string).split(':').at(-1) as string;
    expectError(await authorizeJson(secret), 'invalid_request_uri', /request_uri is unknown, expired or already used/);
    expect((await authorize(pushed.body.request_uri)).status).toBe(302);
  });

  it("another tenant's attempt leaves the request_uri unspent; another client's spends it without a redirect", async () => {
    const pushed = await par((await offer()).issuerState);
    expectError(
      await authorizeJson(pushed.body.request_uri, 'raw-wallet', 'other'),
      'invalid_request_uri',
      /unknown, expired or already used/,
    );
    const answer = await authorize(pushed.body.request_uri);
    expect(answer.status).toBe(302);
    const again = await par((await offer()).issuerState);
    expectError(
      await authorizeJson(again.body.request_uri, 'someone-else'),
      'invalid_request',
      /^client_id does not match the pushed authorization request$/,
    );
    expectError(await authorizeJson(again.body.request_uri), 'invalid_request_uri', /already used/);
  });

  it('redirects with code and iss, and state only when the request had one; the session logs the code', async () => {
    const created = await offer();
    const withState = await par(created.issuerState);
    const answer = await authorize(withState.body.request_uri);
    const logs = await svc.db.selectFrom('session_logs').select('message').where('session_id', '=', created.session).execute();
    expect(logs.map((l) => l.message)).toContain('authorization code issued');
    expect(`${answer.location?.origin}${answer.location?.pathname}`).toBe(WALLET_REDIRECT_URI);
    expect([...(answer.location?.searchParams.keys() ?? [])].sort()).toEqual(['code', 'iss', 'state']);
    expect(answer.location?.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(answer.location?.searchParams.get('iss')).toBe(issuerId());
    const stateless = await par((await offer()).issuerState, { state: undefined });
    expect([...((await authorize(stateless.body.request_uri)).location?.searchParams.keys() ?? [])].sort()).toEqual(['code', 'iss']);
  });

  it('once the request_uri checks out, a refusal goes to the redirect_uri with state and iss (an offer that ended meanwhile)', async () => {
    const created = await offer();
    const pushed = await par(created.issuerState);
    await svc.db.updateTable('sessions').set({ status: 'failed' }).where('id', '=', created.session).execute();
    const answer = await authorize(pushed.body.request_uri);
    expect(answer.status).toBe(302);
    expect(`${answer.location?.origin}${answer.location?.pathname}`).toBe(WALLET_REDIRECT_URI);
    expect(Object.fromEntries(answer.location?.searchParams ?? [])).toEqual({
      error: 'invalid_request',
      error_description: 'the credential offer is no longer valid',
      state: 'xyz',
      iss: issuerId(),
    });
  });

  it('a code lives 60 s and is spent by its redemption', async () => {
    const created = await offer();
    const before = Date.now();
    const { code, verifier } = await codeOf(created.issuerState);
    const handle = await svc.db
      .selectFrom('session_handles')
      .select('expires_at')
      .where('session_id', '=', created.session)
      .where('purpose', '=', 'authorization_code')
      .executeTakeFirstOrThrow();
    const expiresAt = Date.parse(String(handle.expires_at));
    expect(expiresAt).toBeGreaterThanOrEqual(before + 59_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 60_000);
    expect((await redeemCode(svc, 'acme', code, verifier)).status).toBe(200);
  });

  it('while the built-in server is disabled, neither PAR nor authorization takes anything', async () => {
    const closed = (await svc.tenant('closed')).token;
    await svc.raw('POST', '/api/issuer/credentials', { token: closed, body: configuration('pid') });
    const reply = await svc.raw('POST', '/api/issuer/offer', {
      token: closed,
      body: { response_type: 'uri', flow: 'authorization_code', credentialConfigurationIds: ['pid'], credentialClaims: { pid: CLAIMS } },
    });
    const issuerState = reply.body.credentialOffer.grants.authorization_code.issuer_state as string;
    const pushed = await par(issuerState, { scope: 'pid_scope' }, {}, 'closed');
    expect(pushed.status, pushed.text).toBe(201);
    const disabled = await svc.raw('PUT', '/api/issuer/config', { token: closed, body: { builtinAuthorizationServerEnabled: false } });
    expect(disabled.status, disabled.text).toBe(200);
    expectError(await par(issuerState, {}, {}, 'closed'), 'invalid_request', /built-in authorization server/);
    expectError(await authorizeJson(pushed.body.request_uri, 'raw-wallet', 'closed'), 'invalid_request', /built-in authorization server/);
  });
});

describe('the authorization code and refresh token grants', () => {
  const redeemCodeWith = (form: Record<string, string>, dpop?: string) =>
    svc.raw('POST', '/issuers/acme/token', { form, ...(dpop && { headers: { dpop } }) });
  const refresh = (refreshToken: string, extra: Record<string, string> = {}, dpop?: string) =>
    svc.raw('POST', '/issuers/acme/token', {
      form: { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra },
      ...(dpop && { headers: { dpop } }),
    });
  const logsOf = async (session: string) =>
    (await svc.db.selectFrom('session_logs').select('message').where('session_id', '=', session).execute()).map((l) => l.message);
  async function tokensOf() {
    const created = await offer();
    const { code, verifier } = await codeOf(created.issuerState);
    const issued = await redeemCode(svc, 'acme', code, verifier);
    expect(issued.status, issued.text).toBe(200);
    return { ...created, code, verifier, refreshToken: issued.body.refresh_token as string };
  }

  it('an unknown code and a replayed one say so; a redemption leaves the offer fetched and consumed, and is logged', async () => {
    expectError(
      await redeemCode(svc, 'acme', 'unknown-code', 'v'.repeat(43)),
      'invalid_grant',
      /^the authorization code is unknown or expired$/,
    );
    const { session, code, verifier } = await tokensOf();
    const stored = await svc.db.selectFrom('sessions').select(['status', 'consumed']).where('id', '=', session).executeTakeFirstOrThrow();
    expect(stored.status).toBe('fetched');
    expect(stored.consumed).toBeTruthy();
    expect(await logsOf(session)).toContain('authorization code redeemed');
    expectError(
      await redeemCode(svc, 'acme', code, verifier),
      'invalid_grant',
      /^the authorization code was already used; the tokens issued for it are revoked$/,
    );
  });

  it('each check of the code grant names its rule', async () => {
    const key = await holderKey();
    const created = await offer();
    const { code, verifier } = await codeOf(created.issuerState);
    const form = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: WALLET_REDIRECT_URI };
    const token = (extra: Record<string, string>, dpop?: string) =>
      svc.raw('POST', '/issuers/acme/token', { form: { ...form, ...extra }, ...(dpop && { headers: { dpop } }) });
    expectError(await token({}), 'invalid_request', /^client_id is required$/);
    expectError(await token({ client_id: 'someone-else' }), 'invalid_grant', /^the authorization code was issued to another client$/);
    const second = await codeOf(created.issuerState);
    expectError(
      await redeemCodeWith({
        ...form,
        code: second.code,
        code_verifier: second.verifier,
        client_id: 'raw-wallet',
        redirect_uri: `${WALLET_REDIRECT_URI}x`,
      }),
      'invalid_grant',
      /^redirect_uri does not match the authorization request$/,
    );
    const bound = await codeOf(created.issuerState, {}, { dpop: await dpopProof(key, `${issuerId()}/par`) });
    const stranger = await holderKey();
    expectError(
      await redeemCodeWith(
        { ...form, code: bound.code, code_verifier: bound.verifier, client_id: 'raw-wallet' },
        await dpopProof(stranger, `${issuerId()}/token`),
      ),
      'invalid_grant',
      /^the DPoP proof key is not the one the authorization request was bound to$/,
    );
  });

  it('an offer that ended after its code was issued: the code redeems nothing', async () => {
    const created = await offer();
    const { code, verifier } = await codeOf(created.issuerState);
    await svc.db.updateTable('sessions').set({ status: 'failed' }).where('id', '=', created.session).execute();
    expectError(await redeemCode(svc, 'acme', code, verifier), 'invalid_grant', /^the credential offer is no longer valid$/);
  });

  it('redeeming the code of an offer leaves its expiry as it was, whatever the lifetime setting says now', async () => {
    const created = await offer();
    const { code, verifier } = await codeOf(created.issuerState);
    const expiry = async () =>
      String(
        (await svc.db.selectFrom('sessions').select('expires_at').where('id', '=', created.session).executeTakeFirstOrThrow()).expires_at,
      );
    const before = await expiry();
    const changed = await svc.raw('PUT', '/api/issuer/config', { token: acme, body: { offerLifetimeSeconds: 600 } });
    expect(changed.status, changed.text).toBe(200);
    try {
      expect((await redeemCode(svc, 'acme', code, verifier)).status).toBe(200);
      expect(Date.parse(await expiry())).toBe(Date.parse(before));
    } finally {
      await svc.raw('PUT', '/api/issuer/config', { token: acme, body: { offerLifetimeSeconds: 86400 } });
    }
  });

  it('an unknown refresh token, and a replayed one, say so; the replay revokes the session with its reason', async () => {
    expectError(await refresh('unknown-token'), 'invalid_grant', /^the refresh token is unknown or expired$/);
    const { session, refreshToken } = await tokensOf();
    expect((await refresh(refreshToken)).status).toBe(200);
    expectError(
      await refresh(refreshToken),
      'invalid_grant',
      /^the refresh token was already used; every token of this session is revoked$/,
    );
    const stored = await svc.db
      .selectFrom('sessions')
      .select(['status', 'error_reason'])
      .where('id', '=', session)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ status: 'failed', error_reason: 'a refresh token was used twice' });
  });

  it('counts each refresh in the session; a Bearer refresh binds nothing', async () => {
    const { session, refreshToken } = await tokensOf();
    const first = await refresh(refreshToken);
    const second = await refresh(first.body.refresh_token);
    expect(second.status, second.text).toBe(200);
    expect((await publicOf(session)).refreshes).toBe(2);
    expect(await logsOf(session)).not.toContain('refresh tokens bound to the DPoP key of the refresh request');
  });

  it('a session that ended is refused before its DPoP binding is looked at', async () => {
    const key = await holderKey();
    const { session, refreshToken } = await tokensOf();
    const bound = await refresh(refreshToken, {}, await dpopProof(key, `${issuerId()}/token`));
    expect(bound.status, bound.text).toBe(200);
    await svc.db.updateTable('sessions').set({ status: 'failed' }).where('id', '=', session).execute();
    expectError(await refresh(bound.body.refresh_token), 'invalid_grant', /^the issuance session of this refresh token has ended$/);
  });

  it('a refresh naming another client_id is refused and spends nothing; one of a session that ended is refused', async () => {
    const { session, refreshToken } = await tokensOf();
    expectError(
      await refresh(refreshToken, { client_id: 'someone-else' }),
      'invalid_grant',
      /^the refresh token was issued to another client$/,
    );
    const refreshed = await refresh(refreshToken, { client_id: 'raw-wallet' });
    expect(refreshed.status, refreshed.text).toBe(200);
    await svc.db.updateTable('sessions').set({ status: 'failed' }).where('id', '=', session).execute();
    expectError(await refresh(refreshed.body.refresh_token), 'invalid_grant', /^the issuance session of this refresh token has ended$/);
  });

  it('a Bearer refresh token is bound by the first DPoP proof that refreshes it', async () => {
    const key = await holderKey();
    const { session, refreshToken } = await tokensOf();
    const proof = () => dpopProof(key, `${issuerId()}/token`);
    const bound = await refresh(refreshToken, {}, await proof());
    expect(bound.status, bound.text).toBe(200);
    expect(bound.body.token_type).toBe('DPoP');
    expect(await logsOf(session)).toContain('refresh tokens bound to the DPoP key of the refresh request');
    expectError(await refresh(bound.body.refresh_token), 'invalid_grant', /^the refresh token is bound to another DPoP key$/);
    expect((await refresh(bound.body.refresh_token, {}, await proof())).status).toBe(200);
  });
});
