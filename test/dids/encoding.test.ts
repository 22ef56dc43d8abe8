// did:key and did:jwk as src/dids reads and writes them, against the did:key method's own P-256
// test vector and node:crypto's keys; identifiers that do not decode yield no key.
import { generateKeyPairSync } from 'node:crypto';
import type { JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { base58btcDecode, base58btcEncode, didJwkOf, didKeyOf, keyOfLocalDid } from '../../src/dids/encoding.js';

// The did:key method specification's P-256 example (W3C CCG did:key, test vectors).
const SPEC_DID_KEY = 'did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169';

const freshKey = () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }) as JWK;

describe('did:key and did:jwk', () => {
  it("decodes the did:key method's P-256 example and encodes its key back to it", () => {
    const jwk = keyOfLocalDid(`${SPEC_DID_KEY}#${SPEC_DID_KEY.slice('did:key:'.length)}`);
    expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256' });
    expect(didKeyOf(jwk as JWK)).toBe(SPEC_DID_KEY);
  });

  it('round-trips fresh keys through did:key and did:jwk', () => {
    for (let i = 0; i < 20; i++) {
      const { kty, crv, x, y } = freshKey();
      expect(keyOfLocalDid(didKeyOf({ kty, crv, x, y }) as string)).toEqual({ kty, crv, x, y });
      expect(keyOfLocalDid(didJwkOf({ kty, crv, x, y, kid: 'ignored' } as JWK))).toEqual({ kty, crv, x, y });
    }
  });

  it('keeps leading zero bytes through base58btc', () => {
    expect(base58btcEncode(Uint8Array.of(0, 0, 1))).toBe('112');
    expect([...(base58btcDecode('112') as Uint8Array)]).toEqual([0, 0, 1]);
    expect(base58btcDecode('0OIl')).toBeUndefined();
  });

  it('yields no key for another method, a private key, a wrong prefix or a point off the curve', () => {
    const { kty, crv, x, y } = freshKey();
    const didJwk = (value: unknown) => `did:jwk:${Buffer.from(JSON.stringify(value)).toString('base64url')}`;
    expect(keyOfLocalDid('did:web:example.com')).toBeUndefined();
    expect(keyOfLocalDid(didJwk({ kty, crv, x, y, d: x }))).toBeUndefined();
    expect(keyOfLocalDid(didJwk({ kty: 'OKP', crv: 'Ed25519', x }))).toBeUndefined();
    expect(keyOfLocalDid(didJwk({ ['__proto__']: { kty: 'EC' } }))).toBeUndefined();
    expect(keyOfLocalDid(`did:key:z${base58btcEncode(Uint8Array.of(0xed, 0x01, ...new Uint8Array(32)))}`)).toBeUndefined();
    expect(keyOfLocalDid(`did:key:z${base58btcEncode(Uint8Array.of(0x80, 0x24, 0x02, ...new Uint8Array(32).fill(0xff)))}`)).toBeUndefined();
    expect(keyOfLocalDid(`did:key:z${'1'.repeat(5000)}`)).toBeUndefined();
  });
});
