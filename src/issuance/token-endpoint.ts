// The token endpoint of the built-in authorization server for the pre-authorized code grant
// (OpenID4VCI 1.0 section 6). Read top to bottom, the steps are the rules, in the order applied.
import { timingSafeEqual } from 'node:crypto';
import type { SessionState } from '../sessions/model.js';
import { hashHandle } from '../sessions/service.js';
import type { IssuanceDeps } from './deps.js';
import { verifyDpop } from './dpop.js';
import { invalidGrant, invalidRequest, notFoundIssuer, unsupportedGrantType } from './errors.js';
import { issuerUrls } from './metadata.js';
import { HANDLE, PRE_AUTHORIZED_GRANT } from './offers.js';
import type { IssuerSettings } from './settings.js';

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
  constructor(private readonly deps: IssuanceDeps) {}

  async exchange(request: TokenRequest): Promise<TokenResponse> {
    if (!(await this.deps.tenantExists(request.tenantId))) throw notFoundIssuer(request.tenantId);
    const code = this.parseGrant(request.body);
    const session = await this.findSession(request.tenantId, code);
    const settings = await this.deps.settings.get(request.tenantId);
    this.checkUsable(session, settings);
    await this.checkTxCode(session, settings, request.body.tx_code);
    const jkt = await this.checkDpop(request, settings);
    await this.consume(session);
    const urls = issuerUrls(this.deps.publicUrl, request.tenantId);
    const accessToken = await this.deps.tokens.sign(
      { sessionId: session.id, tenantId: request.tenantId, ...(jkt && { jkt }) },
      urls.issuer,
      settings.accessTokenLifetimeSeconds,
    );
    return { access_token: accessToken, token_type: jkt ? 'DPoP' : 'Bearer', expires_in: settings.accessTokenLifetimeSeconds };
  }

  private parseGrant(body: Record<string, unknown>): string {
    if (body.grant_type !== PRE_AUTHORIZED_GRANT) throw unsupportedGrantType(`grant_type must be ${PRE_AUTHORIZED_GRANT}`);
    const code = body['pre-authorized_code'];
    if (typeof code !== 'string' || !code) throw invalidRequest('pre-authorized_code is required');
    return code;
  }

  private async findSession(tenantId: string, code: string): Promise<SessionState> {
    const session = await this.deps.sessions.findByHandle(HANDLE.preAuthorizedCode, code);
    if (!session || session.tenantId !== tenantId) throw invalidGrant('the pre-authorized code is unknown or expired');
    return session;
  }

  private checkUsable(session: SessionState, settings: IssuerSettings) {
    if (session.status === 'expired') throw invalidGrant('the offer has expired');
    if (session.consumed) throw invalidGrant('the pre-authorized code has already been used');
    if (session.status === 'failed' || session.txCodeFailedAttempts >= settings.txCodeMaxAttempts) {
      throw invalidGrant('the offer is locked after too many wrong transaction codes');
    }
  }

  /** A wrong code counts against the offer; the last allowed mistake locks it for good. */
  private async checkTxCode(session: SessionState, settings: IssuerSettings, given: unknown) {
    const expected = session.private?.txCodeHash as string | undefined;
    if (!expected) return;
    if (typeof given !== 'string' || !given) throw invalidRequest('tx_code is required for this offer');
    if (sameSecret(hashHandle(given), expected)) return;
    const failures = await this.deps.sessions.incrementTxCodeFailures(session.tenantId, session.id);
    await this.deps.sessions.log(session.id, 'warn', 'wrong transaction code', { attempt: failures });
    if (failures >= settings.txCodeMaxAttempts) {
      await this.deps.sessions.update(session.tenantId, session.id, { status: 'failed', errorReason: 'too many wrong transaction codes' });
      await this.deps.sessions.dropHandles(session.id, HANDLE.preAuthorizedCode);
      throw invalidGrant('wrong transaction code; the offer is now locked');
    }
    throw invalidGrant(`wrong transaction code (${settings.txCodeMaxAttempts - failures} attempt(s) left)`);
  }

  private async checkDpop(request: TokenRequest, settings: IssuerSettings): Promise<string | undefined> {
    if (!request.dpop) {
      if (settings.dpopRequired) throw invalidRequest('this issuer requires DPoP: send a DPoP proof');
      return undefined;
    }
    return verifyDpop(request.dpop, { tenantId: request.tenantId, method: 'POST', url: request.url }, this.deps.nonces);
  }

  /** One redemption only: the compare-and-set on `consumed` lets exactly one of two racing wallets through. */
  private async consume(session: SessionState) {
    const consumed = await this.deps.sessions.update(
      session.tenantId,
      session.id,
      { consumed: true, status: 'fetched' },
      { consumed: false, statuses: ['active', 'fetched'] },
    );
    if (!consumed) throw invalidGrant('the pre-authorized code has already been used');
    await this.deps.sessions.log(session.id, 'info', 'pre-authorized code redeemed');
  }
}
