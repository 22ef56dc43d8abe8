// Each rule of a DPoP proof (RFC 9449 section 4.3) and of the server nonces (section 8), checked on
// DpopProofs and DpopNonces themselves: the form, key and signature, htm and htu, the iat window at
// both edges, jti, ath, the server nonce's windows and tenant, and the replay rule (here with an
// in-memory jti store; the database's statement is the invariants' subject). Every endpoint that
// checks a proof is tested through the server in dpop-refusals.test.ts.

import { createHash, createPrivateKey, randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type DpopCheck, DpopNonces, DpopProofs } from '../../src/issuance/access/dpop.js';
import type { NonceStore } from '../../src/issuance/nonce/store.js';
import { ecThumbprint } from '../../src/platform/crypto/ec-jws.js';
import { TestClock } from '../support/clock.js';
import { type HolderKey, holderKey } from '../support/wallet.js';
import { signedCompact } from '../support/wallet-provider.js';

const URL_ = 'https://issuer.example/issuers/acme/token';
const SECRET = 'a master secret of the test, long enough';
// dpop.ts: iat up to 300 s old and 60 s ahead; a jti is remembered for both; nonce windows of 300 s.
const MAX_AGE = 300;
const SKEW = 60;
const WINDOW_MS = 300_000;
const now = () => Math.floor(Date.now() / 1000);

let key: HolderKey;
let stranger: HolderKey;
beforeAll(async () => {
  [key, stranger] = await Promise.all([holderKey(), holderKey()]);
});
afterEach(() => vi.restoreAllMocks());

/** The jti store of DpopProofs in memory: `remembering` adds a row the first time only, as its INSERT does. */
function memoryReplays() {
  const seen: { tenantId: string; purpose: string; value: string; lifetimeSeconds: number }[] = [];
  const replays = {
    seen,
    remembering: (tenantId: string, purpose: string, value: string, lifetimeSeconds: number) => ({
      executeTakeFirst: async () => {
        const known = seen.some((s) => s.tenantId === tenantId && s.purpose === purpose && s.value === value);
        if (!known) seen.push({ tenantId, purpose, value, lifetimeSeconds });
        return { numInsertedOrUpdatedRows: known ? 0n : 1n };
      },
    }),
  };
  return replays;
}
function setup() {
  const replays = memoryReplays();
  const nonces = new DpopNonces(SECRET, new TestClock());
  return { replays, nonces, proofs: new DpopProofs(replays as unknown as NonceStore, nonces, new TestClock()) };
}

const drop = (members: Record<string, unknown>) => Object.fromEntries(Object.entries(members).filter(([, v]) => v !== undefined));
/** A proof signed by `signer` (the test key by default), its header and claims changed (undefined drops a member). */
const proof = (header: Record<string, unknown> = {}, claims: Record<string, unknown> = {}, signer = key) =>
  signedCompact(
    createPrivateKey({ key: signer.privateJwk as never, format: 'jwk' }),
    drop({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.publicJwk, ...header }),
    drop({ htm: 'POST', htu: URL_, iat: now(), jti: randomUUID(), ...claims }),
  );
const CHECK: DpopCheck = { tenantId: 'acme', method: 'POST', url: URL_, settings: { dpopNonceRequired: false } };

async function refusal(run: () => Promise<unknown>) {
  const err = await run().then(
    () => {
      throw new Error('accepted');
    },
    (e: unknown) => e,
  );
  const { status, error, detail, headers } = err as { status: number; error: string; detail: string; headers: Record<string, string> };
  return { status, error, description: detail, headers };
}
async function expectRefused(run: () => Promise<unknown>, description: RegExp, error = 'invalid_dpop_proof', status = 400) {
  const refused = await refusal(run);
  expect({ status: refused.status, error: refused.error }).toEqual({ status, error });
  expect(refused.description).toMatch(description);
  return refused;
}

