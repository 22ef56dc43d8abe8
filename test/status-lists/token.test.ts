// The status list tokens as signStatusList writes them, read back with independent decoders (jose for
// the JWT, cbor-x for the CWT, node:crypto for the COSE signature): every claim the draft names is
// there with the value given (iat, exp, ttl, sub, bits, lst, aggregation_uri), and nothing else.
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import { getListFromStatusListJWT, StatusList } from '@sd-jwt/jwt-status-list';
import { Decoder, Encoder } from 'cbor-x';
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import type { Signer } from '../../src/key-chains/signing.js';
import { byteLength, setStatus } from '../../src/status-lists/bitset.js';
import { signStatusList, type TokenInput } from '../../src/status-lists/token.js';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const signer: Signer = {
  keyChainId: 'test',
  algorithm: 'ES256',
  kid: 'test-key',
  x5c: [Buffer.from('not a certificate').toString('base64')],
  selfSigned: false,
  sign: async (data) => new Uint8Array(sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' })),
};

const input: TokenInput = {
  uri: 'https://issuer.example/issuers/t/status-lists/1',
  bits: 2,
  bitset: Uint8Array.of(0b11_00_10_01, 0, 0xff),
  ttl: 600,
  iat: 1_800_000_000,
  exp: 1_800_000_600,
};
const aggregationUri = 'https://issuer.example/issuers/t/status-lists';

const decoder = new Decoder({ mapsAsObjects: false });

async function readJwt(jwt: string) {
  expect(decodeProtectedHeader(jwt)).toEqual({ typ: 'statuslist+jwt', alg: 'ES256', x5c: signer.x5c });
  const key = await importJWK(publicKey.export({ format: 'jwk' }), 'ES256');
  // currentDate before iat: the claims are checked by value below, not against the clock.
  const { payload } = await jwtVerify(jwt, key, { typ: 'statuslist+jwt', currentDate: new Date(input.iat * 1000) });
  return payload as { status_list: { lst: string } } & Record<string, unknown>;
}

/** COSE_Sign1 (tag 18) taken apart by hand; its signature checked over the Sig_structure (RFC 9052 4.4). */
function readCwt(cwt: Uint8Array) {
  expect(cwt[0]).toBe(0xd2);
  const [protectedBytes, , payloadBytes, signature] = decoder.decode(cwt.subarray(1)) as Uint8Array[];
  const toBeSigned = new Encoder({ tagUint8Array: false }).encode(['Signature1', protectedBytes, new Uint8Array(), payloadBytes]);
  expect(verify('sha256', toBeSigned, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature as Uint8Array)).toBe(true);
  return {
    protectedHeader: decoder.decode(protectedBytes as Uint8Array) as Map<number, unknown>,
    claims: decoder.decode(payloadBytes as Uint8Array) as Map<number, unknown>,
  };
}

describe('status list tokens', () => {
  it('JWT: sub, iat, exp, ttl and status_list with bits, the zlib list and aggregation_uri', async () => {
    const { jwt } = await signStatusList({ ...input, aggregationUri }, signer);
    const payload = await readJwt(jwt);
    expect(payload).toEqual({
      sub: input.uri,
      iat: 1_800_000_000,
      exp: 1_800_000_600,
      ttl: 600,
      status_list: { bits: 2, lst: expect.any(String), aggregation_uri: aggregationUri },
    });
    expect(Buffer.from(inflateSync(Buffer.from(payload.status_list.lst, 'base64url'))).toString('hex')).toBe('c900ff');
  });

  it('CWT: protected typ, and claims sub (2), iat (6), exp (4), ttl (65534) and status_list (65533)', async () => {
    const { cwt } = await signStatusList({ ...input, aggregationUri }, signer);
    const { protectedHeader, claims } = readCwt(cwt);
    expect([...protectedHeader]).toEqual([
      [1, -7],
      [16, 'application/statuslist+cwt'],
    ]);
    expect(new Map([...claims].filter(([key]) => key !== 65533))).toEqual(
      new Map<number, unknown>([
        [2, input.uri],
        [6, 1_800_000_000],
        [4, 1_800_000_600],
        [65534, 600],
      ]),
    );
    const list = claims.get(65533) as Map<string, unknown>;
    expect([...list.keys()]).toEqual(['bits', 'lst', 'aggregation_uri']);
    expect(list.get('bits')).toBe(2);
    expect(list.get('aggregation_uri')).toBe(aggregationUri);
    expect(Buffer.from(inflateSync(list.get('lst') as Uint8Array)).toString('hex')).toBe('c900ff');
  });

  it('leaves aggregation_uri out of both when there is none', async () => {
    const { jwt, cwt } = await signStatusList(input, signer);
    expect(Object.keys((await readJwt(jwt)).status_list)).toEqual(['bits', 'lst']);
    expect([...(readCwt(cwt).claims.get(65533) as Map<string, unknown>).keys()]).toEqual(['bits', 'lst']);
  });

  it.each([1, 2])(
    'a 1,000,000-entry list of %i bit(s) with scattered set entries reads back entry for entry with @sd-jwt/jwt-status-list, from the JWT and the CWT',
    async (bits) => {
      const capacity = 1_000_000;
      const bitset = new Uint8Array(byteLength(capacity, bits));
      const set = new Map<number, number>();
      // Scattered as the permutation scatters them, about 1 % of the entries, every value of the width.
      for (let i = 0; i < 10_000; i++) set.set((i * 7_919 + 13) % capacity, (i % ((1 << bits) - 1)) + 1);
      for (const [index, value] of set) setStatus(bitset, bits, index, value);
      const { jwt, cwt } = await signStatusList({ ...input, bits, bitset }, signer);

      const fromJwt = getListFromStatusListJWT(jwt);
      const cwtList = readCwt(cwt).claims.get(65533) as Map<string, unknown>;
      const fromCwt = StatusList.decompressStatusList(Buffer.from(cwtList.get('lst') as Uint8Array).toString('base64url'), bits as 1 | 2);
      for (const list of [fromJwt, fromCwt]) {
        expect(list.getBitsPerStatus()).toBe(bits);
        const mismatches = [];
        for (let index = 0; index < capacity; index++) {
          if (list.getStatus(index) !== (set.get(index) ?? 0)) mismatches.push(index);
        }
        expect(mismatches).toEqual([]);
      }
    },
  );
});
