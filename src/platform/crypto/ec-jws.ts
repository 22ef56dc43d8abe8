// Verifying a compact JWS signed with ECDSA (ES256, ES384, ES512) under a public JWK, synchronously
// with node:crypto: wallets' DPoP and key proofs arrive several times per issuance, and WebCrypto's
// asynchronous verify (what jose uses) cost several times the check itself. Only what these proofs
// need: the key's curve must be the algorithm's, and the caller checks header and claims.
import { createHash, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { isJsonObject } from '../json.js';
import { verifyP1363 } from './ecdsa-signatures.js';

const CURVES: Record<string, { crv: string; hash: string }> = {
  ES256: { crv: 'P-256', hash: 'sha256' },
  ES384: { crv: 'P-384', hash: 'sha384' },
  ES512: { crv: 'P-521', hash: 'sha512' },
};

export const EC_JWS_ALGORITHMS = Object.keys(CURVES);

export interface CompactJws {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  signingInput: string;
  signature: Buffer;
}

/** Header and payload of a compact JWS, unverified; undefined when it is not one. */
export function decodeJws(jws: string): CompactJws | undefined {
  const parts = jws.split('.');
  if (parts.length !== 3) return undefined;
  const [header, payload, signature] = parts as [string, string, string];
  const parsedHeader = parseObject(header);
  const parsedPayload = parseObject(payload);
  if (!parsedHeader || !parsedPayload) return undefined;
  return {
    header: parsedHeader,
    payload: parsedPayload,
    signingInput: `${header}.${payload}`,
    signature: Buffer.from(signature, 'base64url'),
  };
}

// A wallet signs several proofs with one key in a flow; importing it once saves most of the cost.
const recentKeys = new Map<string, KeyObject>();
const RECENT_KEYS_MAX = 1_000;

/** The key of a public EC JWK for `alg`; undefined when it is not a public key on that algorithm's curve. */
export function ecPublicKey(jwk: Record<string, unknown>, alg: string): KeyObject | undefined {
  const curve = CURVES[alg];
  if (!curve || jwk.kty !== 'EC' || jwk.crv !== curve.crv || jwk.d !== undefined) return undefined;
  if (typeof jwk.x !== 'string' || typeof jwk.y !== 'string') return undefined;
  const id = `${jwk.crv}.${jwk.x}.${jwk.y}`;
  const known = recentKeys.get(id);
  if (known) return known;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: { kty: 'EC', crv: jwk.crv, x: jwk.x, y: jwk.y } as JsonWebKey, format: 'jwk' });
  } catch {
    return undefined;
  }
  if (recentKeys.size >= RECENT_KEYS_MAX) recentKeys.clear();
  recentKeys.set(id, key);
  return key;
}

/** The RFC 7638 thumbprint (SHA-256, base64url) of a public EC JWK: its required members in lexicographic order. */
export function ecThumbprint(jwk: Record<string, unknown>): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash('sha256').update(canonical).digest('base64url');
}

const NAMED_CURVES: Record<string, string> = { ES256: 'prime256v1', ES384: 'secp384r1', ES512: 'secp521r1' };

/** Whether `key` (from a certificate, say) is an EC public key on the curve `alg` requires. */
export function fitsAlgorithm(key: KeyObject, alg: string): boolean {
  return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === NAMED_CURVES[alg];
}

/**
 * Verifies a compact JWS with an EC key, as jose's jwtVerify would for these algorithms: a supported
 * alg on the key's curve, no crit, the signature, and exp/nbf (when present) at `now` (seconds since
 * the epoch, the caller's clock) with `skewSeconds`.
 */
export function verifyEcJws(jws: string, key: KeyObject, skewSeconds: number, now: number): CompactJws | undefined {
  const decoded = decodeJws(jws);
  const alg = decoded?.header.alg;
  if (!decoded || typeof alg !== 'string' || !fitsAlgorithm(key, alg) || decoded.header.crit !== undefined) return undefined;
  if (!verifiesWith(alg, key, decoded) || !withinValidity(decoded.payload, skewSeconds, now)) return undefined;
  return decoded;
}

/** Whether the JWS's signature (JOSE form: r || s) verifies with `key` under `alg`. */
export function verifiesWith(alg: string, key: KeyObject, jws: CompactJws): boolean {
  const curve = CURVES[alg];
  if (!curve) return false;
  try {
    return verifyP1363(curve.hash, Buffer.from(jws.signingInput), key, jws.signature);
  } catch {
    return false;
  }
}

/** Whether the optional exp and nbf claims allow the JWS at `now` (seconds since the epoch), within `skewSeconds`. */
export function withinValidity(payload: Record<string, unknown>, skewSeconds: number, now: number): boolean {
  if (payload.exp !== undefined && !(typeof payload.exp === 'number' && payload.exp > now - skewSeconds)) return false;
  return payload.nbf === undefined || (typeof payload.nbf === 'number' && payload.nbf <= now + skewSeconds);
}

function parseObject(segment: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
