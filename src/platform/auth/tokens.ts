// Management access tokens of the integrated token server: HS256 JWTs under a key derived from
// MASTER_SECRET. An external identity provider will plug in beside this as another TokenVerifier.
import { createSecretKey } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import { deriveKey } from '../crypto/derive.js';
import type { Role } from './roles.js';

export const TOKEN_AUDIENCE = 'svc-service';
const CLOCK_SKEW_SECONDS = 30;

export interface TokenClaims {
  clientId: string;
  tenantId: string | null;
  roles: Role[];
}

export interface TokenVerifier {
  /** Resolves to the token's subject, or rejects with an InvalidTokenError saying why. */
  verify(token: string): Promise<{ clientId: string }>;
}

export class InvalidTokenError extends Error {}

export interface TokenSigner {
  sign(claims: TokenClaims): Promise<string>;
  readonly expiresIn: number;
}

export function integratedTokens(options: { masterSecret: string; issuer: string; expiresIn: number }) {
  // A KeyObject, made once: given raw bytes, jose would import the key again on every call.
  const key = createSecretKey(deriveKey(options.masterSecret, 'management-token'));
  const signer: TokenSigner = {
    expiresIn: options.expiresIn,
    sign: ({ clientId, tenantId, roles }) =>
      new SignJWT({ roles, ...(tenantId ? { tenant_id: tenantId } : {}) })
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
        .setIssuer(options.issuer)
        .setAudience(TOKEN_AUDIENCE)
        .setSubject(clientId)
        .setIssuedAt()
        .setJti(crypto.randomUUID())
        .setExpirationTime(`${options.expiresIn}s`)
        .sign(key),
  };
  // Verified tokens, so that a client's repeated calls skip signature and claim checks; an entry
  // is honoured only until the token's own expiry.
  const verified = new Map<string, { clientId: string; expiresAt: number }>();
  const verifier: TokenVerifier = {
    async verify(token) {
      const known = verified.get(token);
      if (known && known.expiresAt > Date.now()) return { clientId: known.clientId };
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: ['HS256'],
          issuer: options.issuer,
          audience: TOKEN_AUDIENCE,
          clockTolerance: CLOCK_SKEW_SECONDS,
          requiredClaims: ['sub', 'exp'],
        });
        if (verified.size >= 10_000) verified.clear();
        verified.set(token, { clientId: payload.sub as string, expiresAt: (payload.exp as number) * 1000 });
        return { clientId: payload.sub as string };
      } catch (err) {
        throw new InvalidTokenError(describeJoseError(err));
      }
    },
  };
  return { signer, verifier };
}

function describeJoseError(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'the access token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) return `the access token's ${err.claim} claim is not accepted`;
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'the access token signature is invalid';
  return 'the access token is malformed or not signed by this service';
}
