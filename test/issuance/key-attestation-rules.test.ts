// Each rule of a key attestation (OpenID4VCI 1.0 appendix D.1), checked on verifyKeyAttestation
// itself: its signer and chain, its times at the edges of the clock skew, its attested keys and the
// key_storage / user_authentication levels a configuration accepts. The flows that carry it (a jwt
// proof's header, the attestation proof type) are tested through the server in key-attestation.test.ts;
// here every refusal names its rule, and the value just inside each bound is accepted.

import { generateKeyPairSync } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type KeyAttestationTrust, publicEcKey, verifyKeyAttestation } from '../../src/issuance/credential-request/key-attestation.js';
import { TestClock } from '../support/clock.js';
import { holderKey } from '../support/wallet.js';
import { type WalletProvider, walletProvider } from '../support/wallet-provider.js';

let trusted: WalletProvider;
let rogue: WalletProvider;
let trust: KeyAttestationTrust;
let key: Record<string, unknown>;

// key-attestation.ts: 60 s of clock skew, at most 100 attested keys and 20 levels per claim.
const SKEW = 60;
const now = () => Math.floor(Date.now() / 1000);

afterEach(() => vi.restoreAllMocks());
beforeAll(async () => {
  [trusted, rogue] = await Promise.all([walletProvider('Trusted Wallets'), walletProvider('Rogue Wallets')]);
  trust = { required: null, trustedCertificates: [trusted.caPem], clock: new TestClock() };
  key = (await holderKey()).publicJwk as Record<string, unknown>;
});

const HEADER = () => ({ alg: 'ES256', typ: 'key-attestation+jwt', x5c: trusted.x5c });
const PAYLOAD = () => ({ iat: now(), exp: now() + 3600, attested_keys: [key] });

/** An attestation signed by the trusted provider, its header and payload changed by `header` and `claims` (undefined drops a member). */
function attestation(header: Record<string, unknown> = {}, claims: Record<string, unknown> = {}, hash?: 'sha384') {
  const drop = (members: Record<string, unknown>) => Object.fromEntries(Object.entries(members).filter(([, v]) => v !== undefined));
  return trusted.signed(drop({ ...HEADER(), ...header }), drop({ ...PAYLOAD(), ...claims }), hash);
}

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    const { status, error, detail } = err as { status: number; error: string; detail: string };
    return { status, error, description: detail };
  }
  throw new Error('accepted');
};
const expectRefused = (run: () => unknown, description: RegExp) => {
  const refused = refusal(run);
  expect(refused.status).toBe(400);
  expect(refused.error).toBe('invalid_proof');
  expect(refused.description).toMatch(description);
};

describe('the signer', () => {
  it('accepts an attestation of a trusted provider, in either typ spelling, and returns the attested key', () => {
    const verified = verifyKeyAttestation(attestation(), 'jwt', trust);
    expect(verified).toEqual({ attestedKeys: [{ kty: 'EC', crv: key.crv, x: key.x, y: key.y }] });
    expect(verifyKeyAttestation(attestation({ typ: 'keyattestation+jwt' }), 'jwt', trust).attestedKeys).toHaveLength(1);
  });

  it.each([
    ['no JWT', () => 'not.a-jwt', /is not a JWT/],
    ['not a string', () => 42, /is not a JWT/],
    ['typ JWT', () => attestation({ typ: 'JWT' }), /typ must be key-attestation\+jwt/],
    ['no typ', () => attestation({ typ: undefined }), /typ must be key-attestation\+jwt/],
    ['alg none', () => attestation({ alg: 'none' }), /alg must be one of ES256, ES384, ES512/],
    ['alg not a string', () => attestation({ alg: 7 }), /alg must be one of/],
    ['crit', () => attestation({ crit: ['exp'] }), /must not carry crit/],
    ['no x5c', () => attestation({ x5c: undefined, kid: 'k' }), /must name its signer by x5c/],
    ['an x5c that is a string', () => attestation({ x5c: 'MIIB' }), /must name its signer by x5c/],
    ['an empty x5c', () => attestation({ x5c: [] }), /must name its signer by x5c/],
    ['an x5c of 11 certificates', () => attestation({ x5c: Array(11).fill(trusted.x5c[0]) }), /must name its signer by x5c/],
    ['an x5c with a number', () => attestation({ x5c: [trusted.x5c[0], 5] }), /must name its signer by x5c/],
    ['an x5c that holds no certificate', () => attestation({ x5c: ['bm90IGEgY2VydA'] }), /does not hold certificates/],
    ['a signer other than its x5c leaf', () => attestation({ x5c: rogue.x5c }), /signature does not verify/],
    // Signed by the P-256 leaf over SHA-384: the signature verifies, but ES384 needs a P-384 key.
    ['alg ES384 with a P-256 certificate', () => attestation({ alg: 'ES384' }, {}, 'sha384'), /signature does not verify/],
  ])('refuses %s', (_name, make, description) => {
    expectRefused(() => verifyKeyAttestation(make(), 'jwt', trust), description);
  });

  it('refuses a tampered payload (the signature no longer verifies)', () => {
    const [header, , signature] = attestation().split('.');
    const payload = Buffer.from(JSON.stringify({ ...PAYLOAD(), attested_keys: [key, key] })).toString('base64url');
    expectRefused(() => verifyKeyAttestation(`${header}.${payload}.${signature}`, 'jwt', trust), /signature does not verify/);
  });

  it('takes an x5c of 10 certificates (the most a chain may have)', () => {
    expect(verifyKeyAttestation(attestation({ x5c: Array(10).fill(trusted.x5c[0]) }), 'jwt', trust).attestedKeys).toHaveLength(1);
  });

  it('refuses every attestation where the issuer trusts no provider, and one of a provider it does not trust', () => {
    expectRefused(() => verifyKeyAttestation(attestation(), 'jwt', { ...trust, trustedCertificates: [] }), /trusts no wallet provider/);
    expectRefused(
      () => verifyKeyAttestation(attestation(), 'jwt', { ...trust, trustedCertificates: [rogue.caPem] }),
      /signer is not trusted/,
    );
  });
});

