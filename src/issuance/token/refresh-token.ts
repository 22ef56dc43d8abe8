// The refresh token grant (RFC 6749 section 6) for tokens of the authorization code flow. Refresh
// tokens rotate: each use spends the token and returns a new one; a spent token presented again
// means two parties hold the chain, so the whole session's tokens are revoked (RFC 9700 section
// 4.14.2). A session whose credentials are revoked or suspended, or that is past its expiresAt, is not
// refreshed: the statement that spends the token decides it. `redeem` lists the steps in the order they apply.
import type { RawBuilder } from 'kysely';
import type { SessionState } from '../../sessions/model.js';
import { type SessionService, spentHandle } from '../../sessions/service.js';
import { invalidGrant } from '../errors.js';
import { AUTHORIZATION_HANDLE } from '../handles.js';
import type { Issuer } from '../issuers.js';
import { issuancePrivate, issuancePublic } from '../session.js';
import { checkAttestedInstance } from './authorization-code.js';
import type { GrantCall, TokenGrant } from './grant.js';
import type { RefreshTokenRequest } from './schemas.js';
import type { SessionTokens, TokenResponse } from './session-tokens.js';

const PURPOSE = AUTHORIZATION_HANDLE.refreshToken;

export class RefreshTokenGrant implements TokenGrant<RefreshTokenRequest> {
  constructor(
    private readonly sessions: SessionService,
    private readonly tokens: SessionTokens,
    /** SQL over the session row that holds while none of its credentials is revoked, suspended or otherwise not valid. */
    private readonly credentialsValid: RawBuilder<boolean>,
  ) {}

  async redeem({ issuer, grant, attested, dpopKey }: GrantCall<RefreshTokenRequest>): Promise<TokenResponse> {
    const token = grant.refresh_token;
    const session = await this.findToken(issuer, token);
    checkClientId(session, grant.client_id);
    checkSessionUsable(session);
    const request = issuancePrivate(session)?.authorizationRequest;
    if (request) checkAttestedInstance(request, attested, 'refresh token');
    const jkt = checkBinding(session, await dpopKey());
    await this.rotate(issuer, token);
    const round = await this.nextRound(session, jkt);
    const { authorizedByDetails, authorizedScope } = issuancePublic(session);
    return this.tokens.issue(issuer, session, { jkt, refreshable: true, byDetails: authorizedByDetails, scope: authorizedScope, round });
  }

  /**
   * Counts the refresh (a compare-and-set on the session's version): its access token is the next round, which may
   * obtain each granted configuration once more (OpenID4VCI 1.0 section 14.5). Tokens redeemed as
   * Bearer and refreshed with a DPoP proof are bound to that key from now on (RFC 9449 section 5), as
   * if the code had been redeemed with it; only the request that rotated the token gets here, so the
   * first proof binds.
   */
  private async nextRound(session: SessionState, jkt: string | undefined): Promise<number> {
    let binds = false;
    const counted = await this.sessions.update(session.tenantId, session.id, (current) => {
      binds = jkt !== undefined && issuancePrivate(current)?.refreshJkt === undefined;
      return { public: { refreshes: (issuancePublic(current).refreshes ?? 0) + 1 }, ...(binds && { private: { refreshJkt: jkt } }) };
    });
    if (!counted) throw invalidGrant('the issuance session of this refresh token has ended');
    if (binds) await this.sessions.log(session.id, 'info', 'refresh tokens bound to the DPoP key of the refresh request');
    return issuancePublic(counted).refreshes ?? 0;
  }

  private async findToken(issuer: Issuer, token: string): Promise<SessionState> {
    const session = await this.sessions.findByHandle(PURPOSE, token);
    if (session?.tenantId === issuer.tenantId) return session;
    await this.revokeOnReplay(issuer, token);
    throw invalidGrant('the refresh token is unknown or expired');
  }

  /**
   * Spends the token while its session is in use and its credentials are valid (one statement, so a
   * revocation or the expiry cannot come between check and rotation); losing the race to another
   * use of the same token is a replay too.
   */
  private async rotate(issuer: Issuer, token: string) {
    if (await this.sessions.spendHandleOfLiveSession(PURPOSE, token, this.credentialsValid)) return;
    await this.refuseForSession(token);
    await this.revokeOnReplay(issuer, token);
    throw invalidGrant('the refresh token is unknown or expired');
  }

  /** The token is still unspent, so its session's state refused it: says which, in the answer and the session log. */
  private async refuseForSession(token: string) {
    const session = await this.sessions.findByHandle(PURPOSE, token);
    if (!session) return;
    const reason =
      Date.parse(session.expiresAt) <= this.sessions.clock.now().getTime()
        ? 'the issuance session of this refresh token has expired'
        : session.status === 'failed' || session.status === 'expired'
          ? 'the issuance session of this refresh token has ended'
          : "the session's credentials are revoked or suspended";
    await this.sessions.log(session.id, 'warn', 'refresh refused', { reason });
    throw invalidGrant(reason);
  }

  private async revokeOnReplay(issuer: Issuer, token: string) {
    const spent = await this.sessions.findByHandle(spentHandle(PURPOSE), token);
    if (spent?.tenantId !== issuer.tenantId) return;
    await this.tokens.revoke(spent, 'a refresh token was used twice');
    throw invalidGrant('the refresh token was already used; every token of this session is revoked');
  }
}

/** client_id is optional for a public client here, but when given it must be the one the tokens were issued to. */
function checkClientId(session: SessionState, clientId: string | undefined) {
  if (clientId !== undefined && issuancePrivate(session)?.authorizationRequest?.clientId !== clientId) {
    throw invalidGrant('the refresh token was issued to another client');
  }
}

function checkSessionUsable(session: SessionState) {
  if (session.status === 'failed' || session.status === 'expired' || issuancePublic(session).tokensRevoked) {
    throw invalidGrant('the issuance session of this refresh token has ended');
  }
}

/** A refresh token obtained with DPoP is bound to that key (RFC 9449 section 5): only a proof of it refreshes. */
function checkBinding(session: SessionState, jkt: string | undefined): string | undefined {
  const bound = issuancePrivate(session)?.refreshJkt;
  if (bound === undefined) return jkt;
  if (jkt !== bound) throw invalidGrant('the refresh token is bound to another DPoP key');
  return jkt;
}