describe('the proof', () => {
  it('accepted: the thumbprint of its key; its jti remembered for 360 s for the tenant', async () => {
    const { proofs, replays } = setup();
    const jti = randomUUID();
    expect(await proofs.verify(proof({}, { jti }), CHECK)).toBe(ecThumbprint(key.publicJwk as Record<string, unknown>));
    expect(replays.seen).toEqual([{ tenantId: 'acme', purpose: 'dpop-jti', value: jti, lifetimeSeconds: MAX_AGE + SKEW }]);
  });

  it.each([
    ['no JWT', () => 'a.b', /the DPoP header is not a JWT/],
    ['typ JWT', () => proof({ typ: 'JWT' }), /typ must be dpop\+jwt/],
    ['no typ', () => proof({ typ: undefined }), /typ must be dpop\+jwt/],
    ['alg none', () => proof({ alg: 'none' }), /alg must be one of ES256, ES384, ES512/],
    ['alg not a string', () => proof({ alg: 256 }), /alg must be one of/],
    ['crit', () => proof({ crit: ['b64'] }), /crit is not supported/],
    ['no jwk', () => proof({ jwk: undefined }), /must carry the public jwk/],
    ['a jwk that is a string', () => proof({ jwk: 'key' }), /must carry the public jwk/],
    ['a jwk with its private member', () => proof({ jwk: key.privateJwk }), /must carry the public jwk/],
    ['alg ES384 for a P-256 jwk', () => proof({ alg: 'ES384' }), /signature does not verify/],
    ['a signature by another key', () => proof({}, {}, stranger), /signature does not verify/],
    ['exp past beyond the skew', () => proof({}, { exp: now() - SKEW - 5 }), /expired or is not yet valid/],
    ['nbf beyond the skew ahead', () => proof({}, { nbf: now() + SKEW + 5 }), /expired or is not yet valid/],
    ['htm GET', () => proof({}, { htm: 'GET' }), /htm does not match the request method/],
    ['no htm', () => proof({}, { htm: undefined }), /htm does not match/],
    ['htu another endpoint', () => proof({}, { htu: `${URL_}x` }), /htu does not match the request URL/],
    ['htu with the query', () => proof({}, { htu: `${URL_}?a=1` }), /htu does not match the request URL/],
    ['no iat', () => proof({}, { iat: undefined }), /iat is missing or not recent/],
    ['iat a string', () => proof({}, { iat: String(now()) }), /iat is missing or not recent/],
    ['iat beyond the skew ahead', () => proof({}, { iat: now() + SKEW + 5 }), /iat is missing or not recent/],
    ['iat too old', () => proof({}, { iat: now() - MAX_AGE - 5 }), /iat is missing or not recent/],
    ['no jti', () => proof({}, { jti: undefined }), /jti is missing/],
    ['an empty jti', () => proof({}, { jti: '' }), /jti is missing/],
    ['a jti that is a number', () => proof({}, { jti: 7 }), /jti is missing/],
  ])('refuses %s', async (_name, make, description) => {
    const { proofs, replays } = setup();
    await expectRefused(() => proofs.verify(make(), CHECK), description);
    expect(replays.seen).toEqual([]);
  });

  it('accepts iat just inside both edges, and compares htu with the URL without its query or fragment', async () => {
    const { proofs } = setup();
    for (const iat of [now() + SKEW - 5, now() - MAX_AGE + 5]) expect(await proofs.verify(proof({}, { iat }), CHECK)).toBeTruthy();
    for (const url of [`${URL_}?trace=1`, `${URL_}#top`]) expect(await proofs.verify(proof(), { ...CHECK, url })).toBeTruthy();
    expect(await proofs.verify(proof({}, { htm: 'GET' }), { ...CHECK, method: 'GET' })).toBeTruthy();
  });

  it('accepts iat exactly a skew ahead and exactly as old as allowed', async () => {
    const { proofs } = setup();
    const second = 1_700_000_000;
    vi.spyOn(Date, 'now').mockReturnValue(second * 1000);
    for (const iat of [second + SKEW, second - MAX_AGE]) expect(await proofs.verify(proof({}, { iat }), CHECK)).toBeTruthy();
  });

  it('refuses the same jti twice', async () => {
    const { proofs } = setup();
    const jti = randomUUID();
    await proofs.verify(proof({}, { jti }), CHECK);
    await expectRefused(() => proofs.verify(proof({}, { jti }), CHECK), /this DPoP proof was used before/);
  });
});

describe('ath at a resource endpoint', () => {
  const accessToken = 'an-access-token';
  const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

  it('must be the hash of the access token', async () => {
    const { proofs } = setup();
    const check = { ...CHECK, accessToken };
    expect(await proofs.verify(proof({}, { ath: ath(accessToken) }), check)).toBeTruthy();
    await expectRefused(() => proofs.verify(proof({}, { ath: ath('another') }), check), /ath does not match the access token/);
    await expectRefused(() => proofs.verify(proof(), check), /ath does not match the access token/);
  });

  it('is not looked at where there is no access token (the token endpoint)', async () => {
    const { proofs } = setup();
    expect(await proofs.verify(proof({}, { ath: 'anything' }), CHECK)).toBeTruthy();
  });
});

