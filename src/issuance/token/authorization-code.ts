// The authorization code grant (RFC 6749 section 4.1.3, PKCE per RFC 7636, DPoP per RFC 9449). `redeem`
// lists the steps in the order they apply; each enforces one rule and fails with the error that rule
// names. The code is spent before anything but the DPoP proof is checked, so a stolen code gets one try at most;
// a code presented again revokes what its first use obtained (RFC 6749 section 4.1.2).
import { createHash } from 'node:crypto';
import { sameSecret } from '../../platform/crypto/secrets.js';
import type { OnceInsert } from '../../platform/db/values.js';
import type { SessionState } from '../../sessions/model.js';
import { type SessionService, spentHandle } from '../../sessions/service.js';
import { replayedProof } from '../access/dpop.js';
import { offerRefusal } from '../authorization/offer-session.js';
import { WALLET_INITIATED } from '../authorization/par.js';
import { replayedAttestationProof, type WalletAttestation } from '../authorization/wallet-attestation.js';
import { invalidGrant, invalidRequest } from '../errors.js';
import { AUTHORIZATION_HANDLE } from '../handles.js';
import type { Issuer } from '../issuers.js';
import { type AuthorizationRequest, issuancePrivate, issuancePublic } from '../session.js';
import type { GrantCall, TokenGrant } from './grant.js';
import type { AuthorizationCodeRequest } from './schemas.js';
import type { SessionTokens, TokenResponse } from './session-tokens.js';

export class AuthorizationCodeGrant implements TokenGrant<AuthorizationCodeRequest> {
  constructor(
    private readonly sessions: SessionService,
    private readonly tokens: SessionTokens,
    /** The handle purpose of the codes this grant redeems: the built-in server's, or the chained one's. */
    private readonly codePurpose: string = AUTHORIZATION_HANDLE.code,
  ) {}

  async redeem({ issuer, grant, attested, attestationReplay, dpopProof }: GrantCall<AuthorizationCodeRequest>): Promise<TokenResponse> {
    const clientId = clientOf(grant, attested);
    // The proof first: a wallet told to retry with a DPoP nonce must find its code unspent.
    const proof = dpopProof();
    const proven = proof?.thumbprint;
    const session = await this.takeCode(issuer, grant.code, attestationReplay, proof?.replay);
    const request = pushedRequest(session);
    checkClientId(request, clientId);
    checkAttestedInstance(request, attested);
    checkRedirectUri(request, grant.redirect_uri);
    checkPkce(request, grant.code_verifier);
    const jkt = checkDpopJkt(request, proven);
    checkOfferUsable(session);
    const refresh = this.tokens.newRefreshToken(issuer.settings.refreshTokenLifetimeSeconds);
    await this.consume(issuer, session, request, jkt, refresh);
    const grantMade = { jkt, refreshable: true, refreshToken: refresh?.token, byDetails: request.byDetails, scope: request.scope };
    return this.tokens.issue(issuer, session, grantMade);
  }

  /**
   * Exactly one caller spends a live code; anyone else presenting it is a replay. The proofs' jtis are
   * remembered by the statement that spends it, which spends nothing when one of them was used before.
   */
  private async takeCode(
    issuer: Issuer,
    code: string,
    attestationReplay: OnceInsert | undefined,
    dpopReplay: OnceInsert | undefined,
  ): Promise<SessionState> {
    const inserts = [attestationReplay, dpopReplay].filter((insert) => insert !== undefined);
    const { session, inserted } = await this.sessions.spendHandleReading(this.codePurpose, code, issuer.tenantId, inserts);
    if (attestationReplay && !inserted[0]) throw replayedAttestationProof();
    if (dpopReplay && !inserted.at(-1)) throw replayedProof();
    if (session) return session;
    await this.revokeOnReplay(issuer, code);
    throw invalidGrant('the authorization code is unknown or expired');
  }

  private async revokeOnReplay(issuer: Issuer, code: string) {
    const spent = await this.sessions.findByHandle(spentHandle(this.codePurpose), code);
    if (spent?.tenantId !== issuer.tenantId) return;
    await this.tokens.revoke(spent, 'an authorization code was used twice');
    throw invalidGrant('the authorization code was already used; the tokens issued for it are revoked');
  }

