// Each refusal of a DPoP proof (RFC 9449 section 4.3), at every endpoint that checks one, through the
// real server: every test here fails when its one check is removed from src/issuance/access/dpop.ts
// (or from where an endpoint sends the proof's jti along with its own read), and shows that a refused
// proof spent nothing: the same code, refresh token or access token still works with a good proof.
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { importJWK, type JWK, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DpopNonces } from '../../src/issuance/access/dpop.js';
import { authorizeRequest, pushAuthorizationRequest } from '../support/authorization.js';
import type { Reply } from '../support/http.js';
import { startService, type TestService } from '../support/service.js';
import { dpopProof, type HolderKey, holderKey, keyProof, pkce, WALLET_REDIRECT_URI } from '../support/wallet.js';

let svc: TestService;
let acme: string;
let strict: string;

const PID = {
  id: 'pid',
  config: { format: 'dc+sd-jwt', scope: 'pid_scope' },
  vct: 'urn:example:pid',
  keyBinding: true,
  fields: [{ path: ['given_name'], type: 'string', mandatory: true }],
};
const CLAIMS = { pid: { type: 'inline', claims: { given_name: 'Erika' } } };
const PRE_AUTHORIZED = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
// dpop.ts: a proof's iat may be up to 300 s old and up to 60 s ahead; a server nonce window is 300 s.
const MAX_AGE_SECONDS = 300;
const CLOCK_SKEW_SECONDS = 60;
const NONCE_WINDOW_MS = 300_000;

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  strict = (await svc.tenant('strict')).token;
  for (const token of [acme, strict]) {
    const created = await svc.raw('POST', '/api/issuer/credentials', { token, body: PID });
    expect(created.status, created.text).toBe(201);
  }
  const nonces = await svc.raw('PUT', '/api/issuer/config', { token: strict, body: { dpopNonceRequired: true } });
  expect(nonces.status, nonces.text).toBe(200);
});
afterAll(() => svc.stop());
afterEach(() => vi.restoreAllMocks());

const url = (tenant: string, path: string) => `${svc.url}/issuers/${tenant}/${path}`;
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A DPoP proof with any header and payload: `header` and `claims` add to or override a good proof's. */
async function proofWith(
  key: HolderKey,
  target: string,
  options: { header?: Record<string, unknown>; claims?: Record<string, unknown>; drop?: string[] } = {},
) {
  const payload: Record<string, unknown> = { htm: 'POST', htu: target, iat: nowSeconds(), jti: randomUUID(), ...options.claims };
  for (const name of options.drop ?? []) delete payload[name];
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.publicJwk, ...options.header })
    .sign(await importJWK(key.privateJwk as JWK, 'ES256'));
}

