// The token endpoint of the built-in authorization server (OpenID4VCI 1.0 section 6): the grant it
// redeems, then an access token bound to the wallet's DPoP key when it sent one. `exchange` lists
// the steps in the order they apply; each enforces one rule and fails with the error that rule names.
import { timingSafeEqual } from 'node:crypto';
import type { SessionState } from '../../sessions/model.js';
import { hashHandle, type SessionService } from '../../sessions/service.js';
import { HANDLE } from '../credential-offer/schemas.js';
import { invalidGrant, invalidRequest } from '../errors.js';
import type { Issuer, IssuerDirectory } from '../issuers.js';
import type { NonceStore } from '../nonce/store.js';
import { issuancePrivate } from '../session.js';
import type { IssuanceTokens } from './access-tokens.js';
import { verifyDpop } from './dpop.js';
import { type PreAuthorizedCodeRequest, parseTokenRequest } from './schemas.js';

export interface TokenRequest {
  tenantId: string;
  body: Record<string, unknown>;
  dpop?: string;
  /** The URL the wallet called, for the DPoP htu check. */
  url: string;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
}

const sameSecret = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export class TokenEndpoint {
  constructor(
    private readonly issuers: IssuerDirectory,
    private readonly sessions: SessionService,
    private readonly nonces: NonceStore,
    private readonly tokens: IssuanceTokens,
  ) {}

  async exchange(request: TokenRequest): Promise<TokenResponse> {
    const issuer = await this.issuers.get(request.tenantId);
    const grant = parseTokenRequest(request.body);
    const session = await this.findSession(issuer, grant);
    this.checkUsable(session, issuer);
    await this.checkTxCode(session, issuer, grant.tx_code);
    const jkt = await this.checkDpop(request, issuer);
    await this.consume(session);
    return this.issueAccessToken(issuer, session, jkt);
  }

  private async findSession(issuer: Issuer, grant: PreAuthorizedCodeRequest): Promise<SessionState> {
    const session = await this.sessions.findByHandle(HANDLE.preAuthorizedCode, grant['pre-authorized_code']);
    if (!session || session.tenantId !== issuer.tenantId) throw invalidGrant('the pre-authorized code is unknown or expired');
    return session;
  }

  private checkUsable(session: SessionState, { settings }: Issuer) {
    if (session.status === 'expired') throw invalidGrant('the offer has expired');
    if (session.consumed) throw invalidGrant('the pre-authorized code has already been used');
    if (session.status === 'failed' || session.txCodeFailedAttempts >= settings.txCodeMaxAttempts) {
      throw invalidGrant('the offer is locked after too many wrong transaction codes');
    }
  }

  /** A wrong code counts against the offer; the last allowed mistake locks it for good. */
  private async checkTxCode(session: SessionState, { settings }: Issuer, given: string | undefined) {
    const expected = issuancePrivate(session)?.txCodeHash;
    if (!expected) return;
    if (!given) throw invalidRequest('tx_code is required for this offer');
    if (sameSecret(hashHandle(given), expected)) return;
    const failures = await this.sessions.incrementTxCodeFailures(session.tenantId, session.id);
    await this.sessions.log(session.id, 'warn', 'wrong transaction code', { attempt: failures });
    if (failures >= settings.txCodeMaxAttempts) {
      await this.sessions.update(session.tenantId, session.id, { status: 'failed', errorReason: 'too many wrong transaction codes' });
      await this.sessions.dropHandles(session.id, HANDLE.preAuthorizedCode);
      throw invalidGrant('wrong transaction code; the offer is now locked');
    }
    throw invalidGrant(`wrong transaction code (${settings.txCodeMaxAttempts - failures} attempt(s) left)`);
  }

  private async checkDpop(request: TokenRequest, { settings }: Issuer): Promise<string | undefined> {
    if (!request.dpop) {
      if (settings.dpopRequired) throw invalidRequest('this issuer requires DPoP: send a DPoP proof');
      return undefined;
    }
    return verifyDpop(request.dpop, { tenantId: request.tenantId, method: 'POST', url: request.url }, this.nonces);
  }

  /** One redemption only: the compare-and-set on `consumed` lets exactly one of two racing wallets through. */
  private async consume(session: SessionState) {
    const consumed = await this.sessions.update(
      session.tenantId,
      session.id,
      { consumed: true, status: 'fetched' },
      { consumed: false, statuses: ['active', 'fetched'] },
    );
    if (!consumed) throw invalidGrant('the pre-authorized code has already been used');
    await this.sessions.log(session.id, 'info', 'pre-authorized code redeemed');
  }

  private issueAccessToken({ urls, settings, tenantId }: Issuer, session: SessionState, jkt: string | undefined): TokenResponse {
    const lifetime = settings.accessTokenLifetimeSeconds;
    const accessToken = this.tokens.sign({ sessionId: session.id, tenantId, ...(jkt && { jkt }) }, urls.issuer, lifetime);
    return { access_token: accessToken, token_type: jkt ? 'DPoP' : 'Bearer', expires_in: lifetime };
  }
}
