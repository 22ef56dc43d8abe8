// ECDSA over a digest someone else computed, as cloud KMSs sign (node:crypto signs messages only,
// hashing them itself): SEC 1, 4.1.3, r = x(kG) mod n, s = k⁻¹(z + r·d) mod n, on P-256, P-384 or
// P-521, for the fakes of those KMSs. The answer is r || s; derSignature gives the DER form.
import { createECDH, type KeyObject, randomBytes } from 'node:crypto';

const CURVES: Record<string, { ecdh: string; order: bigint; size: number }> = {
  'P-256': { ecdh: 'prime256v1', order: 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n, size: 32 },
  'P-384': {
    ecdh: 'secp384r1',
    order: 0xffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973n,
    size: 48,
  },
  'P-521': {
    ecdh: 'secp521r1',
    order:
      0x01fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffa51868783bf2f966b7fcc0148f709a5d03bb5c9b8899c47aebb6fb71e91386409n,
    size: 66,
  },
};

const toBigInt = (bytes: Uint8Array) => BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
const toBytes = (value: bigint, size: number) => Buffer.from(value.toString(16).padStart(size * 2, '0'), 'hex');

function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  let b = base % modulus;
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % modulus;
    b = (b * b) % modulus;
  }
  return result;
}

/** r || s (each the curve's size) by `privateKey` (an EC key of P-256/-384/-521) over `digest`. */
export function signDigest(privateKey: KeyObject, digest: Uint8Array): Buffer {
  const jwk = privateKey.export({ format: 'jwk' });
  const curve = CURVES[jwk.crv as string];
  if (!curve) throw new Error(`no ECDSA on ${jwk.crv} here`);
  const { order: n, size } = curve;
  const d = toBigInt(Buffer.from(jwk.d as string, 'base64url'));
  // The digest's leftmost bits, as many as the order has (P-521 with SHA-512 takes all 512).
  const excess = digest.length * 8 - n.toString(2).length;
  const z = excess > 0 ? toBigInt(digest) >> BigInt(excess) : toBigInt(digest);
  for (;;) {
    const k = (toBigInt(randomBytes(size + 8)) % (n - 1n)) + 1n;
    const point = createECDH(curve.ecdh);
    point.setPrivateKey(toBytes(k, size));
    const r = toBigInt(point.getPublicKey().subarray(1, 1 + size)) % n;
    const s = (modPow(k, n - 2n, n) * ((z + r * d) % n)) % n;
    if (r !== 0n && s !== 0n) return Buffer.concat([toBytes(r, size), toBytes(s, size)]);
  }
}

/** The DER form (SEQUENCE of two INTEGERs) of an r || s signature. */
export function derSignature(raw: Uint8Array): Buffer {
  const size = raw.length / 2;
  const integer = (bytes: Buffer) => {
    let value = bytes;
    while (value.length > 1 && value[0] === 0 && (value[1] as number) < 0x80) value = value.subarray(1);
    if ((value[0] as number) >= 0x80) value = Buffer.concat([Buffer.from([0]), value]);
    return Buffer.concat([Buffer.from([0x02, value.length]), value]);
  };
  const body = Buffer.concat([integer(Buffer.from(raw.subarray(0, size))), integer(Buffer.from(raw.subarray(size)))]);
  const length = body.length < 0x80 ? Buffer.from([body.length]) : Buffer.from([0x81, body.length]);
  return Buffer.concat([Buffer.from([0x30]), length, body]);
}
