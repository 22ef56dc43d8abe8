// Each rule of attestation-based client authentication (draft-ietf-oauth-attestation-based-client-auth)
// checked on WalletAttestations.check itself: both headers, the client attestation (signer, chain,
// claims, times at the edges of the clock skew, instance key), its subject, the proof of possession
// (signature, audience, iss, iat window) and the challenge and jti rules. The issuer is a plain object
// and the nonce store an in-memory one (the database's once-only statements are the invariants'
// subject); the flows at PAR and the token endpoint are tested through the server in
// wallet-attestation.test.ts.

import { createPrivateKey, randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { WalletAttestations } from '../../src/issuance/authorization/wallet-attestation.js';
import type { Issuer, IssuerDirectory } from '../../src/issuance/issuers.js';
import type { NonceStore } from '../../src/issuance/nonce/store.js';
import { TestClock } from '../support/clock.js';
import { holderKey } from '../support/wallet.js';
import { signedCompact, type WalletProvider, walletProvider } from '../support/wallet-provider.js';

const SERVER = 'https://issuer.example/issuers/acme';
const CLIENT = 'wallet-client';
// wallet-attestation.ts: 60 s of clock skew; a proof's iat may be up to 300 s old.
const SKEW = 60;
const POP_MAX_AGE = 300;
const now = () => Math.floor(Date.now() / 1000);

let trusted: WalletProvider;
let rogue: WalletProvider;
let instance: { publicJwk: Record<string, unknown>; sign: (header: Record<string, unknown>, payload: Record<string, unknown>) => string };

afterEach(() => vi.restoreAllMocks());
beforeAll(async () => {
  [trusted, rogue] = await Promise.all([walletProvider('Trusted Wallets'), walletProvider('Rogue Wallets')]);
  const key = await holderKey();
  const privateKey = createPrivateKey({ key: key.privateJwk as never, format: 'jwk' });
  instance = { publicJwk: key.publicJwk as Record<string, unknown>, sign: (header, payload) => signedCompact(privateKey, header, payload) };
});

/** Single-use values in memory, with NonceStore's answers (issue, consume once, remember once) and the lifetimes asked for. */
function memoryNonces() {
  const live = new Set<string>();
  const lifetimes: Record<string, number[]> = {};
  const keep = (purpose: string, lifetimeSeconds: number) => {
    lifetimes[purpose] = [...(lifetimes[purpose] ?? []), lifetimeSeconds];
  };
  return {
    lifetimes,
    issue: async (tenantId: string, purpose: string, lifetimeSeconds: number) => {
      const value = randomUUID();
      live.add(`${tenantId}/${purpose}/${value}`);
      keep(purpose, lifetimeSeconds);
      return value;
    },
    consume: async (tenantId: string, purpose: string, value: string) => live.delete(`${tenantId}/${purpose}/${value}`),
    remember: async (tenantId: string, purpose: string, value: string, lifetimeSeconds: number) => {
      const id = `${tenantId}/${purpose}/${value}`;
      if (live.has(id)) return false;
      live.add(id);
      keep(purpose, lifetimeSeconds);
      return true;
    },
  };
}

function setup(settings: { walletAttestationRequired?: boolean; walletAttestationChallengeRequired?: boolean } = {}) {
  const issuer = {
    tenantId: 'acme',
    urls: { issuer: SERVER },
    settings: { walletAttestationRequired: false, walletAttestationChallengeRequired: false, ...settings },
    walletProviderAnchors: async () => [trusted.caPem],
  } as unknown as Issuer;
  const nonces = memoryNonces();
  const directory = { get: async () => issuer } as unknown as IssuerDirectory;
  const attestations = new WalletAttestations(directory, nonces as unknown as NonceStore, new TestClock());
  return { issuer, attestations, nonces };
}

const drop = (members: Record<string, unknown>) => Object.fromEntries(Object.entries(members).filter(([, v]) => v !== undefined));

/** A client attestation of the trusted provider for the instance key, changed by `header` and `claims` (undefined drops a member). */
const attestation = (header: Record<string, unknown> = {}, claims: Record<string, unknown> = {}, provider = trusted) =>
  provider.signed(
    drop({ alg: 'ES256', typ: 'oauth-client-attestation+jwt', x5c: provider.x5c, ...header }),
    drop({ iss: 'https://wallets.example', sub: CLIENT, iat: now(), exp: now() + 3600, cnf: { jwk: instance.publicJwk }, ...claims }),
  );
/** The instance's proof of possession, changed by `header` and `claims`. */
const pop = (header: Record<string, unknown> = {}, claims: Record<string, unknown> = {}) =>
  instance.sign(
    drop({ alg: 'ES256', typ: 'oauth-client-attestation-pop+jwt', ...header }),
    drop({ iss: CLIENT, aud: SERVER, jti: randomUUID(), iat: now(), ...claims }),
  );

async function refusal(check: Promise<unknown>) {
  const err = await check.then(
    () => {
      throw new Error('accepted');
    },
    (e: unknown) => e,
  );
  const { status, error, detail, headers } = err as { status: number; error: string; detail: string; headers: Record<string, string> };
  return { status, error, description: detail, headers };
}
async function expectRefused(check: Promise<unknown>, description: RegExp, error = 'invalid_client') {
  const refused = await refusal(check);
  expect({ status: refused.status, error: refused.error }).toEqual({ status: error === 'invalid_client' ? 401 : 400, error });
  expect(refused.description).toMatch(description);
  return refused;
}

describe('the two headers', () => {
  it('neither: no attestation where none is required, invalid_client where one is', async () => {
    expect(await setup().attestations.check(setup().issuer, CLIENT, {})).toBeUndefined();
    const required = setup({ walletAttestationRequired: true });
    await expectRefused(required.attestations.check(required.issuer, CLIENT, {}), /this issuer requires wallet attestation/);
  });

  it('one without the other is refused, whether or not attestation is required', async () => {
    const { issuer, attestations } = setup();
    await expectRefused(attestations.check(issuer, CLIENT, { pop: pop() }), /^OAuth-Client-Attestation is missing$/);
    await expectRefused(attestations.check(issuer, CLIENT, { attestation: attestation() }), /^OAuth-Client-Attestation-PoP is missing$/);
  });

  it('both, good: the client is the attestation subject and the instance the thumbprint of its cnf.jwk', async () => {
    const { issuer, attestations } = setup({ walletAttestationRequired: true });
    const attested = await attestations.check(issuer, undefined, { attestation: attestation(), pop: pop() });
    expect(attested?.clientId).toBe(CLIENT);
    const { ecThumbprint } = await import('../../src/platform/crypto/ec-jws.js');
    expect(attested?.instanceJkt).toBe(ecThumbprint(instance.publicJwk));
    expect(attested?.instanceJkt).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('the client attestation', () => {
  it.each([
    ['no JWT', () => 'a.b', /client attestation is not a JWT/],
    ['typ JWT', () => attestation({ typ: 'JWT' }), /client attestation typ must be oauth-client-attestation\+jwt/],
    ['alg none', () => attestation({ alg: 'none' }), /client attestation alg must be one of ES256, ES384, ES512/],
    ['alg not a string', () => attestation({ alg: 1 }), /client attestation alg must be one of/],
    ['crit', () => attestation({ crit: ['b64'] }), /^crit is not supported$/],
    ['no x5c', () => attestation({ x5c: undefined }), /must carry its certificate chain/],
    ['an x5c string', () => attestation({ x5c: 'MIIB' }), /must carry its certificate chain/],
    ['an empty x5c', () => attestation({ x5c: [] }), /must carry its certificate chain/],
    ['an x5c with a number', () => attestation({ x5c: [trusted.x5c[0], 1] }), /must carry its certificate chain/],
    ['an x5c of 11 certificates', () => attestation({ x5c: Array(11).fill(trusted.x5c[0]) }), /x5c holds more than 10 certificates/],
    ['an x5c leaf that is no certificate', () => attestation({ x5c: ['bm90IGEgY2VydA'] }), /signature does not verify with its x5c/],
    ['a leaf that did not sign it', () => attestation({ x5c: rogue.x5c }), /signature does not verify with its x5c/],
    [
      'alg ES384 with a P-256 leaf',
      () =>
        trusted.signed(
          { alg: 'ES384', typ: 'oauth-client-attestation+jwt', x5c: trusted.x5c },
          { sub: CLIENT, iss: 'i', exp: now() + 60, cnf: { jwk: instance.publicJwk } },
          'sha384',
        ),
      /signature does not verify with its x5c/,
    ],
    ['a provider the issuer does not trust', () => attestation({}, {}, rogue), /not signed by a trusted wallet provider/],
    ['no sub', () => attestation({}, { sub: undefined }), /needs iss, sub, exp and cnf.jwk/],
    ['an empty iss', () => attestation({}, { iss: '' }), /needs iss, sub, exp and cnf.jwk/],
    ['no exp', () => attestation({}, { exp: undefined }), /needs iss, sub, exp and cnf.jwk/],
    ['no cnf.jwk', () => attestation({}, { cnf: {} }), /needs iss, sub, exp and cnf.jwk/],
    ['exp past beyond the skew', () => attestation({}, { exp: now() - SKEW - 5 }), /client attestation has expired/],
    ['nbf beyond the skew ahead', () => attestation({}, { nbf: now() + SKEW + 5 }), /client attestation is not yet valid/],
    ['iat beyond the skew ahead', () => attestation({}, { iat: now() + SKEW + 5 }), /client attestation was issued in the future/],
    ['an RSA cnf.jwk', () => attestation({}, { cnf: { jwk: { kty: 'RSA', n: 'AQAB', e: 'AQAB' } } }), /cnf.jwk must be a public EC key/],
    ['a private cnf.jwk', () => attestation({}, { cnf: { jwk: { ...instance.publicJwk, d: 'AAAA' } } }), /cnf.jwk must be a public EC key/],
  ])('refuses %s', async (_name, make, description) => {
    const { issuer, attestations } = setup();
    await expectRefused(attestations.check(issuer, CLIENT, { attestation: make(), pop: pop() }), description);
  });

  it('accepts exp, nbf and iat just inside the skew', async () => {
    const { issuer, attestations } = setup();
    const edges = attestation({}, { exp: now() - SKEW + 5, nbf: now() + SKEW - 5, iat: now() + SKEW - 5 });
    expect(await attestations.check(issuer, CLIENT, { attestation: edges, pop: pop() })).toBeDefined();
  });

  it('takes an x5c of 10 certificates (the most a chain may have)', async () => {
    const { issuer, attestations } = setup();
    const tenCopies = attestation({ x5c: Array(10).fill(trusted.x5c[0]) });
    expect(await attestations.check(issuer, CLIENT, { attestation: tenCopies, pop: pop() })).toBeDefined();
  });

  it('exactly at the edges: exp a skew ago is expired, nbf and iat a skew ahead are accepted', async () => {
    const { issuer, attestations } = setup();
    // This second, not a fixed one: the chain (made now) is checked at the clock's time too.
    const second = Math.floor(Date.now() / 1000);
    vi.spyOn(Date, 'now').mockReturnValue(second * 1000);
    const edge = { exp: second - SKEW + 1, nbf: second + SKEW, iat: second + SKEW };
    const popAt = (claims: Record<string, unknown>) => pop({}, { iat: second, ...claims });
    expect(await attestations.check(issuer, CLIENT, { attestation: attestation({}, edge), pop: popAt({}) })).toBeDefined();
    await expectRefused(
      attestations.check(issuer, CLIENT, { attestation: attestation({}, { ...edge, exp: second - SKEW }), pop: popAt({}) }),
      /client attestation has expired/,
    );
    expect(
      await attestations.check(issuer, CLIENT, {
        attestation: attestation({}, edge),
        pop: popAt({ iat: second + SKEW, exp: second - SKEW + 1 }),
      }),
    ).toBeDefined();
    expect(
      await attestations.check(issuer, CLIENT, { attestation: attestation({}, edge), pop: popAt({ iat: second - POP_MAX_AGE }) }),
    ).toBeDefined();
    await expectRefused(
      attestations.check(issuer, CLIENT, { attestation: attestation({}, edge), pop: popAt({ exp: second - SKEW }) }),
      /proof has expired/,
    );
  });

  it('refuses an attestation issued to another client than the request names', async () => {
    const { issuer, attestations } = setup();
    await expectRefused(
      attestations.check(issuer, 'another-client', { attestation: attestation(), pop: pop() }),
      /issued to another client/,
    );
  });
});

describe('the proof of possession', () => {
  it.each([
    ['no JWT', () => 'x', /proof is not a JWT/],
    ['typ JWT', () => pop({ typ: 'JWT' }), /proof typ must be oauth-client-attestation-pop\+jwt/],
    ['alg none', () => pop({ alg: 'none' }), /proof alg must be one of ES256, ES384, ES512/],
    ['alg not a string', () => pop({ alg: 2 }), /proof alg must be one of/],
    ['crit', () => pop({ crit: ['b64'] }), /proof alg must be one of/],
    ['alg ES384 for the P-256 instance key', () => pop({ alg: 'ES384' }), /not signed by the attested key/],
    ['no aud', () => pop({}, { aud: undefined }), /proof needs aud, jti and iat/],
    ['no jti', () => pop({}, { jti: undefined }), /proof needs aud, jti and iat/],
    ['an empty jti', () => pop({}, { jti: '' }), /proof needs aud, jti and iat/],
    ['a jti of 257 characters', () => pop({}, { jti: 'j'.repeat(257) }), /proof needs aud, jti and iat/],
    ['no iat', () => pop({}, { iat: undefined }), /proof needs aud, jti and iat/],
    ['an empty challenge', () => pop({}, { challenge: '' }), /proof needs aud, jti and iat/],
    ['a challenge of 257 characters', () => pop({}, { challenge: 'c'.repeat(257) }), /proof needs aud, jti and iat/],
    ['iss another client', () => pop({}, { iss: 'another-client' }), /proof iss must be the client_id/],
    ['aud another server', () => pop({}, { aud: `${SERVER}/other` }), /proof aud must be this authorization server/],
    [
      'aud a list without this server',
      () => pop({}, { aud: ['https://a.example', `${SERVER}x`] }),
      /proof aud must be this authorization server/,
    ],
    ['iat beyond the skew ahead', () => pop({}, { iat: now() + SKEW + 5 }), /proof iat is not recent/],
    ['iat too old', () => pop({}, { iat: now() - POP_MAX_AGE - 5 }), /proof iat is not recent/],
    ['exp past beyond the skew', () => pop({}, { exp: now() - SKEW - 5 }), /proof has expired/],
  ])('refuses %s', async (_name, make, description) => {
    const { issuer, attestations } = setup();
    await expectRefused(attestations.check(issuer, CLIENT, { attestation: attestation(), pop: make() }), description);
  });

  it('refuses a proof signed by another key than cnf.jwk', async () => {
    const { issuer, attestations } = setup();
    const other = await holderKey();
    const stranger = attestation({}, { cnf: { jwk: other.publicJwk } });
    await expectRefused(attestations.check(issuer, CLIENT, { attestation: stranger, pop: pop() }), /not signed by the attested key/);
  });

  it('accepts the edges: iat just inside both ends of its window, exp just inside the skew, aud in a list, no iss, a 256-character jti', async () => {
    const { issuer, attestations } = setup();
    const accepts = async (claims: Record<string, unknown>) =>
      expect(await attestations.check(issuer, CLIENT, { attestation: attestation(), pop: pop({}, claims) })).toBeDefined();
    await accepts({ iat: now() + SKEW - 5 });
    await accepts({ iat: now() - POP_MAX_AGE + 5, exp: now() - SKEW + 5 });
    await accepts({ aud: ['https://a.example', SERVER], iss: undefined, jti: 'j'.repeat(256) });
  });

  it('takes each proof once: its jti, remembered for as long as its iat is accepted (360 s), is refused again', async () => {
    const { issuer, attestations, nonces } = setup();
    const proof = pop();
    expect(await attestations.check(issuer, CLIENT, { attestation: attestation(), pop: proof })).toBeDefined();
    expect(nonces.lifetimes['attestation-pop-jti']).toEqual([POP_MAX_AGE + SKEW]);
    await expectRefused(attestations.check(issuer, CLIENT, { attestation: attestation(), pop: proof }), /proof was used before/);
  });
});

describe('challenges', () => {
  it('where required, a proof without one is answered with a fresh challenge that is then accepted once', async () => {
    const { issuer, attestations } = setup({ walletAttestationChallengeRequired: true });
    const refused = await expectRefused(
      attestations.check(issuer, CLIENT, { attestation: attestation(), pop: pop() }),
      /must carry a challenge from the challenge endpoint/,
      'use_attestation_challenge',
    );
    const challenge = refused.headers['oauth-client-attestation-challenge'] as string;
    expect(challenge).toBeTruthy();
    expect(await attestations.check(issuer, CLIENT, { attestation: attestation(), pop: pop({}, { challenge }) })).toBeDefined();
    const again = await expectRefused(
      attestations.check(issuer, CLIENT, { attestation: attestation(), pop: pop({}, { challenge }) }),
      /challenge is unknown, expired or used/,
      'use_attestation_challenge',
    );
    expect(again.headers['oauth-client-attestation-challenge']).not.toBe(challenge);
  });

  it('a challenge is checked even where none is required; one from the challenge endpoint (300 s) works', async () => {
    const { issuer, attestations, nonces } = setup();
    await expectRefused(
      attestations.check(issuer, CLIENT, { attestation: attestation(), pop: pop({}, { challenge: 'never-issued' }) }),
      /challenge is unknown/,
      'use_attestation_challenge',
    );
    const challenge = await attestations.challenge('acme');
    expect(challenge).toMatch(/^[0-9a-f-]{36}$/);
    expect(nonces.lifetimes['attestation-challenge']).toEqual([300, 300]);
    expect(await attestations.check(issuer, CLIENT, { attestation: attestation(), pop: pop({}, { challenge }) })).toBeDefined();
  });
});
