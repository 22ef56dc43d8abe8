// ECDSA signatures converted between r || s (JOSE, COSE) and DER (node:crypto's default), so that
// signing and verifying can hand node:crypto the KeyObject itself: what signP1363 makes, and what
// verifyP1363 accepts, must be exactly what node:crypto's own ieee-p1363 encoding makes and accepts.
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { derToP1363, p1363ToDer, signP1363, verifyP1363 } from '../../src/platform/crypto/ecdsa-signatures.js';

const CURVES = [
  { curve: 'P-256', hash: 'sha256', size: 32 },
  { curve: 'P-384', hash: 'sha384', size: 48 },
  { curve: 'P-521', hash: 'sha512', size: 66 },
];

describe.each(CURVES)('ECDSA signatures on $curve', ({ curve, hash, size }) => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: curve });
  const data = Buffer.from('the signing input');

  it("verifies node:crypto's ieee-p1363 signatures, and node:crypto verifies signP1363's (many, so that r and s with a high bit or leading zeros occur)", () => {
    for (let i = 0; i < 100; i++) {
      const theirs = sign(hash, data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
      expect(verifyP1363(hash, data, publicKey, theirs)).toBe(true);
      const ours = signP1363(hash, data, privateKey);
      expect(ours).toHaveLength(2 * size);
      expect(verify(hash, data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, ours)).toBe(true);
      expect(derToP1363(p1363ToDer(ours, size) as Buffer, size)).toEqual(ours);
    }
  });

  it('refuses a changed signature, other data, another key and a signature of the wrong length', () => {
    const signature = signP1363(hash, data, privateKey);
    const changed = Buffer.from(signature);
    changed[size + 3] = (changed[size + 3] as number) ^ 1;
    expect(verifyP1363(hash, data, publicKey, changed)).toBe(false);
    expect(verifyP1363(hash, Buffer.from('other data'), publicKey, signature)).toBe(false);
    const other = generateKeyPairSync('ec', { namedCurve: curve }).publicKey;
    expect(verifyP1363(hash, data, other, signature)).toBe(false);
    expect(verifyP1363(hash, data, publicKey, signature.subarray(1))).toBe(false);
    expect(verifyP1363(hash, data, publicKey, Buffer.concat([signature, Buffer.alloc(1)]))).toBe(false);
    // r = s = 0 is no signature.
    expect(verifyP1363(hash, data, publicKey, Buffer.alloc(2 * size))).toBe(false);
    // node:crypto refuses each of these too.
    for (const bad of [changed, signature.subarray(1), Buffer.alloc(2 * size)]) {
      expect(verify(hash, data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, bad)).toBe(false);
    }
  });
});

describe('ECDSA signature encodings', () => {
  it('writes DER integers minimal, with a zero byte before a set high bit', () => {
    const rs = Buffer.concat([Buffer.alloc(31), Buffer.from([0x05]), Buffer.from([0x80]), Buffer.alloc(31, 1)]);
    const der = p1363ToDer(rs, 32) as Buffer;
    expect(der.toString('hex')).toBe(`3026020105022100${'80'}${'01'.repeat(31)}`);
    expect(derToP1363(der, 32)).toEqual(rs);
  });

  it('refuses to sign with a key that is not on a supported EC curve', () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    expect(() => signP1363('sha256', Buffer.from('x'), privateKey)).toThrow();
  });
});