async function offer(flow: 'authorization_code' | 'pre_authorized_code', token = acme, extra: Record<string, unknown> = {}) {
  const reply = await svc.raw('POST', '/api/issuer/offer', {
    token,
    body: { response_type: 'uri', flow, credentialConfigurationIds: ['pid'], credentialClaims: CLAIMS, ...extra },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body.credentialOffer.grants;
}

const par = async (dpop: string | undefined, tenant = 'acme', challenge = pkce().challenge) => {
  const issuerState = (await offer('authorization_code', tenant === 'acme' ? acme : strict)).authorization_code.issuer_state;
  return pushAuthorizationRequest(svc, tenant, issuerState, { code_challenge: challenge }, dpop ? { dpop } : {});
};

/** PAR with a proof of `key`, and the authorization: a code bound to `key` and its PKCE verifier. */
async function boundCode(key: HolderKey) {
  const { verifier, challenge } = pkce();
  const pushed = await par(await dpopProof(key, url('acme', 'par')), 'acme', challenge);
  expect(pushed.status, pushed.text).toBe(201);
  const answer = await authorizeRequest(svc, 'acme', { client_id: 'raw-wallet', request_uri: pushed.body.request_uri });
  expect(answer.status, answer.body).toBe(302);
  return { code: answer.location?.searchParams.get('code') as string, verifier };
}

const token = (form: Record<string, string>, dpop: string) => svc.raw('POST', '/issuers/acme/token', { form, headers: { dpop } });
const codeGrant = ({ code, verifier }: { code: string; verifier: string }) => ({
  grant_type: 'authorization_code',
  code,
  code_verifier: verifier,
  redirect_uri: WALLET_REDIRECT_URI,
  client_id: 'raw-wallet',
});
const refreshGrant = (refreshToken: string) => ({ grant_type: 'refresh_token', refresh_token: refreshToken });
/** A pre-authorized code grant; with `txCode`, of an offer that asks for it (redeemed in steps, not in one statement). */
const preAuthorizedGrant = async (txCode?: string) => ({
  grant_type: PRE_AUTHORIZED,
  'pre-authorized_code': (await offer('pre_authorized_code', acme, txCode ? { tx_code: txCode } : {}))[PRE_AUTHORIZED][
    'pre-authorized_code'
  ] as string,
  ...(txCode && { tx_code: txCode }),
});

const expectRefused = (reply: Reply, error = 'invalid_dpop_proof', status = 400) => {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.body.error, reply.text).toBe(error);
};

describe('the proof itself (at PAR, where nothing else is checked before it)', () => {
  const refusals: [string, (key: HolderKey) => Promise<string>][] = [
    ['htm another method', (key) => proofWith(key, url('acme', 'par'), { claims: { htm: 'GET' } })],
    ['htu another endpoint', (key) => proofWith(key, url('acme', 'token'))],
    ['htu another tenant', (key) => proofWith(key, url('strict', 'par'))],
    ['iat missing', (key) => proofWith(key, url('acme', 'par'), { drop: ['iat'] })],
    ['iat not a number', (key) => proofWith(key, url('acme', 'par'), { claims: { iat: String(nowSeconds()) } })],
    ['iat just too old', (key) => proofWith(key, url('acme', 'par'), { claims: { iat: nowSeconds() - MAX_AGE_SECONDS - 10 } })],
    ['iat just too far ahead', (key) => proofWith(key, url('acme', 'par'), { claims: { iat: nowSeconds() + CLOCK_SKEW_SECONDS + 10 } })],
    ['exp passed', (key) => proofWith(key, url('acme', 'par'), { claims: { exp: nowSeconds() - CLOCK_SKEW_SECONDS - 10 } })],
    ['typ JWT', (key) => proofWith(key, url('acme', 'par'), { header: { typ: 'JWT' } })],
    ['typ missing', (key) => proofWith(key, url('acme', 'par'), { header: { typ: undefined } })],
    ['jwk with its private member d', (key) => proofWith(key, url('acme', 'par'), { header: { jwk: key.privateJwk } })],
    ['jti missing', (key) => proofWith(key, url('acme', 'par'), { drop: ['jti'] })],
    ['jti empty', (key) => proofWith(key, url('acme', 'par'), { claims: { jti: '' } })],
    ['jti not a string', (key) => proofWith(key, url('acme', 'par'), { claims: { jti: 7 } })],
  ];

  it.each(refusals)('refuses a proof with %s: invalid_dpop_proof', async (_name, make) => {
    const refused = await par(await make(await holderKey()));
    expectRefused(refused);
    expect(refused.body.request_uri).toBeUndefined();
  });

  it('accepts iat just inside both edges of its window', async () => {
    const key = await holderKey();
    const oldest = await par(await proofWith(key, url('acme', 'par'), { claims: { iat: nowSeconds() - MAX_AGE_SECONDS + 10 } }));
    expect(oldest.status, oldest.text).toBe(201);
    const newest = await par(await proofWith(key, url('acme', 'par'), { claims: { iat: nowSeconds() + CLOCK_SKEW_SECONDS - 10 } }));
    expect(newest.status, newest.text).toBe(201);
  });

  it('compares htu with the URL without its query (RFC 9449 section 4.3)', async () => {
    const key = await holderKey();
    const issuerState = (await offer('authorization_code')).authorization_code.issuer_state;
    const pushTo = async (htu: string) =>
      svc.raw('POST', '/issuers/acme/par?trace=1', {
        form: {
          client_id: 'raw-wallet',
          response_type: 'code',
          redirect_uri: WALLET_REDIRECT_URI,
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
          issuer_state: issuerState,
          scope: 'pid_scope',
        },
        headers: { dpop: await dpopProof(key, htu) },
      });
    expectRefused(await pushTo(`${url('acme', 'par')}?trace=1`));
    const pushed = await pushTo(url('acme', 'par'));
    expect(pushed.status, pushed.text).toBe(201);
  });

  it('refuses the replay of a proof at PAR', async () => {
    const proof = await dpopProof(await holderKey(), url('acme', 'par'));
    expect((await par(proof)).status).toBe(201);
    expectRefused(await par(proof));
  });
});

describe('replays at the token endpoint, refused before the grant is spent', () => {
  it('authorization_code: a proof used for one code is refused for another, which still redeems with a fresh proof', async () => {
    const key = await holderKey();
    const [first, second] = [await boundCode(key), await boundCode(key)];
    const proof = await dpopProof(key, url('acme', 'token'));
    expect((await token(codeGrant(first), proof)).status).toBe(200);
    expectRefused(await token(codeGrant(second), proof));
    const fresh = await token(codeGrant(second), await dpopProof(key, url('acme', 'token')));
    expect(fresh.status, fresh.text).toBe(200);
    expect(fresh.body.token_type).toBe('DPoP');
  });

  it('authorization_code: a bad proof leaves the code unspent', async () => {
    const key = await holderKey();
    const code = await boundCode(key);
    expectRefused(await token(codeGrant(code), await proofWith(key, url('acme', 'token'), { claims: { htm: 'PUT' } })));
    expect((await token(codeGrant(code), await dpopProof(key, url('acme', 'token')))).status).toBe(200);
  });

  it('refresh_token: a proof used for one refresh is refused for the next, which still refreshes with a fresh proof', async () => {
    const key = await holderKey();
    const issued = await token(codeGrant(await boundCode(key)), await dpopProof(key, url('acme', 'token')));
    expect(issued.status, issued.text).toBe(200);
    const proof = await dpopProof(key, url('acme', 'token'));
    const first = await token(refreshGrant(issued.body.refresh_token), proof);
    expect(first.status, first.text).toBe(200);
    expectRefused(await token(refreshGrant(first.body.refresh_token), proof));
    const fresh = await token(refreshGrant(first.body.refresh_token), await dpopProof(key, url('acme', 'token')));
    expect(fresh.status, fresh.text).toBe(200);
    expect(fresh.body.token_type).toBe('DPoP');
  });

  it.each([
    ['without', undefined],
    ['with', '493817'],
  ])(
    'pre-authorized_code %s a transaction code: a proof used for one code is refused for another, which still redeems with a fresh proof',
    async (_name, txCode) => {
      const key = await holderKey();
      const proof = await dpopProof(key, url('acme', 'token'));
      expect((await token(await preAuthorizedGrant(txCode), proof)).status).toBe(200);
      const second = await preAuthorizedGrant(txCode);
      expectRefused(await token(second, proof));
      const fresh = await token(second, await dpopProof(key, url('acme', 'token')));
      expect(fresh.status, fresh.text).toBe(200);
    },
  );

  it('one proof sent in parallel for several pre-authorized codes is accepted exactly once', async () => {
    const proof = await dpopProof(await holderKey(), url('acme', 'token'));
    const grants = await Promise.all(Array.from({ length: 6 }, () => preAuthorizedGrant()));
    const replies = await Promise.all(grants.map((grant) => token(grant, proof)));
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1);
    for (const reply of replies.filter((reply) => reply.status !== 200)) expectRefused(reply);
  });
});

