// Key attestations (OpenID4VCI 1.0 appendix D.1): a JWT of type key-attestation+jwt in which a
// wallet provider vouches for holder keys (attested_keys) and how they are kept (key_storage,
// user_authentication). It arrives in the key_attestation header of a jwt proof, or alone as the
// `attestation` proof type. Wallet providers sign them, so the signer's x5c must chain to a trust
// wallet provider anchor of the issuer (Issuer.walletProviderAnchors), the same anchors that client attestations use.

import type { JWK } from 'jose';
import type { Clock } from '../../platform/clock.js';
import { certificateKey, chainsToTrusted, MAX_CHAIN_LENGTH } from '../../platform/crypto/certificate-chains.js';
import { type CompactJws, decodeJws, EC_JWS_ALGORITHMS, ecPublicKey, fitsAlgorithm, verifiesWith } from '../../platform/crypto/ec-jws.js';
import { invalidProof } from '../errors.js';

export const KEY_ATTESTATION_TYP = 'key-attestation+jwt';
/**
 * The spelling of drafts before 1.0, which wallets built on @openid4vc/openid4vci 0.4 still write
 * (that library accepts both as well); the attestation is the same document.
 */
const DRAFT_KEY_ATTESTATION_TYP = 'keyattestation+jwt';
const CLOCK_SKEW_SECONDS = 60;
/** Far beyond the largest batch an issuer accepts (issuer settings batchSize is at most 100). */
const MAX_ATTESTED_KEYS = 100;
const MAX_LEVELS = 20;

/** A credential configuration's key_attestations_required: the accepted values, when it names any. */
export interface KeyAttestationRequirement {
  key_storage?: string[];
  user_authentication?: string[];
}

export interface KeyAttestationTrust {
  /** key_attestations_required of the configuration; null or undefined when none is required. */
  required: KeyAttestationRequirement | null | undefined;
  /** PEM trust anchors of the issuer's wallet providers. */
  trustedCertificates: string[];
  /** What time the attestation (and its chain) is judged at. */
  clock: Clock;
}

export interface VerifiedKeyAttestation {
  /** The attested public keys, reduced to their public members. */
  attestedKeys: JWK[];
  nonce?: string;
}

/** The curve's signature algorithm names the curve an attested key must be on (P-256, P-384, P-521). */
const ALGORITHM_OF_CURVE: Record<string, string> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' };

/** A public EC key of an attested_keys entry, with only its public members; undefined when it is not one. */
export function publicEcKey(value: unknown): JWK | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const jwk = value as Record<string, unknown>;
  const alg = typeof jwk.crv === 'string' ? ALGORITHM_OF_CURVE[jwk.crv] : undefined;
  if (!alg || !ecPublicKey(jwk, alg)) return undefined;
  return { kty: 'EC', crv: jwk.crv as string, x: jwk.x as string, y: jwk.y as string };
}

/**
 * Verifies a key attestation: its type and algorithm, the x5c signer chained to a trusted wallet
 * provider, iat and exp, the attested keys, and the key_storage / user_authentication levels the
 * configuration accepts. `use` says how it came: as a jwt proof's header (exp required) or as the
 * attestation proof type (the caller checks its nonce).
 */
export function verifyKeyAttestation(jwt: unknown, use: 'jwt' | 'attestation', trust: KeyAttestationTrust): VerifiedKeyAttestation {
  const decoded = typeof jwt === 'string' ? decodeJws(jwt) : undefined;
  if (!decoded) throw invalidProof('the key attestation is not a JWT');
  const now = trust.clock.now();
  checkSigner(decoded, trust.trustedCertificates, now);
  checkTimes(decoded.payload, use, now);
  const attestedKeys = attestedKeysOf(decoded.payload);
  checkLevels(decoded.payload, trust.required);
  const { nonce } = decoded.payload;
  if (nonce !== undefined && typeof nonce !== 'string') throw invalidProof('the key attestation nonce must be a string');
  return { attestedKeys, ...(nonce !== undefined && { nonce }) };
}

