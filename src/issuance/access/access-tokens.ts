// Access tokens of the built-in authorization server for the credential endpoints: short-lived
// HS256 JWTs naming the session, bound to a DPoP key (cnf.jkt) when the wallet used DPoP. Signed and
// checked with node:crypto's HMAC directly: two per issuance, and WebCrypto's asynchronous HMAC (what
// jose uses) cost more than the whole JWT around it.

import { createHmac, type KeyObject, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import { deriveSecretKey } from '../../platform/crypto/derive.js';

export interface IssuanceAccessToken {
  sessionId: string;
  tenantId: string;
  /** Thumbprint of the DPoP key the token is bound to. */
  jkt?: string;
  /**
   * Which grant of the session the token carries: 0 for the code's (or pre-authorized code's), n for
   * the n-th refresh. Each round may obtain each configuration once (OpenID4VCI 1.0 section 14.5).
   */
  round: number;
}

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'at+jwt' })).toString('base64url');

interface Claims {
  iss: string;
  aud: string;
  sub: string;
  tenant: string;
  iat: number;
  exp: number;
  /** RFC 9068 section 2.2: each token is its own, even two issued in the same second for one session and key. */
  jti: string;
  cnf?: { jkt: string };
  /** IssuanceAccessToken.round, when not 0. */
  round?: number;
}

export class IssuanceTokens {
  private readonly key: KeyObject;

  constructor(
    masterSecret: string,
    private readonly clock: Clock,
  ) {
    this.key = deriveSecretKey(masterSecret, 'issuance-access-token');
  }

  sign(token: IssuanceAccessToken, issuer: string, lifetimeSeconds: number): string {
    const iat = Math.floor(this.clock.now().getTime() / 1000);
    const claims: Claims = {
      iss: issuer,
      aud: issuer,
      sub: token.sessionId,
      tenant: token.tenantId,
      iat,
      exp: iat + lifetimeSeconds,
      jti: randomBytes(12).toString('base64url'),
      ...(token.jkt && { cnf: { jkt: token.jkt } }),
      ...(token.round > 0 && { round: token.round }),
    };
    const signingInput = `${HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    return `${signingInput}.${this.mac(signingInput).toString('base64url')}`;
  }

  /** Undefined when the token is not one of ours for this issuer, or has expired. */
  verify(token: string, issuer: string): IssuanceAccessToken | undefined {
    const [header, payload, signature, ...rest] = token.split('.');
    if (header !== HEADER || !payload || !signature || rest.length) return undefined;
    const given = Buffer.from(signature, 'base64url');
    const expected = this.mac(`${header}.${payload}`);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Claims;
    if (claims.iss !== issuer || claims.aud !== issuer || !(claims.exp > this.clock.now().getTime() / 1000)) return undefined;
    return {
      sessionId: claims.sub,
      tenantId: claims.tenant,
      round: Number.isSafeInteger(claims.round) ? (claims.round as number) : 0,
      ...(claims.cnf?.jkt && { jkt: claims.cnf.jkt }),
    };
  }

  private mac(signingInput: string): Buffer {
    return createHmac('sha256', this.key).update(signingInput).digest();
  }
}