describe('its times (60 s of clock skew)', () => {
  it.each([
    ['iat missing', { iat: undefined }, /must carry iat/],
    ['iat a string', { iat: String(now()) }, /must carry iat/],
    ['iat beyond the skew ahead', { iat: now() + SKEW + 5 }, /iat is in the future/],
    ['exp missing in a jwt proof', { exp: undefined }, /must carry exp/],
    ['exp a string', { exp: String(now() + 3600) }, /has expired/],
    ['exp past beyond the skew', { exp: now() - SKEW - 5 }, /has expired/],
    ['nbf a string', { nbf: String(now()) }, /not yet valid/],
    ['nbf beyond the skew ahead', { nbf: now() + SKEW + 5 }, /not yet valid/],
  ])('refuses %s', (_name, claims, description) => {
    expectRefused(() => verifyKeyAttestation(attestation({}, claims), 'jwt', trust), description);
  });

  it('accepts iat, exp and nbf just inside the skew', () => {
    const claims = { iat: now() + SKEW - 5, exp: now() - SKEW + 5, nbf: now() + SKEW - 5 };
    expect(verifyKeyAttestation(attestation({}, claims), 'jwt', trust).attestedKeys).toHaveLength(1);
  });

  it('accepts iat and nbf exactly at the skew ahead, exp exactly a skew after it passed is refused', () => {
    // This second, not a fixed one: the chain (made now) is checked at the clock's time too.
    const second = Math.floor(Date.now() / 1000);
    vi.spyOn(Date, 'now').mockReturnValue(second * 1000);
    const edge = { iat: second + SKEW, nbf: second + SKEW, exp: second - SKEW + 1 };
    expect(verifyKeyAttestation(attestation({}, edge), 'jwt', trust).attestedKeys).toHaveLength(1);
    expectRefused(() => verifyKeyAttestation(attestation({}, { ...edge, exp: second - SKEW }), 'jwt', trust), /has expired/);
  });

  it('takes an attestation without exp as the attestation proof type (its c_nonce makes it fresh)', () => {
    const verified = verifyKeyAttestation(attestation({}, { exp: undefined, nonce: 'n-1' }), 'attestation', trust);
    expect(verified.nonce).toBe('n-1');
    expectRefused(() => verifyKeyAttestation(attestation({}, { exp: now() - SKEW - 5 }), 'attestation', trust), /has expired/);
  });
});

describe('its attested keys', () => {
  it.each([
    ['missing', { attested_keys: undefined }, /must list attested_keys/],
    ['an object', { attested_keys: { 0: 'k' } }, /must list attested_keys/],
    ['empty', { attested_keys: [] }, /must list attested_keys/],
  ])('refuses attested_keys %s', (_name, claims, description) => {
    expectRefused(() => verifyKeyAttestation(attestation({}, claims), 'jwt', trust), description);
  });

  it('takes 100 attested keys, refuses 101', () => {
    expect(verifyKeyAttestation(attestation({}, { attested_keys: Array(100).fill(key) }), 'jwt', trust).attestedKeys).toHaveLength(100);
    expectRefused(
      () => verifyKeyAttestation(attestation({}, { attested_keys: Array(101).fill(key) }), 'jwt', trust),
      /more than 100 attested keys/,
    );
  });

  it('names the entry that is not a public EC key', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' });
    const cases: [unknown, number][] = [
      [rsa, 1],
      [{ ...key, crv: 'P-384' }, 1],
      [{ ...key, crv: 7 }, 1],
      [{ ...key, x: key.y }, 1],
      [[key], 1],
      ['key', 1],
      [null, 1],
    ];
    for (const [bad, index] of cases) {
      expectRefused(
        () => verifyKeyAttestation(attestation({}, { attested_keys: [key, bad] }), 'jwt', trust),
        new RegExp(`attested_keys\\[${index}\\] is not a public EC key`),
      );
    }
  });

  it('takes keys on P-384 and P-521 as well', () => {
    const onCurve = (namedCurve: string) => generateKeyPairSync('ec', { namedCurve }).publicKey.export({ format: 'jwk' });
    const keys = [onCurve('P-384'), onCurve('P-521')];
    expect(verifyKeyAttestation(attestation({}, { attested_keys: keys }), 'jwt', trust).attestedKeys.map((k) => k.crv)).toEqual([
      'P-384',
      'P-521',
    ]);
  });

  it('returns the attested keys with their public members only', async () => {
    const withExtras = { ...key, kid: 'k1', use: 'sig', alg: 'ES256' };
    expect(verifyKeyAttestation(attestation({}, { attested_keys: [withExtras] }), 'jwt', trust).attestedKeys).toEqual([
      { kty: 'EC', crv: 'P-256', x: key.x, y: key.y },
    ]);
    expect(publicEcKey((await holderKey()).privateJwk)).toBeUndefined();
  });
});