  /**
   * Redeems the offer (once: compare-and-set on `consumed`) and records what the wallet was granted. A
   * wallet-initiated session, opened for WALLET_INITIATED_PENDING_SECONDS, now gets the offer lifetime.
   */
  private async consume(
    issuer: Issuer,
    session: SessionState,
    request: AuthorizationRequest,
    jkt: string | undefined,
    refresh: { token: string; expiresAt: string } | undefined,
  ) {
    const walletInitiated = issuancePublic(session).responseType === WALLET_INITIATED;
    const offerExpiry = new Date(Date.parse(session.createdAt) + issuer.settings.offerLifetimeSeconds * 1000).toISOString();
    const consumed = await this.sessions.update(
      session.tenantId,
      session.id,
      {
        consumed: true,
        status: 'fetched',
        public: {
          authorized: request.credentialConfigurationIds,
          authorizedByDetails: request.byDetails,
          ...(request.scope && { authorizedScope: request.scope }),
        },
        ...(jkt && { private: { refreshJkt: jkt } }),
        ...(walletInitiated && { expiresAt: offerExpiry }),
      },
      {
        expected: { consumed: false, statuses: ['active', 'fetched'] },
        from: session,
        log: { level: 'info', message: 'authorization code redeemed' },
        // The refresh token exists exactly when the offer was redeemed, written in the same statement.
        follows: () =>
          refresh ? [this.sessions.handleFollowing(AUTHORIZATION_HANDLE.refreshToken, refresh.token, refresh.expiresAt)] : [],
      },
    );
    if (!consumed) throw invalidGrant('the credential offer has already been redeemed');
  }
}

function pushedRequest(session: SessionState): AuthorizationRequest {
  const request = issuancePrivate(session)?.authorizationRequest;
  if (!request) throw invalidGrant('the authorization code is unknown or expired');
  return request;
}

/** The client names itself, or its attestation names it (attest_jwt_client_auth). */
function clientOf(grant: AuthorizationCodeRequest, attested: WalletAttestation | undefined): string {
  const clientId = grant.client_id ?? attested?.clientId;
  if (clientId === undefined) throw invalidRequest('client_id is required');
  return clientId;
}

function checkClientId(request: AuthorizationRequest, clientId: string) {
  if (request.clientId !== clientId) throw invalidGrant('the authorization code was issued to another client');
}

/**
 * A request pushed with a client attestation binds the code, and the refresh tokens that follow, to
 * that wallet instance: each token request must be attested by its key.
 */
export function checkAttestedInstance(
  request: AuthorizationRequest,
  attested: WalletAttestation | undefined,
  what: 'authorization code' | 'refresh token' = 'authorization code',
) {
  if (request.attestationJkt === undefined) return;
  if (attested === undefined) throw invalidGrant(`this ${what} was issued to an attested wallet instance: send its client attestation`);
  if (attested.instanceJkt !== request.attestationJkt) throw invalidGrant(`the ${what} was issued to another wallet instance`);
}

function checkRedirectUri(request: AuthorizationRequest, redirectUri: string) {
  if (request.redirectUri !== redirectUri) throw invalidGrant('redirect_uri does not match the authorization request');
}

function checkPkce(request: AuthorizationRequest, verifier: string) {
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  if (!sameSecret(challenge, request.codeChallenge)) throw invalidGrant('code_verifier does not match the code_challenge');
}

/** A request pushed with DPoP binds the code to that key (RFC 9449 section 10). */
function checkDpopJkt(request: AuthorizationRequest, jkt: string | undefined): string | undefined {
  if (request.dpopJkt === undefined) return jkt;
  if (jkt === undefined) throw invalidGrant('this authorization code is bound to a DPoP key: send a DPoP proof');
  if (jkt !== request.dpopJkt) throw invalidGrant('the DPoP proof key is not the one the authorization request was bound to');
  return jkt;
}

function checkOfferUsable(session: SessionState) {
  const refusal = offerRefusal(session);
  if (refusal) throw invalidGrant(refusal);
}
