// Who may call the credential, deferred credential and notification endpoints: the holder of an
// access token of this issuer (or of one of its external authorization servers), bearer or DPoP-bound
// (then with a fresh DPoP proof of the same key), whose session is still redeemable and whose tokens
// were not revoked (a replayed code or refresh token).
import type { SessionState } from '../../sessions/model.js';
import type { SessionService } from '../../sessions/service.js';
import type { ResourceRequest } from '../client-request.js';
import { invalidToken } from '../errors.js';
import type { Issuer, IssuerDirectory } from '../issuers.js';
import { issuancePublic } from '../session.js';
import type { IssuanceAccessToken, IssuanceTokens } from './access-tokens.js';
import { type DpopProofs, replayedProof } from './dpop.js';
import type { ExternalAccessTokens } from './external-access-tokens.js';

export interface WalletAccess {
  issuer: Issuer;
  token: IssuanceAccessToken;
  session: SessionState;
}

export class WalletAccessCheck {
  constructor(
    private readonly issuers: IssuerDirectory,
    private readonly tokens: IssuanceTokens,
    private readonly dpop: DpopProofs,
    private readonly sessions: SessionService,
    private readonly external: ExternalAccessTokens,
  ) {}

  async authenticate(request: ResourceRequest): Promise<WalletAccess> {
    const issuer = await this.issuers.get(request.tenantId);
    const match = /^(Bearer|DPoP)\s+(\S+)$/i.exec(request.authorization ?? '');
    if (!match) throw invalidToken('an access token is required');
    // Both groups take part in every match: the defaults only tell the type checker so.
    const [, scheme = '', raw = ''] = match;
    const token = this.tokens.verify(raw, issuer.urls.issuer);
    if (!token) return this.authenticateExternal(request, issuer, scheme, raw);
    if (token.tenantId !== request.tenantId) throw invalidToken('the access token is invalid or expired', scheme);
    // A DPoP proof's jti is remembered in the same round trip as the session is read.
    const replay = this.checkBinding(request, issuer, token, scheme, raw);
    const { session, inserted } = replay
      ? await this.sessions.findInserting(request.tenantId, token.sessionId, replay)
      : { session: await this.sessions.find(request.tenantId, token.sessionId), inserted: true };
    if (!inserted) throw replayedProof();
    if (!session?.consumed || issuancePublic(session).tokensRevoked) {
      throw invalidToken('the session of this access token is no longer valid', scheme);
    }
    return { issuer, token, session };
  }

  /** A token of an external authorization server of the issuer, checked as ours are once its session is known. */
  private async authenticateExternal(request: ResourceRequest, issuer: Issuer, scheme: string, raw: string): Promise<WalletAccess> {
    const external = await this.external.verify(issuer, raw, scheme);
    if (!external) throw invalidToken('the access token is invalid or expired', scheme);
    const binding = { sessionId: '', tenantId: issuer.tenantId, round: 0, ...(external.jkt && { jkt: external.jkt }) };
    const replay = this.checkBinding(request, issuer, binding, scheme, raw);
    if (replay && !(await replay.executeTakeFirst()).numInsertedOrUpdatedRows) throw replayedProof();
    const session = await this.external.sessionOf(issuer, external, scheme);
    if (issuancePublic(session).tokensRevoked) throw invalidToken('the session of this access token is no longer valid', scheme);
    return { issuer, token: { ...binding, sessionId: session.id }, session };
  }

  /**
   * Checks that the token is used as it is bound: a DPoP-bound one with a proof of its key. Returns
   * the statement remembering the proof's jti, for the caller to send (the proof is a replay when it adds nothing).
   */
  private checkBinding(request: ResourceRequest, issuer: Issuer, token: IssuanceAccessToken, scheme: string, raw: string) {
    if (!token.jkt) {
      if (scheme.toLowerCase() === 'dpop' || issuer.settings.dpopRequired)
        throw invalidToken('this access token is not DPoP-bound', scheme);
      return undefined;
    }
    if (scheme.toLowerCase() !== 'dpop' || !request.dpop) {
      throw invalidToken('this access token is DPoP-bound: use the DPoP scheme with a proof', 'DPoP');
    }
    const proofCheck = { tenantId: request.tenantId, method: 'POST', url: request.url, accessToken: raw, settings: issuer.settings };
    const { thumbprint, replay } = this.dpop.check(request.dpop, proofCheck);
    if (thumbprint !== token.jkt) {
      throw invalidToken('the DPoP proof is signed by another key than the token is bound to', 'DPoP');
    }
    return replay;
  }
}
