// ECDSA signatures in both encodings: JOSE and COSE carry r || s (IEEE P1363), node:crypto signs
// and verifies DER by default. Converting here lets the hot paths hand node:crypto the KeyObject
// itself: with the { key, dsaEncoding } options object instead, each call first probes that object
// for a KeyObject and a CryptoKey, each probe failing by a thrown exception, which made a verify
// about 1.5 times as costly.
import { type KeyObject, sign, verify } from 'node:crypto';

/** Bytes of r (and of s) for each curve, by its JOSE and its OpenSSL name. */
const SIZES: Record<string, number> = { 'P-256': 32, 'P-384': 48, 'P-521': 66, prime256v1: 32, secp384r1: 48, secp521r1: 66 };

/** The byte length of r and s on a curve (P-256, P-384, P-521); undefined for another. */
export const ecdsaSize = (curve: string | undefined): number | undefined => (curve === undefined ? undefined : SIZES[curve]);

/**
 * r || s as DER; undefined when it is not 2 × `size` bytes long, which node:crypto's ieee-p1363
 * decoding refuses too.
 */
export function p1363ToDer(signature: Uint8Array, size: number): Buffer | undefined {
  if (signature.length !== 2 * size) return undefined;
  const r = derInteger(signature.subarray(0, size));
  const s = derInteger(signature.subarray(size));
  const length = r.length + s.length;
  const header = length < 0x80 ? [0x30, length] : [0x30, 0x81, length];
  return Buffer.concat([Buffer.from(header), r, s]);
}

/** A DER INTEGER of the unsigned big-endian `value`: leading zeros dropped, a zero byte before a set high bit. */
function derInteger(value: Uint8Array): Buffer {
  let start = 0;
  while (start < value.length - 1 && value[start] === 0) start++;
  const digits = value.subarray(start);
  const pad = (digits[0] as number) >= 0x80 ? 1 : 0;
  const out = Buffer.alloc(2 + pad + digits.length);
  out[0] = 0x02;
  out[1] = pad + digits.length;
  out.set(digits, 2 + pad);
  return out;
}

/** A DER ECDSA signature (as node:crypto makes it) as r || s of `size` bytes each. */
export function derToP1363(der: Uint8Array, size: number): Buffer {
  let offset = 2;
  if (der[0] !== 0x30) throw new Error('not a DER ECDSA signature');
  if (der[1] === 0x81) offset = 3;
  const out = Buffer.alloc(2 * size);
  for (const half of [0, 1]) {
    if (der[offset] !== 0x02) throw new Error('not a DER ECDSA signature');
    const length = der[offset + 1] as number;
    let digits = der.subarray(offset + 2, offset + 2 + length);
    while (digits.length > size && digits[0] === 0) digits = digits.subarray(1);
    if (digits.length > size) throw new Error('not a DER ECDSA signature');
    out.set(digits, half * size + size - digits.length);
    offset += 2 + length;
  }
  return out;
}

/** verify(hash, data, { key, dsaEncoding: 'ieee-p1363' }, signature), with the KeyObject given directly. */
export function verifyP1363(hash: string, data: Uint8Array, key: KeyObject, signature: Uint8Array): boolean {
  const size = ecdsaSize(key.asymmetricKeyDetails?.namedCurve);
  const der = size === undefined ? undefined : p1363ToDer(signature, size);
  return der !== undefined && verify(hash, data, key, der);
}

/** sign(hash, data, { key, dsaEncoding: 'ieee-p1363' }), with the KeyObject given directly. */
export function signP1363(hash: string, data: Uint8Array, key: KeyObject): Buffer {
  const size = ecdsaSize(key.asymmetricKeyDetails?.namedCurve);
  if (size === undefined) throw new Error('signP1363 takes a P-256, P-384 or P-521 key');
  return derToP1363(sign(hash, data, key), size);
}
