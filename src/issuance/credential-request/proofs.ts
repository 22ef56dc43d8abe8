// Key proofs of a credential request (OpenID4VCI 1.0, appendix F.1: `jwt` proofs), each rule a step.
import type { JWK } from 'jose';
import { type CompactJws, decodeJws, EC_JWS_ALGORITHMS, ecPublicKey, verifiesWith, withinValidity } from '../../platform/crypto/ec-jws.js';
import { invalidNonce, invalidProof } from '../errors.js';
import type { NonceStore } from '../nonce/store.js';

export const PROOF_TYP = 'openid4vci-proof+jwt';
export const PROOF_ALGORITHMS = EC_JWS_ALGORITHMS;
const CLOCK_SKEW_SECONDS = 60;

export interface ProofContext {
  tenantId: string;
  /** The credential issuer identifier: the required audience. */
  issuer: string;
  /** How old a proof may be (the nonce lifetime). */
  maxAgeSeconds: number;
}

export interface VerifiedProof {
  jwk: JWK;
  nonce: string;
}

function checkHeader(jwt: string): { decoded: CompactJws; alg: string; jwk: JWK } {
  const decoded = decodeJws(jwt);
  if (!decoded) throw invalidProof('the proof is not a JWT');
  const { header } = decoded;
  if (header.typ !== PROOF_TYP) throw invalidProof(`typ must be ${PROOF_TYP}`);
  const alg = header.alg;
  if (typeof alg !== 'string' || !PROOF_ALGORITHMS.includes(alg)) throw invalidProof(`alg must be one of ${PROOF_ALGORITHMS.join(', ')}`);
  if (header.crit !== undefined) throw invalidProof('crit is not supported');
  const jwk = header.jwk as JWK | undefined;
  if (!jwk || typeof jwk !== 'object') throw invalidProof('the proof must carry the holder key as jwk (kid and x5c are not supported)');
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
  const now = Date.now() / 1000;
  if (typeof iat !== 'number') throw invalidProof('iat is required');
  if (iat > now + CLOCK_SKEW_SECONDS) throw invalidProof('iat is in the future');
  if (iat < now - context.maxAgeSeconds) throw invalidProof('the proof is too old');
  if (!withinValidity(payload, CLOCK_SKEW_SECONDS)) throw invalidProof('the proof has expired or is not yet valid');
  if (typeof payload.nonce !== 'string') throw invalidNonce('the proof carries no nonce; get one from the nonce endpoint');
  return payload.nonce;
}

/** Verifies the proofs of one request: valid each, all for the same fresh c_nonce, which is then spent. */
export async function verifyProofs(jwts: string[], context: ProofContext, nonces: NonceStore): Promise<VerifiedProof[]> {
  const proofs: VerifiedProof[] = [];
  for (const jwt of jwts) {
    const { decoded, alg, jwk } = checkHeader(jwt);
    proofs.push({ jwk, nonce: checkSignatureAndClaims(decoded, alg, jwk, context) });
  }
  const [first] = proofs;
  if (!first) throw invalidProof('no proof given');
  if (proofs.some((p) => p.nonce !== first.nonce)) throw invalidProof('all proofs of one request must use the same nonce');
  if (!(await nonces.consume(context.tenantId, 'c_nonce', first.nonce))) {
    throw invalidNonce('the nonce is unknown, expired or already used; get a fresh one from the nonce endpoint');
  }
  return proofs;
}
