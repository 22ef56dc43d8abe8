// DPoP proofs (RFC 9449): accepted whenever a wallet sends one, required when the issuer says so.
import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, decodeProtectedHeader, importJWK, type JWK, jwtVerify } from 'jose';
import { invalidDpopProof } from './errors.js';
import type { NonceStore } from './nonces.js';

const ALGORITHMS = ['ES256', 'ES384', 'ES512'];
const MAX_AGE_SECONDS = 300;
const CLOCK_SKEW_SECONDS = 60;

export interface DpopCheck {
  tenantId: string;
  method: string;
  url: string;
  /** At a resource endpoint: the access token the proof must be bound to (ath). */
  accessToken?: string;
}

/** Verifies a DPoP proof and returns the thumbprint of its key. */
export async function verifyDpop(proof: string, check: DpopCheck, nonces: NonceStore): Promise<string> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(proof);
  } catch {
    throw invalidDpopProof('the DPoP header is not a JWT');
  }
  if (header.typ !== 'dpop+jwt') throw invalidDpopProof('typ must be dpop+jwt');
  if (!header.alg || !ALGORITHMS.includes(header.alg)) throw invalidDpopProof(`alg must be one of ${ALGORITHMS.join(', ')}`);
  const jwk = header.jwk as JWK | undefined;
  if (!jwk || jwk.d) throw invalidDpopProof('the header must carry the public jwk');
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(proof, await importJWK(jwk, header.alg), { typ: 'dpop+jwt', algorithms: ALGORITHMS }));
  } catch {
    throw invalidDpopProof('the DPoP proof signature does not verify');
  }
  if (payload.htm !== check.method) throw invalidDpopProof('htm does not match the request method');
  if (payload.htu !== withoutQuery(check.url)) throw invalidDpopProof('htu does not match the request URL');
  const iat = payload.iat as number | undefined;
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
  return calculateJwkThumbprint(jwk);
}

const withoutQuery = (url: string) => url.split(/[?#]/)[0];
