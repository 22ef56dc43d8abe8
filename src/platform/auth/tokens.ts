// Management access tokens of the integrated token server: HS256 JWTs under a key derived from
// MASTER_SECRET. An external identity provider (src/identity-provider) is another TokenVerifier.
import { createSecretKey } from 'node:crypto';
import { errors, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { deriveKey } from '../crypto/derive.js';
import type { Principal } from './principal.js';
import { ROLES, type Role } from './roles.js';

export const TOKEN_AUDIENCE = 'svc-service';
const CLOCK_SKEW_SECONDS = 30;

/** The claim that ties a token to one incarnation of its client (the client's token generation). */
const GENERATION_CLAIM = 'client_gen';

export interface TokenClaims {
  clientId: string;
  tenantId: string | null;
  roles: Role[];
  /** The client's token generation when the token was issued; the token is honoured only while it is current. */
  tokenGeneration: string;
  /**
   * A token exchanged by a service administrator (src/auth/exchange.ts): `clientId` is the
   * administrator, acting in `tenantId` with `roles`; signed as RFC 8693's `act` claim.
   */
  actor?: string;
  /** When the token expires, in seconds since the epoch; absent: expiresIn from now. */
  expiresAt?: number;
}

export interface VerifiedToken {
  clientId: string;
  tokenGeneration: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  /** Seconds since the epoch (the iat claim), when the token says. */
  issuedAt?: number;
  /** The sub claim, when the token has one (at an identity provider: the person or client it was issued to). */
  subject?: string;
  /**
   * Who the caller is, when the token itself says so (an external identity provider, which keeps
   * the clients); absent, the service's own client record is authoritative.
   */
  principal?: Principal;
  /** An exchanged token: the tenant its client, a service administrator, acts in, and the roles it chose. */
  actingIn?: { tenantId: string; roles: Role[] };
}

export interface TokenVerifier {
  /** Resolves to what the token says of its client, or rejects with an InvalidTokenError saying why. */
  verify(token: string): Promise<VerifiedToken>;
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
    sign: ({ clientId, tenantId, roles, tokenGeneration, actor, expiresAt }) =>
      new SignJWT({
        roles,
        ...(tenantId ? { tenant_id: tenantId } : {}),
        [GENERATION_CLAIM]: tokenGeneration,
        ...(actor ? { act: { sub: actor } } : {}),
      })
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
        .setIssuer(options.issuer)
        .setAudience(TOKEN_AUDIENCE)
        .setSubject(clientId)
        .setIssuedAt()
        .setJti(crypto.randomUUID())
        .setExpirationTime(expiresAt ?? `${options.expiresIn}s`)
        .sign(key),
  };
  // Verified tokens, so that a client's repeated calls skip signature and claim checks; an entry
  // is honoured only until the token's own expiry.
  const verified = new Map<string, VerifiedToken>();
  const verifier: TokenVerifier = {
    async verify(token) {
      const known = verified.get(token);
      // Management tokens are signed and verified by jose on the system clock; the cache agrees with it.
      if (known && known.expiresAt > Date.now()) return known;
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, key, {
          algorithms: ['HS256'],
          issuer: options.issuer,
          audience: TOKEN_AUDIENCE,
          clockTolerance: CLOCK_SKEW_SECONDS,
          requiredClaims: ['sub', 'exp'],
        }));
      } catch (err) {
        throw new InvalidTokenError(describeJoseError(err));
      }
      const tokenGeneration = payload[GENERATION_CLAIM];
      // Tokens from before generations existed carry none: they are not bound to a client, so not honoured.
      if (typeof tokenGeneration !== 'string' || !tokenGeneration) {
        throw new InvalidTokenError(`the access token has no ${GENERATION_CLAIM} claim; get a new token`);
      }
      const result: VerifiedToken = { clientId: payload.sub as string, tokenGeneration, expiresAt: (payload.exp as number) * 1000 };
      if (payload.act !== undefined) result.actingIn = actingInOf(payload);
      if (verified.size >= 10_000) verified.clear();
      verified.set(token, result);
      return result;
    },
  };
  return { signer, verifier };
}

/**
 * What an exchanged token says of the tenant its administrator acts in. Only this service signs
 * these tokens, so a malformed one is a bug or a forgery: refused, never read leniently. The token's
 * own roles count (not its client's), so they must name roles a tenant's client can hold.
 */
function actingInOf(payload: JWTPayload): { tenantId: string; roles: Role[] } {
  const act = payload.act as { sub?: unknown } | null;
  const tenantId = payload.tenant_id;
  const roles = payload.roles;
  const knownRoles = (value: unknown): value is Role[] =>
    Array.isArray(value) && value.every((role) => typeof role === 'string' && role !== 'tenants:manage' && ROLES.includes(role as Role));
  if (typeof act !== 'object' || act === null || act.sub !== payload.sub || typeof tenantId !== 'string' || !knownRoles(roles)) {
    throw new InvalidTokenError('the access token has a malformed act claim');
  }
  return { tenantId, roles };
}

function describeJoseError(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'the access token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) return `the access token's ${err.claim} claim is not accepted`;
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'the access token signature is invalid';
  return 'the access token is malformed or not signed by this service';
}