describe('the levels a configuration accepts', () => {
  const required = (key_storage?: string[], user_authentication?: string[]) => ({
    ...trust,
    required: { ...(key_storage && { key_storage }), ...(user_authentication && { user_authentication }) },
  });

  it('accepts an attestation that asserts one accepted value of each claim named, and any where none is named', () => {
    const claims = { key_storage: ['iso_18045_moderate', 'iso_18045_high'], user_authentication: ['iso_18045_high'] };
    expect(
      verifyKeyAttestation(attestation({}, claims), 'jwt', required(['iso_18045_high'], ['iso_18045_high'])).attestedKeys,
    ).toHaveLength(1);
    expect(verifyKeyAttestation(attestation({}, {}), 'jwt', required([], [])).attestedKeys).toHaveLength(1);
    expect(verifyKeyAttestation(attestation({}, {}), 'jwt', required(undefined, ['x'].slice(1))).attestedKeys).toHaveLength(1);
  });

  it('refuses one that asserts none of the accepted values, naming what it asserted and what is accepted', () => {
    const claims = { key_storage: ['iso_18045_basic'], user_authentication: ['iso_18045_high'] };
    expectRefused(
      () => verifyKeyAttestation(attestation({}, claims), 'jwt', required(['iso_18045_high', 'iso_18045_moderate'])),
      /^the key attestation key_storage \(iso_18045_basic\) names none of the values this credential accepts: iso_18045_high, iso_18045_moderate$/,
    );
    expectRefused(
      () => verifyKeyAttestation(attestation({}, claims), 'jwt', required(undefined, ['iso_18045_moderate'])),
      /^the key attestation user_authentication \(iso_18045_high\) names none/,
    );
    expectRefused(
      () => verifyKeyAttestation(attestation({}, { key_storage: undefined }), 'jwt', required(['iso_18045_high'])),
      /key_storage \(none\) names none/,
    );
  });

  it('shows wallet-chosen values printable and cut to 80 characters', () => {
    const long = 'a'.repeat(81);
    const odd = 'lvl"\\\u00e9\n~ ';
    const refused = refusal(() =>
      verifyKeyAttestation(attestation({}, { key_storage: [long, odd, 'b'.repeat(80)] }), 'jwt', required(['iso_18045_high'])),
    );
    expect(refused.description).toContain(`(${'a'.repeat(80)}..., lvl????~ , ${'b'.repeat(80)}) names`);
  });

  it.each([
    ['a string', 'iso_18045_high'],
    ['an array with a number', ['iso_18045_high', 3]],
    ['21 values', Array(21).fill('iso_18045_high')],
  ])('refuses key_storage or user_authentication as %s', (_name, value) => {
    for (const claim of ['key_storage', 'user_authentication']) {
      expectRefused(
        () => verifyKeyAttestation(attestation({}, { [claim]: value }), 'jwt', trust),
        new RegExp(`${claim} must be an array of strings`),
      );
    }
  });

  it('takes 20 values', () => {
    const levels = Array(20).fill('iso_18045_high');
    expect(
      verifyKeyAttestation(attestation({}, { key_storage: levels, user_authentication: levels }), 'jwt', trust).attestedKeys,
    ).toHaveLength(1);
  });
});

describe('its nonce', () => {
  it('returns a string nonce, none when absent, and refuses any other', () => {
    expect(verifyKeyAttestation(attestation({}, { nonce: 'c-nonce' }), 'jwt', trust).nonce).toBe('c-nonce');
    expect('nonce' in verifyKeyAttestation(attestation(), 'jwt', trust)).toBe(false);
    expectRefused(() => verifyKeyAttestation(attestation({}, { nonce: 5 }), 'jwt', trust), /nonce must be a string/);
  });
});