describe('the credential endpoint', () => {
  /** A DPoP-bound access token of `key` (pre-authorized) and a credential request of one key proof. */
  async function boundAccess(key: HolderKey) {
    const issued = await token(await preAuthorizedGrant(), await dpopProof(key, url('acme', 'token')));
    expect(issued.status, issued.text).toBe(200);
    return issued.body.access_token as string;
  }
  const credentialBody = async (key: HolderKey) => {
    const { c_nonce } = (await svc.raw('POST', '/issuers/acme/nonce')).body;
    return { credential_configuration_id: 'pid', proofs: { jwt: [await keyProof(key, url('acme', '').slice(0, -1), c_nonce)] } };
  };
  const credential = async (accessToken: string, dpop: string, key: HolderKey) =>
    svc.raw('POST', '/issuers/acme/credential', {
      headers: { authorization: `DPoP ${accessToken}`, dpop },
      body: await credentialBody(key),
    });

  it('refuses a proof whose ath is another token, or missing; the token still works with a good proof', async () => {
    const key = await holderKey();
    const accessToken = await boundAccess(key);
    const otherToken = await boundAccess(key);
    expectRefused(await credential(accessToken, await dpopProof(key, url('acme', 'credential'), { accessToken: otherToken }), key));
    expectRefused(await credential(accessToken, await dpopProof(key, url('acme', 'credential')), key));
    const good = await credential(accessToken, await dpopProof(key, url('acme', 'credential'), { accessToken }), key);
    expect(good.status, good.text).toBe(200);
  });

  it("refuses a proof by another key than the token's cnf.jkt: 401 invalid_token with a DPoP challenge", async () => {
    const key = await holderKey();
    const stranger = await holderKey();
    const accessToken = await boundAccess(key);
    const refused = await credential(accessToken, await dpopProof(stranger, url('acme', 'credential'), { accessToken }), key);
    expectRefused(refused, 'invalid_token', 401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_token"/);
  });

  it('refuses the replay of a proof with the same token', async () => {
    const key = await holderKey();
    const accessToken = await boundAccess(key);
    const proof = await dpopProof(key, url('acme', 'credential'), { accessToken });
    expect((await credential(accessToken, proof, key)).status).toBe(200);
    expectRefused(await credential(accessToken, proof, key));
  });
});

describe('server nonces (dpopNonceRequired)', () => {
  const nonces = () => new DpopNonces(svc.shared.env.MASTER_SECRET as string, svc.clock);
  /** The nonce the server made `windowsAgo` windows before this one, for `tenant`. */
  const nonceOf = (tenant: string, windowsAgo: number) => {
    const realNow = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(realNow - windowsAgo * NONCE_WINDOW_MS);
    const nonce = nonces().issue(tenant);
    vi.restoreAllMocks();
    return nonce;
  };
  const parWithNonce = async (nonce: string | undefined) =>
    par(await proofWith(await holderKey(), url('strict', 'par'), { claims: nonce === undefined ? {} : { nonce } }), 'strict');

  it('answers a proof without a nonce use_dpop_nonce with a DPoP-Nonce header that is then accepted', async () => {
    const missing = await parWithNonce(undefined);
    expectRefused(missing, 'use_dpop_nonce');
    const nonce = missing.headers.get('dpop-nonce') as string;
    expect(nonce).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);
    expect((await parWithNonce(nonce)).status).toBe(201);
  });

  it("accepts this window's and the previous window's nonce, refuses one two windows old", async () => {
    expect((await parWithNonce(nonceOf('strict', 0))).status).toBe(201);
    expect((await parWithNonce(nonceOf('strict', 1))).status).toBe(201);
    expectRefused(await parWithNonce(nonceOf('strict', 2)), 'use_dpop_nonce');
  });

  it("refuses another tenant's nonce, a number and a tampered nonce", async () => {
    expectRefused(await parWithNonce(nonceOf('acme', 0)), 'use_dpop_nonce');
    const good = nonceOf('strict', 0);
    expectRefused(await parWithNonce(`${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}`), 'use_dpop_nonce');
    const numeric = await par(await proofWith(await holderKey(), url('strict', 'par'), { claims: { nonce: 1 } }), 'strict');
    expectRefused(numeric, 'use_dpop_nonce');
  });

  it('a proof refused for its nonce leaves its jti unremembered: the wallet may retry with the same jti', async () => {
    const key = await holderKey();
    const jti = randomUUID();
    const first = await par(await proofWith(key, url('strict', 'par'), { claims: { jti } }), 'strict');
    expectRefused(first, 'use_dpop_nonce');
    const nonce = first.headers.get('dpop-nonce') as string;
    const retried = await par(await proofWith(key, url('strict', 'par'), { claims: { jti, nonce } }), 'strict');
    expect(retried.status, retried.text).toBe(201);
  });
});
