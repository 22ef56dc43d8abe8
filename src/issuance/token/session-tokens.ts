// What a successful grant hands out, and how it is taken back: an access token for the session
// (bound to the DPoP key when one was proven) and, in the authorization code flow, a refresh token.
// Refresh tokens are session handles: only their hash is stored, they die with the session, and each
// is used once (rotation); a spent one is kept until its expiry so that a replay is recognised.
import { randomBytes } from 'node:crypto';
import type { SessionState } from '../../sessions/model.js';
import type { SessionService } from '../../sessions/service.js';
import type { IssuanceTokens } from '../access/access-tokens.js';
import { AUTHORIZATION_HANDLE } from '../handles.js';
import type { Issuer } from '../issuers.js';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  refresh_token?: string;
  /** The scope values granted, when the wallet asked by scope (RFC 6749 section 5.1: unknown values were ignored). */
  scope?: string;
  /** OpenID4VCI 1.0 section 6.2: what was granted by authorization_details, with the identifiers to request it by. */
  authorization_details?: { type: 'openid_credential'; credential_configuration_id: string; credential_identifiers: string[] }[];
}

export interface Grant {
  jkt: string | undefined;
  /** Whether this grant comes with a refresh token (the authorization code flow's grants do). */
  refreshable: boolean;
  /** Configurations granted by authorization_details (their identifier is their id: one dataset each). */
  byDetails?: string[];
  /** The scope values granted (AuthorizationRequest.scope). */
  scope?: string;
  /** A refresh token the grant stored already (newRefreshToken, written with the grant's own statement). */
  refreshToken?: string;
  /** The refresh that made this grant (IssuanceAccessToken.round); 0 or absent for the first. */
  round?: number;
}

export class SessionTokens {
  constructor(
    private readonly sessions: SessionService,
    private readonly tokens: IssuanceTokens,
  ) {}

  async issue({ urls, settings, tenantId }: Issuer, session: SessionState, grant: Grant): Promise<TokenResponse> {
    const lifetime = settings.accessTokenLifetimeSeconds;
    const { jkt } = grant;
    const accessToken = this.tokens.sign(
      { sessionId: session.id, tenantId, round: grant.round ?? 0, ...(jkt && { jkt }) },
      urls.issuer,
      lifetime,
    );
    const refreshToken =
      grant.refreshToken ?? (grant.refreshable ? await this.addRefreshToken(session, settings.refreshTokenLifetimeSeconds) : undefined);
    return {
      access_token: accessToken,
      token_type: jkt ? 'DPoP' : 'Bearer',
      expires_in: lifetime,
      ...(refreshToken && { refresh_token: refreshToken }),
      ...(grant.scope && { scope: grant.scope }),
      ...(grant.byDetails?.length && {
        authorization_details: grant.byDetails.map((id) => ({
          type: 'openid_credential' as const,
          credential_configuration_id: id,
          credential_identifiers: [id],
        })),
      }),
    };
  }

  /** A new refresh token and its expiry, for the grant to store with its own write; none when the lifetime is 0 (refresh tokens off). */
  newRefreshToken(lifetimeSeconds: number): { token: string; expiresAt: string } | undefined {
    if (lifetimeSeconds === 0) return undefined;
    return {
      token: randomBytes(32).toString('base64url'),
      expiresAt: new Date(this.sessions.clock.now().getTime() + lifetimeSeconds * 1000).toISOString(),
    };
  }

  private async addRefreshToken(session: SessionState, lifetimeSeconds: number): Promise<string | undefined> {
    const made = this.newRefreshToken(lifetimeSeconds);
    if (made) await this.sessions.addHandle(session.id, AUTHORIZATION_HANDLE.refreshToken, made.token, made.expiresAt);
    return made?.token;
  }

  /**
   * A replayed authorization code or refresh token means a secret leaked: every token of the session
   * stops working (refresh tokens are dropped, access tokens refused by the session mark) and the
   * session fails, which its integrator sees.
   */
  async revoke(session: SessionState, reason: string) {
    await this.sessions.dropHandles(session.id, AUTHORIZATION_HANDLE.refreshToken);
    await this.sessions.update(session.tenantId, session.id, { status: 'failed', errorReason: reason, public: { tokensRevoked: true } });
    await this.sessions.log(session.id, 'warn', 'tokens revoked', { reason });
  }
}
