// The pre-authorized code grant (OpenID4VCI 1.0 section 6.1): the offer's code, and its transaction
// code when the offer asked for one. `redeem` lists the steps in the order they apply; each enforces
// one rule and fails with the error that rule names.

import { sql } from 'kysely';
import { sameSecret } from '../../platform/crypto/secrets.js';
import type { OnceInsert } from '../../platform/db/values.js';
import type { SessionState } from '../../sessions/model.js';
import { hashHandle, type SessionService } from '../../sessions/service.js';
import { replayedProof } from '../access/dpop.js';
import { invalidGrant, invalidRequest } from '../errors.js';
import { OFFER_HANDLE } from '../handles.js';
import type { Issuer } from '../issuers.js';
import { issuancePrivate } from '../session.js';
import type { GrantCall, TokenGrant } from './grant.js';
import type { PreAuthorizedCodeRequest } from './schemas.js';
import type { SessionTokens, TokenResponse } from './session-tokens.js';

export class PreAuthorizedCodeGrant implements TokenGrant<PreAuthorizedCodeRequest> {
  constructor(
    private readonly sessions: SessionService,
    private readonly tokens: SessionTokens,
  ) {}

  async redeem({ issuer, grant, dpopProof }: GrantCall<PreAuthorizedCodeRequest>): Promise<TokenResponse> {
    // The proof first: a wallet told to retry with a DPoP nonce has spent no transaction code attempt.
    const proof = dpopProof();
    const issue = (session: SessionState) => this.tokens.issue(issuer, session, { jkt: proof?.thumbprint, refreshable: false });
    // Without a transaction code, the offer is read and redeemed in one statement where the database
    // allows (PostgreSQL); when that statement did not redeem it, the steps below say why (or decide again).
    const fast = grant.tx_code === undefined ? await this.redeemInOne(issuer, grant, proof?.replay) : undefined;
    if (fast && !fast.inserted) throw replayedProof();
    if (fast?.moved && fast.session) return issue(fast.session);
    const session = fast ? this.ofIssuer(issuer, fast.session) : await this.findSession(issuer, grant, proof?.replay);
    this.checkUsable(session, issuer);
    await this.checkTxCode(session, issuer, grant.tx_code);
    await this.consume(session, issuer);
    return issue(session);
  }

  /** The offer of the code, read in the same round trip as the DPoP proof's jti is remembered (a replay is refused first). */
  private async findSession(issuer: Issuer, grant: PreAuthorizedCodeRequest, replay: OnceInsert | undefined): Promise<SessionState> {
    const code = grant['pre-authorized_code'];
    const { session, inserted } = replay
      ? await this.sessions.findByHandleInserting(OFFER_HANDLE.preAuthorizedCode, code, replay)
      : { session: await this.sessions.findByHandle(OFFER_HANDLE.preAuthorizedCode, code), inserted: true };
    if (!inserted) throw replayedProof();
    return this.ofIssuer(issuer, session);
  }

  private ofIssuer(issuer: Issuer, session: SessionState | undefined): SessionState {
    if (!session || session.tenantId !== issuer.tenantId) throw invalidGrant('the pre-authorized code is unknown or expired');
    return session;
  }

  /**
   * checkUsable, an offer without a transaction code, and consume, as one statement (with the DPoP
   * proof's jti): the same conditions as those steps, decided by the same compare-and-set. An offer
   * that does not say it has no transaction code is left to the steps.
   */
  private redeemInOne(issuer: Issuer, grant: PreAuthorizedCodeRequest, replay: OnceInsert | undefined) {
    const max = issuer.settings.txCodeMaxAttempts;
    return this.sessions.consumeByHandle(OFFER_HANDLE.preAuthorizedCode, grant['pre-authorized_code'], {
      from: ['active', 'fetched'],
      to: 'fetched',
      tenantId: issuer.tenantId,
      holds: sql<boolean>`found.tx_code_failed_attempts < ${max}
        and cast(found.public_data as jsonb) ->> 'txCodeRequired' = 'false'`,
      once: replay,
      log: REDEEMED,
    });
  }

  private checkUsable(session: SessionState, { settings }: Issuer) {
    if (session.status === 'expired') throw invalidGrant('the offer has expired');
    if (session.consumed) throw invalidGrant(USED);
    if (session.status === 'failed' || session.txCodeFailedAttempts >= settings.txCodeMaxAttempts) {
      throw invalidGrant(LOCKED);
    }
  }

  /**
   * A wrong code counts against the offer, in one statement that counts it only while attempts are
   * left; the last allowed mistake locks the offer for good. However many guesses race, at most
   * txCodeMaxAttempts are answered "wrong", and the redemption of a right one (`consume`) holds only
   * while fewer mistakes were counted before it.
   */
  private async checkTxCode(session: SessionState, { settings }: Issuer, given: string | undefined) {
    const expected = issuancePrivate(session)?.txCodeHash;
    if (!expected) return;
    if (!given) throw invalidRequest('tx_code is required for this offer');
    if (sameSecret(hashHandle(given), expected)) return;
    const max = settings.txCodeMaxAttempts;
    const failures = await this.sessions.countTxCodeFailure(session.tenantId, session.id, max);
    if (failures === undefined) throw await this.refusal(session);
    await this.sessions.log(session.id, 'warn', 'wrong transaction code', { attempt: failures });
    if (failures >= max) {
      await this.sessions.update(session.tenantId, session.id, { status: 'failed', errorReason: 'too many wrong transaction codes' });
      await this.sessions.dropHandles(session.id, OFFER_HANDLE.preAuthorizedCode);
      throw invalidGrant('wrong transaction code; the offer is now locked');
    }
    throw invalidGrant(`wrong transaction code (${max - failures} attempt(s) left)`);
  }

  /**
   * One redemption only, decided by a compare-and-set on the session's version: the offer is unredeemed, not failed,
   * and (with a transaction code) fewer wrong codes were counted than allowed. So exactly one of two
   * racing wallets gets through, and never one that guessed after the lock-out.
   */
  private async consume(session: SessionState, { settings }: Issuer) {
    const consumed = await this.sessions.update(
      session.tenantId,
      session.id,
      { consumed: true, status: 'fetched' },
      {
        expected: {
          consumed: false,
          statuses: ['active', 'fetched'],
          holds: (current) => current.txCodeFailedAttempts < settings.txCodeMaxAttempts,
        },
        from: session,
        log: REDEEMED,
      },
    );
    if (!consumed) throw await this.refusal(session);
  }

  /** Why a guess or redemption lost its race (the database decided; this only names the reason). */
  private async refusal(session: SessionState) {
    const current = await this.sessions.find(session.tenantId, session.id);
    return invalidGrant(current?.consumed ? USED : LOCKED);
  }
}

const REDEEMED = { level: 'info', message: 'pre-authorized code redeemed' } as const;
const LOCKED = 'the offer is locked after too many wrong transaction codes';
const USED = 'the pre-authorized code has already been used';
