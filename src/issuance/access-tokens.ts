// Access tokens of the built-in authorization server for the credential endpoints: short-lived
// HS256 JWTs naming the session, bound to a DPoP key (cnf.jkt) when the wallet used DPoP.
import { createSecretKey, type KeyObject } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import { deriveKey } from '../platform/crypto/derive.js';

export interface IssuanceAccessToken {
  sessionId: string;
  tenantId: string;
  /** Thumbprint of the DPoP key the token is bound to. */
  jkt?: string;
}

export class IssuanceTokens {
  private readonly key: KeyObject;

  constructor(masterSecret: string) {
    this.key = createSecretKey(deriveKey(masterSecret, 'issuance-access-token'));
  }

  sign(token: IssuanceAccessToken, issuer: string, lifetimeSeconds: number) {
    return new SignJWT({ tenant: token.tenantId, ...(token.jkt && { cnf: { jkt: token.jkt } }) })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
      .setIssuer(issuer)
      .setAudience(issuer)
      .setSubject(token.sessionId)
      .setIssuedAt()
      .setExpirationTime(`${lifetimeSeconds}s`)
      .sign(this.key);
  }

  /** Undefined when the token is not one of ours for this issuer, or has expired. */
  async verify(token: string, issuer: string): Promise<IssuanceAccessToken | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer, audience: issuer, algorithms: ['HS256'], typ: 'at+jwt' });
      const jkt = (payload.cnf as { jkt?: string } | undefined)?.jkt;
      return { sessionId: payload.sub as string, tenantId: payload.tenant as string, ...(jkt && { jkt }) };
    } catch {
      return undefined;
    }
  }
}
