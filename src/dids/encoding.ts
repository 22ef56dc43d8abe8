// did:jwk and did:key (P-256), the two DID methods that carry their key in the identifier itself:
// encoded and decoded locally, without a resolver. did:key is the multibase base58btc encoding of
// the multicodec p256-pub (0x1200) prefix and the compressed point; base58btc is written here (it is
// short) rather than taken as a dependency.
import { ECDH } from 'node:crypto';
import type { JWK } from 'jose';
import { isJsonObject, parseOutsideJson } from '../platform/json.js';

const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const BASE58_VALUES = new Map([...BASE58_ALPHABET].map((char, i) => [char, BigInt(i)]));
/** The unsigned varint of multicodec p256-pub, 0x1200. */
const P256_PUB_PREFIX = Uint8Array.of(0x80, 0x24);
/** Longest identifier decoded: far above any key's, so that a hostile one cannot make the BigInt work heavy. */
const MAX_DID_LENGTH = 2048;

export function base58btcEncode(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  let value = BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
  let encoded = '';
  while (value > 0n) {
    encoded = BASE58_ALPHABET[Number(value % 58n)] + encoded;
    value /= 58n;
  }
  return '1'.repeat(zeros) + encoded;
}

/** The bytes of a base58btc string; undefined when a character is outside the alphabet. */
export function base58btcDecode(text: string): Uint8Array | undefined {
  let zeros = 0;
  while (zeros < text.length && text[zeros] === '1') zeros++;
  let value = 0n;
  for (const char of text) {
    const digit = BASE58_VALUES.get(char);
    if (digit === undefined) return undefined;
    value = value * 58n + digit;
  }
  const hex = value === 0n ? '' : value.toString(16);
  const body = Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
  return Uint8Array.from([...new Uint8Array(zeros), ...body]);
}

/** The public members of an EC JWK, in a fixed order: what a DID names of a key. */
export function publicEcJwk(jwk: JWK): JWK {
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } as JWK;
}

/** did:jwk of a public key (its public members only). */
export function didJwkOf(jwk: JWK): string {
  return `did:jwk:${Buffer.from(JSON.stringify(publicEcJwk(jwk))).toString('base64url')}`;
}

/** did:key of a P-256 public key; undefined for a key on another curve. */
export function didKeyOf(jwk: JWK): string | undefined {
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || !jwk.x || !jwk.y) return undefined;
  const uncompressed = Buffer.concat([Buffer.of(0x04), Buffer.from(jwk.x, 'base64url'), Buffer.from(jwk.y, 'base64url')]);
  const compressed = ECDH.convertKey(uncompressed, 'prime256v1', undefined, undefined, 'compressed') as Buffer;
  return `did:key:z${base58btcEncode(Uint8Array.from([...P256_PUB_PREFIX, ...compressed]))}`;
}

/** The DID of a DID URL (did:key:z...#z... names did:key:z...). */
export const didOfUrl = (didUrl: string): string => didUrl.split('#')[0] as string;

/**
 * The public key a did:jwk or did:key names (a DID URL's fragment is ignored: both methods have one
 * key); undefined for another method or an identifier that does not decode to a public EC key.
 */
export function keyOfLocalDid(didUrl: string): JWK | undefined {
  if (didUrl.length > MAX_DID_LENGTH) return undefined;
  const did = didOfUrl(didUrl);
  if (did.startsWith('did:jwk:')) return decodeDidJwk(did.slice('did:jwk:'.length));
  if (did.startsWith('did:key:z')) return decodeDidKey(did.slice('did:key:z'.length));
  return undefined;
}

function decodeDidJwk(encoded: string): JWK | undefined {
  let jwk: unknown;
  try {
    jwk = parseOutsideJson(Buffer.from(encoded, 'base64url').toString('utf8'), 'did:jwk');
  } catch {
    return undefined;
  }
  if (!isJsonObject(jwk) || jwk.kty !== 'EC' || jwk.d !== undefined) return undefined;
  if (typeof jwk.crv !== 'string' || typeof jwk.x !== 'string' || typeof jwk.y !== 'string') return undefined;
  return publicEcJwk(jwk as JWK);
}

function decodeDidKey(encoded: string): JWK | undefined {
  const bytes = base58btcDecode(encoded);
  if (!bytes || bytes.length !== P256_PUB_PREFIX.length + 33) return undefined;
  if (bytes[0] !== P256_PUB_PREFIX[0] || bytes[1] !== P256_PUB_PREFIX[1]) return undefined;
  let point: Buffer;
  try {
    point = ECDH.convertKey(bytes.subarray(P256_PUB_PREFIX.length), 'prime256v1', undefined, undefined, 'uncompressed') as Buffer;
  } catch {
    return undefined;
  }
  return {
    kty: 'EC',
    crv: 'P-256',
    x: point.subarray(1, 33).toString('base64url'),
    y: point.subarray(33, 65).toString('base64url'),
  };
}
