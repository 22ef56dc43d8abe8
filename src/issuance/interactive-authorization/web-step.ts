// The web step of interactive authorization (urn:openid:dcp:ia:auth_via_web at the authorization
// challenge endpoint, redirect_to_web at the interactive authorization endpoint; both share it). The
// wallet opens the authorization endpoint with the request_uri the step handed out; the user agent
// goes on to the integrator's page with a single-use web_session. The page ends the step by posting a
// result that the integrator signs with the key configured for the step: a JWS bound to this callback
// (aud), to the web_session (so to this flow and step), short-lived, and accepted once. Nothing else
// completes the step: an unsigned or otherwise signed post is refused. The user agent then returns to
// the wallet's redirect_uri with the authorization code (after the last step) or an auth_session to
// continue at the endpoint the flow started at.
//
// The same hook keeps the plain authorization endpoint from granting a configuration with iaeActions.
import { randomBytes } from 'node:crypto';
import { decodeJws, EC_JWS_ALGORITHMS, ecPublicKey, verifiesWith } from '../../platform/crypto/ec-jws.js';
import type { SessionState } from '../../sessions/model.js';
import type { SessionService } from '../../sessions/service.js';
import { type AuthorizeUser, authorizationResponseUrl } from '../authorization/authorize.js';
import { offerRefusal } from '../authorization/offer-session.js';
import { invalidRequest } from '../errors.js';
import { STEP_HANDLE } from '../handles.js';
import type { Issuer, IssuerDirectory } from '../issuers.js';
import { parseOAuthParams } from '../oauth-params.js';
import { type AuthorizationRequest, type InteractiveState, issuancePrivate } from '../session.js';
import { currentAction, type IaeAction, type InteractiveActions } from './actions.js';
import { flowOf, type InteractiveProgress, runsFor, withWebResult } from './progress.js';
import {
  WEB_RESULT_MAX_LIFETIME_SECONDS,
  WEB_RESULT_TYPE,
  WEB_SESSION_LIFETIME_SECONDS,
  WebResultBodySchema,
  WebResultClaimsSchema,
} from './schemas.js';

type WebAction = Extract<IaeAction, { type: 'redirect-to-web' }>;

const CLOCK_SKEW_SECONDS = 60;
/** The claims a web result may carry, serialized: enough for any credential, bounded for the session store. */
const MAX_CLAIMS_BYTES = 32_000;

/** Refusals before the result is known to come from the integrator: answered to the posting page, nothing of the flow changes. */
const refuse = (description: string) => invalidRequest(description);

export class WebSteps {
  constructor(
    private readonly issuers: IssuerDirectory,
    private readonly sessions: SessionService,
    private readonly actions: InteractiveActions,
    private readonly progress: InteractiveProgress,
  ) {}

  /**
   * The authorization endpoint's decision: a request_uri of a web step sends the user agent to the
   * integrator's page; a configuration with iaeActions is refused anywhere else; the rest is `next`'s.
   */
  authorizeUser(next: AuthorizeUser): AuthorizeUser {
    return async (session, request) => {
      const state = issuancePrivate(session)?.interactiveAuthorization;
      if (state && webStepOf(state, request)) return { granted: false, continueAt: await this.openPage(session, state) };
      const requiring = await this.actions.requiring(session.tenantId, request.credentialConfigurationIds);
      if (requiring.length) {
        const urls = this.issuers.urls(session.tenantId);
        return {
          granted: false,
          error: 'invalid_request',
          description: `credential configuration '${requiring[0]}' requires interactive authorization: use the authorization_challenge_endpoint ${urls.authorizationChallenge} (or the interactive_authorization_endpoint ${urls.iae})`,
        };
      }
      return next(session, request);
    };
  }

  /** The integrator's page, with the web_session its result must name, where to post it, and the session it concerns. */
  private async openPage(session: SessionState, state: InteractiveState): Promise<string> {
    const action = currentAction(state) as WebAction;
    const webSession = randomBytes(32).toString('base64url');
    const expiresAt = new Date(
      Math.min(this.sessions.clock.now().getTime() + WEB_SESSION_LIFETIME_SECONDS * 1000, Date.parse(session.expiresAt)),
    ).toISOString();
    await this.sessions.dropHandles(session.id, STEP_HANDLE.webSession);
    await this.sessions.addHandle(session.id, STEP_HANDLE.webSession, webSession, expiresAt);
    await this.sessions.log(session.id, 'info', 'interactive authorization: web step opened', {
      step: state.step + 1,
      ...(action.label && { label: action.label }),
    });
    const page = new URL(action.url);
    page.searchParams.set('web_session', webSession);
    page.searchParams.set('callback_uri', this.issuers.urls(session.tenantId).iaeWebResult);
    page.searchParams.set('session', session.id);
    return page.toString();
  }

