// Moving an interactive authorization from step to step: starting a step (an OpenID4VP request, or
// a request_uri for the web step) with a fresh auth_session, recording what a completed step
// produced, issuing the authorization code after the last one, and stopping the flow when a step
// fails. Every move is a compare-and-set on the offer's session (still unredeemed) and is logged.
import { randomBytes } from 'node:crypto';
import { type Executor, inTransaction } from '../../platform/db/values.js';
import { OAuthError } from '../../platform/http/problem.js';
import type { SessionState } from '../../sessions/model.js';
import type { SessionExpectation, SessionService } from '../../sessions/service.js';
import type { EmbeddedPresentationState, EmbeddedPresentations } from '../../verification/embedded/presentations.js';
import { issueCode } from '../authorization/authorize.js';
import { REQUEST_URI_LIFETIME_SECONDS, REQUEST_URI_PREFIX } from '../authorization/schemas.js';
import { mergeClaims } from '../claim-sources.js';
import { invalidRequest } from '../errors.js';
import { AUTHORIZATION_HANDLE, STEP_HANDLE } from '../handles.js';
import type { Issuer } from '../issuers.js';
import { type AuthorizationRequest, type AuthorizationResult, type InteractiveState, issuancePrivate } from '../session.js';
import { currentAction, type IaeAction } from './actions.js';
import { FACES, type FlowAnswer, typeNameOf } from './faces.js';
import { AUTH_SESSION_LIFETIME_SECONDS } from './schemas.js';

/** What verification offers interactive authorization: an OpenID4VP request and the check of its answer. */
export type InteractivePresentations = Pick<EmbeddedPresentations, 'request' | 'verify'>;

const random = () => randomBytes(32).toString('base64url');
/**
 * Only an offer still unredeemed moves on, and only while the authorization request the flow runs for
 * is still the offer's: decided by a compare-and-set on the session's version, so a request pushed meanwhile always wins.
 */
const stillFor = (requestId: string | undefined): SessionExpectation => ({
  consumed: false,
  statuses: ['active', 'fetched'],
  holds: (current) => issuancePrivate(current)?.authorizationRequest?.requestId === requestId,
});

/** A handle's expiry: its lifetime, but never beyond the offer's. */
const expiryOf = (now: Date, session: SessionState, seconds: number) =>
  new Date(Math.min(now.getTime() + seconds * 1000, Date.parse(session.expiresAt))).toISOString();

export class InteractiveProgress {
  constructor(
    private readonly db: Executor,
    private readonly sessions: SessionService,
    private readonly presentations: InteractivePresentations,
  ) {}

  /** The step `state.step` begins: what it needs from the wallet, with a fresh auth_session, named as the wallet named its type. */
  async start(issuer: Issuer, session: SessionState, state: InteractiveState, result: AuthorizationResult): Promise<FlowAnswer> {
    const action = currentAction(state);
    const authSession = random();
    const type = typeNameOf(FACES[state.face], state.interactionTypes, action.type);
    if (action.type === 'openid4vp-presentation') {
      const { request, state: presentation } = await this.presentationRequest(issuer, session, state, action);
      await this.save(session, { ...state, pending: { kind: 'presentation', ...presentation } }, result, { authSession });
      await this.sessions.log(session.id, 'info', 'interactive authorization: presentation requested', stepDetails(state, action.label));
      return { kind: 'presentation', type, authSession, openid4vpRequest: { request } };
    }
    const requestUri = random();
    await this.save(session, { ...state, pending: { kind: 'web', completed: false } }, result, { authSession, requestUri });
    await this.sessions.log(session.id, 'info', 'interactive authorization: web step offered', stepDetails(state, action.label));
    const now = this.sessions.clock.now();
    return {
      kind: 'web',
      type,
      authSession,
      requestUri: `${REQUEST_URI_PREFIX}${requestUri}`,
      expiresIn: Math.round((Date.parse(expiryOf(now, session, REQUEST_URI_LIFETIME_SECONDS)) - now.getTime()) / 1000),
    };
  }

  /** The current step is done: the next one starts, or after the last one the wallet gets its authorization code. */
  async advance(issuer: Issuer, session: SessionState, state: InteractiveState, result: AuthorizationResult): Promise<FlowAnswer> {
    const next = { ...state, step: state.step + 1, pending: undefined };
    if (next.step < next.actions.length) return this.start(issuer, session, next, result);
    return { kind: 'authorized', code: await this.finish(session, state.requestId, result) };
  }

  /**
   * Every step is done: the result stays with the session for the claim sources, and a code is issued
   * for the request `requestId`, which must still be the session's.
   */
  async finish(session: SessionState, requestId: string | undefined, result: AuthorizationResult): Promise<string> {
    return inTransaction(this.db, async (trx) => {
      const stored = await this.sessions.update(
        session.tenantId,
        session.id,
        { private: { interactiveAuthorization: undefined, authorizationResult: result } },
        { expected: stillFor(requestId), db: trx },
      );
      if (!stored) throw invalidRequest('the credential offer is no longer valid');
      await this.dropHandles(session.id, trx);
      await this.sessions.log(session.id, 'info', 'interactive authorization completed', { steps: result.steps.length }, trx);
      return issueCode(this.sessions, session, { db: trx });
    });
  }

  /** The web step's result arrived and more steps follow: the wallet continues with a fresh auth_session. */
  async webCompleted(session: SessionState, state: InteractiveState, result: AuthorizationResult): Promise<string> {
    const authSession = random();
    await this.save(session, { ...state, pending: { kind: 'web', completed: true } }, result, { authSession });
    return authSession;
  }

