// Key proofs of a credential request (OpenID4VCI 1.0 appendix F): `jwt` proofs, each proving
// possession of one holder key and optionally carrying a key attestation in its header, and the
// `attestation` proof type, a key attestation alone. Each rule is a step; the result is the list of
// holder keys the credentials are bound to, one credential per key.

import type { JWK } from 'jose';
import { didOfUrl, keyOfLocalDid } from '../../dids/encoding.js';
import type { Clock } from '../../platform/clock.js';
import {
  type CompactJws,
  decodeJws,
  EC_JWS_ALGORITHMS,
  ecPublicKey,
  ecThumbprint,
  verifiesWith,
  withinValidity,
} from '../../platform/crypto/ec-jws.js';
import { invalidNonce, invalidProof } from '../errors.js';
import { type KeyAttestationTrust, verifyKeyAttestation } from './key-attestation.js';
import type { KeyProofs } from './schemas.js';

export const PROOF_TYP = 'openid4vci-proof+jwt';
export const PROOF_ALGORITHMS = EC_JWS_ALGORITHMS;
const CLOCK_SKEW_SECONDS = 60;

export interface ProofContext {
  tenantId: string;
  /** The credential issuer identifier: the required audience. */
  issuer: string;
  /** How old a proof may be (the nonce lifetime). */
  maxAgeSeconds: number;
  /** What time the proof is judged at. */
  clock: Clock;
  /** Most credentials (holder keys) one request may ask for. */
  batchSize: number;
  keyAttestations: KeyAttestationTrust;
}

interface VerifiedJwtProof {
  /** The keys to bind: the proof's own key, or every key its key attestation attests. */
  keys: JWK[];
  nonce: string;
}

/**
 * The key a did:key or did:jwk kid names (OpenID4VCI 1.0 F.1: kid as a DID URL), undefined for any
 * other kid. A did:key is kept as the key's kid: a W3C VC then names the holder by that did:key.
 */
function keyOfDidKid(kid: unknown): JWK | undefined {
  if (typeof kid !== 'string') return undefined;
  const jwk = keyOfLocalDid(kid);
  return jwk && kid.startsWith('did:key:') ? { ...jwk, kid: didOfUrl(kid) } : jwk;
}

function checkHeader(jwt: string): { decoded: CompactJws; alg: string; jwk: JWK } {
  const decoded = decodeJws(jwt);
  if (!decoded) throw invalidProof('the proof is not a JWT');
  const { header } = decoded;
  if (header.typ !== PROOF_TYP) throw invalidProof(`typ must be ${PROOF_TYP}`);
  const alg = header.alg;
  if (typeof alg !== 'string' || !PROOF_ALGORITHMS.includes(alg)) throw invalidProof(`alg must be one of ${PROOF_ALGORITHMS.join(', ')}`);
  if (header.crit !== undefined) throw invalidProof('crit is not supported');
  const jwk = (header.jwk as JWK | undefined) ?? keyOfDidKid(header.kid);
  if (!jwk || typeof jwk !== 'object')
    throw invalidProof('the proof must carry the holder key as jwk, or as kid a did:key or did:jwk DID URL (x5c is not supported)');
  if (jwk.d) throw invalidProof('the jwk must not contain a private key');
  return { decoded, alg, jwk };
}

function checkSignatureAndClaims(decoded: CompactJws, alg: string, jwk: JWK, context: ProofContext) {
  const key = ecPublicKey(jwk as Record<string, unknown>, alg);
  if (!key || !verifiesWith(alg, key, decoded)) {
    throw invalidProof('the proof signature does not verify with its jwk');
  }
  const { payload } = decoded;
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (!audiences.includes(context.issuer)) throw invalidProof(`aud must be the credential issuer ${context.issuer}`);
  const iat = payload.iat;
  const now = context.clock.now().getTime() / 1000;
  if (typeof iat !== 'number') throw invalidProof('iat is required');
  if (iat > now + CLOCK_SKEW_SECONDS) throw invalidProof('iat is in the future');
  if (iat < now - context.maxAgeSeconds) throw invalidProof('the proof is too old');
  if (!withinValidity(payload, CLOCK_SKEW_SECONDS, now)) throw invalidProof('the proof has expired or is not yet valid');
  if (typeof payload.nonce !== 'string') throw invalidNonce('the proof carries no nonce; get one from the nonce endpoint');
  return payload.nonce;
}

/**
 * A jwt proof's key attestation (its key_attestation header): verified whenever present, required
 * when the configuration requires key attestations. It must attest the proof's own key and carry
 * the proof's c_nonce; the credentials are then bound to every attested key (OpenID4VCI 1.0 F.1).
 */