  /**
   * The integrator's result: signed for this step (typ, algorithm, the step's callbackKey), for this
   * endpoint, fresh, not seen before. Then the user agent returns to the wallet.
   */
  async complete(tenantId: string, body: Record<string, unknown>): Promise<string> {
    const issuer = await this.issuers.get(tenantId);
    const { result: jws } = parseOAuthParams(WebResultBodySchema, body);
    const decoded = decodeJws(jws);
    if (!decoded) throw refuse('result must be a compact JWS');
    const { header, payload } = decoded;
    if (header.typ !== WEB_RESULT_TYPE) throw refuse(`result: typ must be ${WEB_RESULT_TYPE}`);
    const alg = typeof header.alg === 'string' && EC_JWS_ALGORITHMS.includes(header.alg) ? header.alg : undefined;
    if (!alg) throw refuse(`result: alg must be one of ${EC_JWS_ALGORITHMS.join(', ')}`);
    if (header.crit !== undefined) throw refuse('result: crit is not supported');
    const claims = WebResultClaimsSchema.safeParse(payload);
    if (!claims.success) throw refuse('result: web_session, aud, iat and exp are required (claims, if any, an object)');
    const { session, state, action } = await this.findStep(issuer, claims.data.web_session);
    const key = ecPublicKey(action.callbackKey, alg);
    if (!key || !verifiesWith(alg, key, decoded))
      throw refuse('result: the signature does not verify with the callback key of this web step');
    checkBinding(issuer, claims.data, this.sessions.clock.now());
    // Refused before the web_session is spent, so a result the integrator corrects can still end the step.
    if (Buffer.byteLength(JSON.stringify(claims.data.claims ?? {})) > MAX_CLAIMS_BYTES)
      throw refuse(`result: claims exceed ${MAX_CLAIMS_BYTES} bytes`);
    if (!(await this.sessions.spendHandle(STEP_HANDLE.webSession, claims.data.web_session)))
      throw refuse('result: web_session is unknown, expired or already used');
    return this.continueFlow(issuer, session, state, action, claims.data);
  }

  /** web_session names a web step of this issuer that is open. */
  private async findStep(issuer: Issuer, webSession: string) {
    const session = await this.sessions.findByHandle(STEP_HANDLE.webSession, webSession);
    const state = session?.tenantId === issuer.tenantId ? flowOf(session) : undefined;
    if (!session || state?.pending?.kind !== 'web' || state.pending.completed)
      throw refuse('result: web_session is unknown, expired or already used');
    const refusal = offerRefusal(session);
    if (refusal) throw refuse(refusal);
    return { session, state, action: currentAction(state) as WebAction };
  }

  /** The step's outcome: a refusal ends the flow; claims are recorded and the flow goes on. */
  private async continueFlow(
    issuer: Issuer,
    session: SessionState,
    state: InteractiveState,
    action: WebAction,
    result: { claims?: Record<string, unknown>; error?: string; error_description?: string },
  ): Promise<string> {
    const request = issuancePrivate(session)?.authorizationRequest as AuthorizationRequest;
    if (result.error !== undefined) {
      await this.progress.stop(session, `the web step answered ${result.error}`);
      return authorizationResponseUrl(request, issuer, {
        error: 'access_denied',
        error_description: `the web step was not completed: ${result.error_description ?? result.error}`,
      });
    }
    const claims = result.claims ?? {};
    const outcome = withWebResult(issuancePrivate(session)?.authorizationResult ?? { claims: {}, steps: [] }, claims, action.label);
    await this.sessions.log(session.id, 'info', 'interactive authorization: web result verified', { step: state.step + 1 });
    if (state.step + 1 >= state.actions.length) {
      return authorizationResponseUrl(request, issuer, { code: await this.progress.finish(session, state.requestId, outcome) });
    }
    return authorizationResponseUrl(request, issuer, { auth_session: await this.progress.webCompleted(session, state, outcome) });
  }
}

/** The request_uri the authorization endpoint took is the web step's: the flow waits for the browser, for the same authorization request. */
function webStepOf(state: InteractiveState, request: AuthorizationRequest): boolean {
  return state.pending?.kind === 'web' && !state.pending.completed && runsFor(state, request);
}

/** Meant for this endpoint, recent, short-lived, not expired. */
function checkBinding(issuer: Issuer, claims: { aud: string; iat: number; exp: number }, at: Date) {
  if (claims.aud !== issuer.urls.iaeWebResult) throw refuse('result: aud must be the callback_uri of this issuer');
  const now = at.getTime() / 1000;
  if (claims.iat > now + CLOCK_SKEW_SECONDS || claims.iat < now - WEB_RESULT_MAX_LIFETIME_SECONDS)
    throw refuse('result: iat is not recent');
  if (claims.exp <= now - CLOCK_SKEW_SECONDS) throw refuse('result: expired');
  if (claims.exp - claims.iat > WEB_RESULT_MAX_LIFETIME_SECONDS)
    throw refuse(`result: exp may be at most ${WEB_RESULT_MAX_LIFETIME_SECONDS} seconds after iat`);
}