  /** A step failed: the flow ends (no auth_session works any more); a new initial request starts it over. */
  async stop(session: SessionState, reason: string) {
    await inTransaction(this.db, async (trx) => {
      await this.sessions.update(session.tenantId, session.id, { private: { interactiveAuthorization: undefined } }, { db: trx });
      await this.dropHandles(session.id, trx);
      await this.sessions.log(session.id, 'warn', 'interactive authorization stopped', { reason }, trx);
    });
  }

  /**
   * The OpenID4VP request of a presentation step, answered back to the flow's endpoint: the action's
   * choice of an encrypted (the default) or plain response, in that face's response mode. A step that
   * cannot be requested (its presentation configuration deleted or changed since) is the tenant's
   * fault, not the wallet's: the flow ends, the session log says why, and the wallet is told only that
   * the issuer failed.
   */
  private async presentationRequest(
    issuer: Issuer,
    session: SessionState,
    state: InteractiveState,
    action: Extract<IaeAction, { type: 'openid4vp-presentation' }>,
  ) {
    const face = FACES[state.face];
    const endpoint = face.endpoint(issuer.urls);
    try {
      return await this.presentations.request({
        tenantId: issuer.tenantId,
        presentationConfigId: action.presentationConfigId,
        responseMode: face.responseMode(action.responseMode !== 'iae_post'),
        expectedOrigin: new URL(endpoint).origin,
        ...(face.expectedUrl && { expectedUrl: endpoint }),
        lifetimeSeconds: AUTH_SESSION_LIFETIME_SECONDS,
      });
    } catch (err) {
      if (err instanceof OAuthError) throw err;
      await this.stop(session, `the presentation step cannot be requested: ${err instanceof Error ? err.message : String(err)}`);
      throw new OAuthError(500, 'server_error', 'the issuer cannot request the presentation this step needs');
    }
  }

  /** The state, the result so far and the step's handles, in one transaction; earlier handles of the flow stop working. */
  private async save(
    session: SessionState,
    state: InteractiveState,
    result: AuthorizationResult,
    handles: { authSession: string; requestUri?: string },
  ) {
    await inTransaction(this.db, async (trx) => {
      const stored = await this.sessions.update(
        session.tenantId,
        session.id,
        { private: { interactiveAuthorization: state, authorizationResult: result } },
        { expected: stillFor(state.requestId), db: trx },
      );
      if (!stored) throw invalidRequest('the credential offer is no longer valid');
      await this.dropHandles(session.id, trx);
      await this.sessions.addHandle(
        session.id,
        STEP_HANDLE.authSession,
        handles.authSession,
        expiryOf(this.sessions.clock.now(), session, AUTH_SESSION_LIFETIME_SECONDS),
        trx,
      );
      if (handles.requestUri) {
        const expiresAt = expiryOf(this.sessions.clock.now(), session, REQUEST_URI_LIFETIME_SECONDS);
        await this.sessions.addHandle(session.id, AUTHORIZATION_HANDLE.requestUri, handles.requestUri, expiresAt, trx);
      }
    });
  }

  private async dropHandles(sessionId: string, trx: Executor) {
    await this.sessions.dropHandles(sessionId, STEP_HANDLE.authSession, trx);
    await this.sessions.dropHandles(sessionId, STEP_HANDLE.webSession, trx);
    await this.sessions.dropHandles(sessionId, AUTHORIZATION_HANDLE.requestUri, trx);
  }
}

/** A presentation's verified credentials as the step's outcome; their disclosed claims are laid over the credentials' defaults. */
export function withPresentation(
  result: AuthorizationResult,
  presentationConfigId: string,
  credentials: Awaited<ReturnType<InteractivePresentations['verify']>>,
): AuthorizationResult {
  // Each credential later takes the part of these its configuration declares (ClaimSources).
  let claims = result.claims;
  for (const credential of credentials) claims = mergeClaims(claims, credential.claims);
  const presented = credentials.map((c) => ({
    queryId: c.queryId,
    format: c.format,
    ...('vct' in c && { vct: c.vct, issuer: c.issuer }),
    claims: c.claims,
  }));
  return { claims, steps: [...result.steps, { type: 'openid4vp-presentation', data: { presentationConfigId, credentials: presented } }] };
}

/** The integrator's signed claims as the web step's outcome. */
export function withWebResult(result: AuthorizationResult, claims: Record<string, unknown>, label?: string): AuthorizationResult {
  return {
    claims: mergeClaims(result.claims, claims),
    steps: [...result.steps, { type: 'redirect-to-web', data: { ...(label && { label }), claims } }],
  };
}

/**
 * The flow under way in the session, while the authorization request it runs for is still the
 * session's: the very request pushed (a new push ends the flow, so this is a second guard), with the
 * client and PKCE the code will be bound to.
 */
export function flowOf(session: SessionState): InteractiveState | undefined {
  const personal = issuancePrivate(session);
  const state = personal?.interactiveAuthorization;
  const request = personal?.authorizationRequest;
  return state && request && runsFor(state, request) ? state : undefined;
}

/** Whether the flow `state` runs for the pushed request `request`. */
export const runsFor = (state: InteractiveState, request: AuthorizationRequest) =>
  state.requestId === request.requestId && state.clientId === request.clientId && state.codeChallenge === request.codeChallenge;

export const pendingPresentation = (state: InteractiveState): EmbeddedPresentationState | undefined =>
  state.pending?.kind === 'presentation' ? state.pending : undefined;

const stepDetails = (state: InteractiveState, label: string | undefined) => ({
  step: state.step + 1,
  of: state.actions.length,
  ...(label && { label }),
});