function checkSigner({ header, ...jws }: CompactJws, trustedCertificates: string[], now: Date) {
  if (header.typ !== KEY_ATTESTATION_TYP && header.typ !== DRAFT_KEY_ATTESTATION_TYP)
    throw invalidProof(`the key attestation typ must be ${KEY_ATTESTATION_TYP}`);
  const alg = header.alg;
  if (typeof alg !== 'string' || !EC_JWS_ALGORITHMS.includes(alg))
    throw invalidProof(`the key attestation alg must be one of ${EC_JWS_ALGORITHMS.join(', ')}`);
  if (header.crit !== undefined) throw invalidProof('the key attestation must not carry crit');
  const { x5c } = header;
  if (!Array.isArray(x5c) || x5c.length === 0 || x5c.length > MAX_CHAIN_LENGTH || !x5c.every((c) => typeof c === 'string')) {
    throw invalidProof(
      "the key attestation must name its signer by x5c (the wallet provider's certificate chain); kid and trust_chain are not supported",
    );
  }
  let key: ReturnType<typeof certificateKey>;
  try {
    key = certificateKey(x5c[0] as string);
  } catch {
    throw invalidProof('the key attestation x5c does not hold certificates');
  }
  if (!fitsAlgorithm(key, alg) || !verifiesWith(alg, key, { header, ...jws })) {
    throw invalidProof('the key attestation signature does not verify with its x5c certificate');
  }
  if (trustedCertificates.length === 0) throw invalidProof('this issuer trusts no wallet provider, so no key attestation is accepted');
  if (!chainsToTrusted(x5c as string[], trustedCertificates, now)) {
    throw invalidProof('the key attestation signer is not trusted: its x5c chain leads to no wallet provider of this issuer');
  }
}

function checkTimes(payload: Record<string, unknown>, use: 'jwt' | 'attestation', at: Date) {
  const now = at.getTime() / 1000;
  const { iat, exp, nbf } = payload;
  if (typeof iat !== 'number') throw invalidProof('the key attestation must carry iat');
  if (iat > now + CLOCK_SKEW_SECONDS) throw invalidProof('the key attestation iat is in the future');
  if (exp === undefined && use === 'jwt') throw invalidProof('a key attestation in a jwt proof must carry exp');
  if (exp !== undefined && (typeof exp !== 'number' || exp <= now - CLOCK_SKEW_SECONDS))
    throw invalidProof('the key attestation has expired');
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > now + CLOCK_SKEW_SECONDS))
    throw invalidProof('the key attestation is not yet valid');
}

function attestedKeysOf(payload: Record<string, unknown>): JWK[] {
  const listed = payload.attested_keys;
  if (!Array.isArray(listed) || listed.length === 0) throw invalidProof('the key attestation must list attested_keys');
  if (listed.length > MAX_ATTESTED_KEYS) throw invalidProof(`the key attestation lists more than ${MAX_ATTESTED_KEYS} attested keys`);
  return listed.map((entry, i) => {
    const key = publicEcKey(entry);
    if (!key) throw invalidProof(`attested_keys[${i}] is not a public EC key on P-256, P-384 or P-521`);
    return key;
  });
}

/**
 * When the configuration names accepted key_storage or user_authentication values, the attestation
 * must assert one of them (the values are levels of attack potential resistance, compared exactly).
 */
function checkLevels(payload: Record<string, unknown>, required: KeyAttestationRequirement | null | undefined) {
  for (const claim of ['key_storage', 'user_authentication'] as const) {
    const asserted = payload[claim];
    if (
      asserted !== undefined &&
      (!Array.isArray(asserted) || asserted.length > MAX_LEVELS || !asserted.every((v) => typeof v === 'string'))
    ) {
      throw invalidProof(`the key attestation ${claim} must be an array of strings`);
    }
    const accepted = required?.[claim];
    if (!accepted?.length) continue;
    const levels = (asserted as string[] | undefined) ?? [];
    if (!levels.some((level) => accepted.includes(level))) {
      const named = levels.map(printable).join(', ') || 'none';
      throw invalidProof(
        `the key attestation ${claim} (${named}) names none of the values this credential accepts: ${accepted.map(printable).join(', ')}`,
      );
    }
  }
}

/**
 * A value shown in an error_description, which OAuth limits to printable ASCII without " and \
 * (RFC 6749 section 5.2); wallet-chosen strings are cut short too.
 */
function printable(value: string): string {
  const shown = value.slice(0, 80).replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '?');
  return value.length > 80 ? `${shown}...` : shown;
}
