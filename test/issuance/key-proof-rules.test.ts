// Each rule of the key proofs of a credential request (OpenID4VCI 1.0 appendix F), checked on
// checkKeyProofs itself: a jwt proof's header, signature, audience, iat window and nonce; its key
// attestation (required, attesting the proof key, over the proof's nonce); the attestation proof type;
// one nonce per request and one credential per distinct key up to the batch size. The credential
// endpoint that spends the nonce is tested through the server in pre-authorized.test.ts and
// key-attestation.test.ts.

import { createPrivateKey } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { carriesKeyAttestation, checkKeyProofs, type ProofContext, spentNonce } from '../../src/issuance/credential-request/proofs.js';
import type { KeyProofs } from '../../src/issuance/credential-request/schemas.js';
import { TestClock } from '../support/clock.js';
import { type HolderKey, holderKey } from '../support/wallet.js';
import { signedCompact, type WalletProvider, walletProvider } from '../support/wallet-provider.js';

const ISSUER = 'https://issuer.example/issuers/acme';
const SKEW = 60;
const MAX_AGE = 300;
const now = () => Math.floor(Date.now() / 1000);

let provider: WalletProvider;
let keys: HolderKey[];
let context: ProofContext;

afterEach(() => vi.restoreAllMocks());
beforeAll(async () => {
  provider = await walletProvider('Key Proof Wallets');
  keys = await Promise.all([holderKey(), holderKey(), holderKey()]);
  context = {
    tenantId: 'acme',
    issuer: ISSUER,
    maxAgeSeconds: MAX_AGE,
    batchSize: 2,
    clock: new TestClock(),
    keyAttestations: { required: null, trustedCertificates: [provider.caPem], clock: new TestClock() },
  };
});

const drop = (members: Record<string, unknown>) => Object.fromEntries(Object.entries(members).filter(([, v]) => v !== undefined));
const publicOf = (key: HolderKey) => key.publicJwk as Record<string, unknown>;

/** A jwt proof signed by `key` (first holder key by default), its header and claims changed (undefined drops a member). */
function proof(header: Record<string, unknown> = {}, claims: Record<string, unknown> = {}, key = keys[0] as HolderKey) {
  return signedCompact(
    createPrivateKey({ key: key.privateJwk as never, format: 'jwk' }),
    drop({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: key.publicJwk, ...header }),
    drop({ aud: ISSUER, iat: now(), nonce: 'n-1', ...claims }),
  );
}
const jwts = (...list: string[]): KeyProofs => ({ type: 'jwt', jwts: list });
const attested = (jwt: string): KeyProofs => ({ type: 'attestation', jwt });
const withRequired = () => ({ ...context, keyAttestations: { ...context.keyAttestations, required: {} } });
/** A key attestation of the test provider for `attested` keys, over `nonce`. */
const keyAttestation = (attestedKeys: HolderKey[], claims: Record<string, unknown> = {}) =>
  provider.signed(
    { alg: 'ES256', typ: 'key-attestation+jwt', x5c: provider.x5c },
    drop({ iat: now(), exp: now() + 600, attested_keys: attestedKeys.map(publicOf), nonce: 'n-1', ...claims }),
  );

function refusal(run: () => unknown) {
  try {
    run();
  } catch (err) {
    const { status, error, detail } = err as { status: number; error: string; detail: string };
    return { status, error, description: detail };
  }
  throw new Error('accepted');
}
function expectRefused(run: () => unknown, description: RegExp, error = 'invalid_proof') {
  const refused = refusal(run);
  expect({ status: refused.status, error: refused.error }).toEqual({ status: 400, error });
  expect(refused.description).toMatch(description);
}
const thumbprints = (list: Record<string, unknown>[]) => list.map((k) => `${k.x}.${k.y}`).sort();

