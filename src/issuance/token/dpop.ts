// DPoP proofs (RFC 9449): accepted whenever a wallet sends one, required when the issuer says so.
// `verifyDpop` checks, in order: the proof's form, its key and signature, the request it names, its
// age, its binding to the access token, and that it was never used before.
import { createHash } from 'node:crypto';
import { decodeJws, EC_JWS_ALGORITHMS, ecPublicKey, ecThumbprint, verifiesWith, withinValidity } from '../../platform/crypto/ec-jws.js';
import { invalidDpopProof, invalidRequest } from '../errors.js';
import type { NonceStore } from '../nonce/store.js';

const MAX_AGE_SECONDS = 300;
const CLOCK_SKEW_SECONDS = 60;
export const DPOP_ALGORITHMS = EC_JWS_ALGORITHMS;

export interface DpopCheck {
  tenantId: string;
  method: string;
  url: string;
  /** At a resource endpoint: the access token the proof must be bound to (ath). */
  accessToken?: string;
}

/** Verifies a DPoP proof and returns the thumbprint of its key. */
export async function verifyDpop(proof: string, check: DpopCheck, nonces: NonceStore): Promise<string> {
  const decoded = decodeJws(proof);
  if (!decoded) throw invalidDpopProof('the DPoP header is not a JWT');
  const { header, payload } = decoded;
  if (header.typ !== 'dpop+jwt') throw invalidDpopProof('typ must be dpop+jwt');
  const alg = header.alg;
  if (typeof alg !== 'string' || !DPOP_ALGORITHMS.includes(alg)) throw invalidDpopProof(`alg must be one of ${DPOP_ALGORITHMS.join(', ')}`);
  if (header.crit !== undefined) throw invalidDpopProof('crit is not supported');
  const jwk = header.jwk as Record<string, unknown> | undefined;
  if (!jwk || typeof jwk !== 'object' || jwk.d !== undefined) throw invalidDpopProof('the header must carry the public jwk');
  const key = ecPublicKey(jwk, alg);
  if (!key || !verifiesWith(alg, key, decoded)) {
    throw invalidDpopProof('the DPoP proof signature does not verify');
  }
  if (!withinValidity(payload, CLOCK_SKEW_SECONDS)) throw invalidDpopProof('the DPoP proof has expired or is not yet valid');
  if (payload.htm !== check.method) throw invalidDpopProof('htm does not match the request method');
  if (payload.htu !== withoutQuery(check.url)) throw invalidDpopProof('htu does not match the request URL');
  const iat = payload.iat;
  const now = Date.now() / 1000;
  if (typeof iat !== 'number' || iat > now + CLOCK_SKEW_SECONDS || iat < now - MAX_AGE_SECONDS)
    throw invalidDpopProof('iat is missing or not recent');
  if (typeof payload.jti !== 'string' || !payload.jti) throw invalidDpopProof('jti is missing');
  if (check.accessToken !== undefined && payload.ath !== createHash('sha256').update(check.accessToken).digest('base64url')) {
    throw invalidDpopProof('ath does not match the access token');
  }
  if (!(await nonces.remember(check.tenantId, 'dpop-jti', payload.jti, MAX_AGE_SECONDS + CLOCK_SKEW_SECONDS))) {
    throw invalidDpopProof('this DPoP proof was used before');
  }
  return ecThumbprint(jwk);
}

const withoutQuery = (url: string) => url.split(/[?#]/)[0];

/** At the token endpoint: the key of the wallet's DPoP proof, if it sent one (required when the issuer says so). */
export async function tokenRequestDpopKey(
  request: { tenantId: string; url: string; dpop?: string },
  settings: { dpopRequired: boolean },
  nonces: NonceStore,
): Promise<string | undefined> {
  if (!request.dpop) {
    if (settings.dpopRequired) throw invalidRequest('this issuer requires DPoP: send a DPoP proof');
    return undefined;
  }
  return verifyDpop(request.dpop, { tenantId: request.tenantId, method: 'POST', url: request.url }, nonces);
}