function attestedKeysOfProof(decoded: CompactJws, jwk: JWK, nonce: string, context: ProofContext): JWK[] {
  const attestation = decoded.header.key_attestation;
  if (attestation === undefined) {
    if (context.keyAttestations.required) {
      throw invalidProof(
        'this credential requires a key attestation (key_attestations_required): send it in the key_attestation header of the jwt proof, or use the attestation proof type',
      );
    }
    return [jwk];
  }
  const verified = verifyKeyAttestation(attestation, 'jwt', context.keyAttestations);
  const proofKey = ecThumbprint(jwk as Record<string, unknown>);
  if (!verified.attestedKeys.some((key) => ecThumbprint(key as Record<string, unknown>) === proofKey)) {
    throw invalidProof('the proof is not signed by a key of its key attestation (attested_keys does not hold the proof jwk)');
  }
  if (verified.nonce !== nonce) throw invalidProof('the key attestation nonce must be the c_nonce of the proof');
  return verified.attestedKeys;
}

function verifyJwtProof(jwt: string, context: ProofContext): VerifiedJwtProof {
  const { decoded, alg, jwk } = checkHeader(jwt);
  const nonce = checkSignatureAndClaims(decoded, alg, jwk, context);
  return { keys: attestedKeysOfProof(decoded, jwk, nonce, context), nonce };
}

/** One credential per distinct key: proofs that share a key attestation name its keys once. */
function distinctKeys(keys: JWK[], batchSize: number): JWK[] {
  const byThumbprint = new Map(keys.map((key) => [ecThumbprint(key as Record<string, unknown>), key]));
  if (byThumbprint.size > batchSize) {
    throw invalidProof(`the proofs name ${byThumbprint.size} holder keys; this issuer issues at most ${batchSize} credentials per request`);
  }
  return [...byThumbprint.values()];
}

/** The error of a c_nonce that was not there to spend. */
export const spentNonce = () => invalidNonce('the nonce is unknown, expired or already used; get a fresh one from the nonce endpoint');

/** The `attestation` proof type: one key attestation, fresh by its nonce (the c_nonce), without proof of possession. */
function checkAttestationProof(jwt: string, context: ProofContext): CheckedProofs {
  if (!context.keyAttestations.required) {
    throw invalidProof('the attestation proof type is only taken where the credential requires key attestations; send jwt proofs');
  }
  const verified = verifyKeyAttestation(jwt, 'attestation', context.keyAttestations);
  if (verified.nonce === undefined) throw invalidProof('the key attestation of an attestation proof must carry the c_nonce as nonce');
  return { keys: distinctKeys(verified.attestedKeys, context.batchSize), nonce: verified.nonce };
}

/** Whether the proofs hold a key attestation: an attestation proof, or a jwt proof with a key_attestation header. */
export function carriesKeyAttestation(proofs: KeyProofs | undefined): boolean {
  if (proofs?.type === 'attestation') return true;
  return (proofs?.jwts ?? []).some((jwt) => decodeJws(jwt)?.header.key_attestation !== undefined);
}

/** The holder keys of valid proofs, and the c_nonce they were made over (still to be spent). */
export interface CheckedProofs {
  keys: JWK[];
  nonce: string;
}

/**
 * Checks the proofs of one request and returns the holder keys to bind: every jwt proof valid and
 * all for the same c_nonce, or one valid attestation proof over a c_nonce. The nonce is not spent
 * here: the caller spends it (NonceStore.consuming) in the statement that takes the configuration,
 * and refuses the request with `spentNonce()` when it was not there.
 */
export function checkKeyProofs(proofs: KeyProofs | undefined, context: ProofContext): CheckedProofs {
  if (proofs?.type === 'attestation') return checkAttestationProof(proofs.jwt, context);
  const jwts = proofs?.jwts ?? [];
  if (jwts.length === 0) {
    throw invalidProof(
      context.keyAttestations.required
        ? 'this credential is bound to a holder key: send jwt proofs with key attestations, or an attestation proof'
        : 'this credential is bound to a holder key: send jwt proofs',
    );
  }
  const verified = jwts.map((jwt) => verifyJwtProof(jwt, context));
  const [first] = verified as [VerifiedJwtProof];
  if (verified.some((p) => p.nonce !== first.nonce)) throw invalidProof('all proofs of one request must use the same nonce');
  const keys = distinctKeys(
    verified.flatMap((p) => p.keys),
    context.batchSize,
  );
  return { keys, nonce: first.nonce };
}