describe('a jwt proof', () => {
  it('accepted: its key and nonce; aud may be a list that holds the issuer', () => {
    expect(checkKeyProofs(jwts(proof()), context)).toEqual({ keys: [keys[0]?.publicJwk], nonce: 'n-1' });
    expect(checkKeyProofs(jwts(proof({}, { aud: ['https://other.example', ISSUER] })), context).nonce).toBe('n-1');
  });

  it.each([
    ['no JWT', () => 'x.y', /the proof is not a JWT/],
    ['typ JWT', () => proof({ typ: 'JWT' }), /typ must be openid4vci-proof\+jwt/],
    ['alg none', () => proof({ alg: 'none' }), /alg must be one of ES256, ES384, ES512/],
    ['alg not a string', () => proof({ alg: 3 }), /alg must be one of/],
    ['crit', () => proof({ crit: ['b64'] }), /crit is not supported/],
    ['no jwk (a kid)', () => proof({ jwk: undefined, kid: 'k' }), /must carry the holder key as jwk/],
    ['a jwk that is a string', () => proof({ jwk: 'key' }), /must carry the holder key as jwk/],
    ['a jwk with its private member', () => proof({ jwk: keys[0]?.privateJwk }), /must not contain a private key/],
    ['alg ES384 for a P-256 jwk', () => proof({ alg: 'ES384' }), /signature does not verify with its jwk/],
    ['a jwk of another key than the signer', () => proof({ jwk: keys[1]?.publicJwk }), /signature does not verify with its jwk/],
    ['no aud', () => proof({}, { aud: undefined }), /aud must be the credential issuer https:\/\/issuer.example/],
    ['aud another issuer', () => proof({}, { aud: `${ISSUER}/x` }), /aud must be the credential issuer/],
    ['aud a list without the issuer', () => proof({}, { aud: ['https://a.example'] }), /aud must be the credential issuer/],
    ['no iat', () => proof({}, { iat: undefined }), /iat is required/],
    ['iat a string', () => proof({}, { iat: String(now()) }), /iat is required/],
    ['iat beyond the skew ahead', () => proof({}, { iat: now() + SKEW + 5 }), /iat is in the future/],
    ['iat older than the nonce lifetime', () => proof({}, { iat: now() - MAX_AGE - 5 }), /the proof is too old/],
    ['exp past beyond the skew', () => proof({}, { exp: now() - SKEW - 5 }), /expired or is not yet valid/],
    ['nbf beyond the skew ahead', () => proof({}, { nbf: now() + SKEW + 5 }), /expired or is not yet valid/],
  ])('refuses %s', (_name, make, description) => {
    expectRefused(() => checkKeyProofs(jwts(make()), context), description);
  });

  it('a proof without a nonce, or a nonce that is no string: invalid_nonce', () => {
    for (const nonce of [undefined, 7]) {
      expectRefused(() => checkKeyProofs(jwts(proof({}, { nonce })), context), /carries no nonce/, 'invalid_nonce');
    }
  });

  it('accepts iat exactly a skew ahead and exactly as old as the nonce lifetime', () => {
    const second = 1_700_000_000;
    vi.spyOn(Date, 'now').mockReturnValue(second * 1000);
    for (const iat of [second + SKEW, second - MAX_AGE]) expect(checkKeyProofs(jwts(proof({}, { iat })), context).keys).toHaveLength(1);
  });

  it('a c_nonce that was not there to spend is invalid_nonce (the credential endpoint answers it so)', () => {
    expect(spentNonce()).toMatchObject({
      status: 400,
      error: 'invalid_nonce',
      detail: expect.stringMatching(/get a fresh one from the nonce endpoint/),
    });
  });

  it('accepts iat just inside both ends of its window', () => {
    expect(checkKeyProofs(jwts(proof({}, { iat: now() + SKEW - 5 })), context).keys).toHaveLength(1);
    expect(checkKeyProofs(jwts(proof({}, { iat: now() - MAX_AGE + 5 })), context).keys).toHaveLength(1);
  });
});

describe('several jwt proofs', () => {
  it('no proof: invalid_proof, saying what to send', () => {
    expectRefused(() => checkKeyProofs(undefined, context), /^this credential is bound to a holder key: send jwt proofs$/);
    expectRefused(() => checkKeyProofs(jwts(), context), /^this credential is bound to a holder key: send jwt proofs$/);
    expectRefused(() => checkKeyProofs(jwts(), withRequired()), /send jwt proofs with key attestations, or an attestation proof/);
  });

  it('one credential per distinct key, up to the batch size', () => {
    const two = checkKeyProofs(jwts(proof(), proof({}, {}, keys[1]), proof()), context);
    expect(thumbprints(two.keys as Record<string, unknown>[])).toEqual(
      thumbprints([publicOf(keys[0] as HolderKey), publicOf(keys[1] as HolderKey)]),
    );
    expectRefused(
      () => checkKeyProofs(jwts(proof(), proof({}, {}, keys[1]), proof({}, {}, keys[2])), context),
      /the proofs name 3 holder keys; this issuer issues at most 2 credentials per request/,
    );
  });

  it('all over one nonce', () => {
    expectRefused(() => checkKeyProofs(jwts(proof(), proof({}, { nonce: 'n-2' }, keys[1])), context), /must use the same nonce/);
    expect(checkKeyProofs(jwts(proof({}, { nonce: 'n-2' }), proof({}, { nonce: 'n-2' }, keys[1])), context).nonce).toBe('n-2');
  });
});