describe('at the token endpoint: keyOf and proofOf', () => {
  const request = (dpop?: string) => ({ tenantId: 'acme', url: URL_, ...(dpop && { dpop }) });
  const settings = (dpopRequired: boolean) => ({ dpopRequired, dpopNonceRequired: false });

  it('no proof: undefined, unless the issuer requires DPoP (invalid_request)', async () => {
    const { proofs } = setup();
    expect(await proofs.keyOf(request(), settings(false))).toBeUndefined();
    expect(proofs.proofOf(request(), settings(false))).toBeUndefined();
    await expectRefused(() => proofs.keyOf(request(), settings(true)), /this issuer requires DPoP: send a DPoP proof/, 'invalid_request');
  });

  it('a proof for POST to the request URL: its key, once', async () => {
    const { proofs } = setup();
    const sent = proof();
    expect(await proofs.keyOf(request(sent), settings(true))).toBe(ecThumbprint(key.publicJwk as Record<string, unknown>));
    await expectRefused(() => proofs.keyOf(request(sent), settings(true)), /used before/);
    await expectRefused(() => proofs.keyOf(request(proof({}, { htm: 'PUT' })), settings(false)), /htm does not match/);
  });

  it('proofOf checks the proof but leaves its jti to the caller: the statement adds it once', async () => {
    const { proofs } = setup();
    const sent = proof();
    const checked = proofs.proofOf(request(sent), settings(false));
    expect(checked?.thumbprint).toBe(ecThumbprint(key.publicJwk as Record<string, unknown>));
    expect(proofs.proofOf(request(sent), settings(false))).toBeDefined();
    expect((await checked?.replay.executeTakeFirst())?.numInsertedOrUpdatedRows).toBe(1n);
    expect((await checked?.replay.executeTakeFirst())?.numInsertedOrUpdatedRows).toBe(0n);
  });
});

describe('server nonces', () => {
  const required = { ...CHECK, settings: { dpopNonceRequired: true } };
  const nonceAt = (nonces: DpopNonces, tenant: string, windowsAgo: number) => {
    const real = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(real - windowsAgo * WINDOW_MS);
    const nonce = nonces.issue(tenant);
    vi.restoreAllMocks();
    return nonce;
  };

  it('where required, a proof without one is answered use_dpop_nonce with a fresh nonce, 400 at the token endpoint, 401 at a resource', async () => {
    const { proofs, nonces } = setup();
    const refused = await expectRefused(() => proofs.verify(proof(), required), /use the DPoP-Nonce/, 'use_dpop_nonce');
    expect(nonces.accepts('acme', refused.headers['dpop-nonce'])).toBe(true);
    const atResource = await expectRefused(
      () => proofs.verify(proof({}, { ath: createHash('sha256').update('t').digest('base64url') }), { ...required, accessToken: 't' }),
      /use the DPoP-Nonce/,
      'use_dpop_nonce',
      401,
    );
    expect(atResource.headers['www-authenticate']).toMatch(/^DPoP error="use_dpop_nonce"/);
    expect(await proofs.verify(proof({}, { nonce: refused.headers['dpop-nonce'] }), required)).toBeTruthy();
  });

  it('a nonce is not looked at where none is required', async () => {
    const { proofs } = setup();
    expect(await proofs.verify(proof({}, { nonce: 'stale' }), CHECK)).toBeTruthy();
  });

  it("accepts this window's and the last window's nonce of the tenant; not older, not another tenant's, not another secret's", () => {
    const nonces = new DpopNonces(SECRET, new TestClock());
    expect(nonces.issue('acme')).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);
    expect(nonces.accepts('acme', nonceAt(nonces, 'acme', 0))).toBe(true);
    expect(nonces.accepts('acme', nonceAt(nonces, 'acme', 1))).toBe(true);
    expect(nonces.accepts('acme', nonceAt(nonces, 'acme', 2))).toBe(false);
    expect(nonces.accepts('acme', nonceAt(nonces, 'acme', -1))).toBe(false);
    expect(nonces.accepts('acme', nonceAt(nonces, 'other', 0))).toBe(false);
    expect(nonces.accepts('acme', new DpopNonces('another master secret, long enough', new TestClock()).issue('acme'))).toBe(false);
    expect(nonces.accepts('acme', 12)).toBe(false);
    expect(nonces.accepts('acme', undefined)).toBe(false);
  });

  it('a nonce is good from the start of its window to the end of the next one', () => {
    const nonces = new DpopNonces(SECRET, new TestClock());
    const start = Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS;
    vi.spyOn(Date, 'now').mockReturnValue(start);
    const nonce = nonces.issue('acme');
    vi.spyOn(Date, 'now').mockReturnValue(start + 2 * WINDOW_MS - 1);
    expect(nonces.accepts('acme', nonce)).toBe(true);
    vi.spyOn(Date, 'now').mockReturnValue(start + 2 * WINDOW_MS);
    expect(nonces.accepts('acme', nonce)).toBe(false);
    vi.spyOn(Date, 'now').mockReturnValue(start - 1);
    expect(nonces.accepts('acme', nonce)).toBe(false);
  });
});