describe('a key attestation in a jwt proof', () => {
  it('is required where the configuration requires key attestations', () => {
    expectRefused(() => checkKeyProofs(jwts(proof()), withRequired()), /requires a key attestation \(key_attestations_required\)/);
  });

  it('binds every attested key, and is verified where none is required', () => {
    for (const ctx of [withRequired(), context]) {
      const checked = checkKeyProofs(jwts(proof({ key_attestation: keyAttestation([keys[0], keys[1]] as HolderKey[]) })), ctx);
      expect(thumbprints(checked.keys as Record<string, unknown>[])).toEqual(
        thumbprints([keys[0], keys[1]].map((k) => publicOf(k as HolderKey))),
      );
    }
    expectRefused(() => checkKeyProofs(jwts(proof({ key_attestation: 'garbage' })), context), /the key attestation is not a JWT/);
  });

  it('must carry exp there (the attestation proof type need not)', () => {
    expectRefused(
      () => checkKeyProofs(jwts(proof({ key_attestation: keyAttestation([keys[0] as HolderKey], { exp: undefined }) })), withRequired()),
      /a key attestation in a jwt proof must carry exp/,
    );
    expect(checkKeyProofs(attested(keyAttestation([keys[0] as HolderKey], { exp: undefined })), withRequired()).keys).toHaveLength(1);
  });

  it('must attest the proof key and carry the proof nonce', () => {
    expectRefused(
      () => checkKeyProofs(jwts(proof({ key_attestation: keyAttestation([keys[1] as HolderKey]) })), withRequired()),
      /not signed by a key of its key attestation/,
    );
    expectRefused(
      () => checkKeyProofs(jwts(proof({ key_attestation: keyAttestation([keys[0] as HolderKey], { nonce: 'n-2' }) })), withRequired()),
      /key attestation nonce must be the c_nonce of the proof/,
    );
  });

  it('counts its keys against the batch size', () => {
    expectRefused(
      () => checkKeyProofs(jwts(proof({ key_attestation: keyAttestation(keys) })), withRequired()),
      /the proofs name 3 holder keys/,
    );
  });
});

describe('the attestation proof type', () => {
  it('binds the attested keys (once each) over its nonce where key attestations are required', () => {
    const checked = checkKeyProofs(attested(keyAttestation([keys[0], keys[1], keys[0]] as HolderKey[])), withRequired());
    expect(checked.nonce).toBe('n-1');
    expect(thumbprints(checked.keys as Record<string, unknown>[])).toEqual(
      thumbprints([keys[0], keys[1]].map((k) => publicOf(k as HolderKey))),
    );
  });

  it('is refused where none is required, without a nonce, and with more keys than the batch size', () => {
    expectRefused(
      () => checkKeyProofs(attested(keyAttestation([keys[0] as HolderKey])), context),
      /only taken where the credential requires/,
    );
    expectRefused(
      () => checkKeyProofs(attested(keyAttestation([keys[0] as HolderKey], { nonce: undefined })), withRequired()),
      /must carry the c_nonce as nonce/,
    );
    expectRefused(() => checkKeyProofs(attested(keyAttestation(keys)), withRequired()), /the proofs name 3 holder keys/);
  });

  it('carriesKeyAttestation: an attestation proof, or a jwt proof with a key_attestation header', () => {
    expect(carriesKeyAttestation(attested('x'))).toBe(true);
    expect(carriesKeyAttestation(jwts(proof(), proof({ key_attestation: 'k' })))).toBe(true);
    expect(carriesKeyAttestation(jwts(proof(), 'not-a-jwt'))).toBe(false);
    expect(carriesKeyAttestation(undefined)).toBe(false);
  });
});
