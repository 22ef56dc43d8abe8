// Interactive authorization (OpenID4VCI 1.1 draft): the wallet's requests at either face (faces.ts:
// the Authorization Challenge Endpoint of the current draft, the Interactive Authorization Endpoint of
// the drafts before). The first request carries the authorization request as PAR takes it (or the
// request_uri of one pushed before) and the interaction types the wallet supports; the server runs
// the iaeActions of the requested configurations in order, asking for each interaction with a
// single-use auth_session, and after the last one answers an authorization code for the token
// endpoint. A follow-up (intermediate) request names its auth_session and carries what the interaction
// asked for; it is taken only at the endpoint the flow started at. `initial` and `followUp` list their
// steps in the order they apply; each fails with the error its rule names.
import { createHash } from 'node:crypto';
import { sameSecret } from '../../platform/crypto/secrets.js';
import { OAuthError } from '../../platform/http/problem.js';
import type { SessionState } from '../../sessions/model.js';
import type { SessionService } from '../../sessions/service.js';
import { PresentationRejected } from '../../verification/errors.js';
import { offerRefusal } from '../authorization/offer-session.js';
import type { PushedAuthorizationEndpoint } from '../authorization/par.js';
import { REQUEST_URI_PREFIX } from '../authorization/schemas.js';
import { BUILTIN_SERVER } from '../authorization/server-role.js';
import type { WalletAttestation, WalletAttestations } from '../authorization/wallet-attestation.js';
import type { ClientRequest } from '../client-request.js';
import { invalidClient, invalidRequest, invalidRequestUri } from '../errors.js';
import { AUTHORIZATION_HANDLE, STEP_HANDLE } from '../handles.js';
import type { Issuer, IssuerDirectory } from '../issuers.js';
import { parseOAuthParams } from '../oauth-params.js';
import { type AuthorizationRequest, type AuthorizationResult, type InteractiveState, issuancePrivate } from '../session.js';
import type { InteractiveActions } from './actions.js';
import { type Face, type FlowAnswer, spelledTypes } from './faces.js';
import { flowOf, type InteractivePresentations, type InteractiveProgress, pendingPresentation, withPresentation } from './progress.js';
import { FollowUpRequestSchema, InitialRequestSchema } from './schemas.js';

/** A step refused (a presentation that fails verification, a declined interaction): the flow ends. */
export const accessDenied = (description: string) => new OAuthError(400, 'access_denied', description);

const EMPTY_RESULT: AuthorizationResult = { claims: {}, steps: [] };

export class InteractiveAuthorizationEndpoint {
  constructor(
    private readonly issuers: IssuerDirectory,
    private readonly sessions: SessionService,
    private readonly par: PushedAuthorizationEndpoint,
    private readonly attestations: WalletAttestations,
    private readonly actions: InteractiveActions,
    private readonly progress: InteractiveProgress,
    private readonly presentations: InteractivePresentations,
  ) {}

  /**
   * A follow-up names its auth_session; anything else is a first request. Both endpoints belong to the
   * built-in server: while that is disabled, neither starts nor continues a flow (invalid_request).
   */
  async handle(face: Face, call: ClientRequest): Promise<FlowAnswer> {
    const disabled = BUILTIN_SERVER.disabled(await this.issuers.get(call.tenantId));
    if (disabled) throw invalidRequest(disabled);
    return call.body.auth_session === undefined ? this.initial(face, call) : this.followUp(face, call);
  }

  /**
   * interaction types, the authorization request (pushed now or before), its actions, the types they
   * need in the face's spellings; then the first step.
   */
  async initial(face: Face, call: ClientRequest): Promise<FlowAnswer> {
    const issuer = await this.issuers.get(call.tenantId);
    const params = parseOAuthParams(InitialRequestSchema, call.body);
    const listed = interactionTypes(params.interaction_types_supported);
    const requestUri = params.request_uri ?? (await this.par.push(call)).request_uri;
    const { session, request } = await this.takeRequestUri(issuer, requestUri);
    if (params.request_uri !== undefined) await this.checkPushedClient(issuer, call, request, params.client_id);
    const actions = await this.actions.of(issuer.tenantId, request.credentialConfigurationIds);
    const spelled = spelledTypes(face, actions, listed);
    await this.sessions.log(session.id, 'info', 'interactive authorization started', {
      clientId: request.clientId,
      endpoint: face.name,
      steps: actions.map((a) => a.type),
    });
    if (!actions.length) return { kind: 'authorized', code: await this.progress.finish(session, request.requestId, EMPTY_RESULT) };
    const state: InteractiveState = {
      ...(request.requestId && { requestId: request.requestId }),
      face: face.name,
      interactionTypes: spelled,
      clientId: request.clientId,
      codeChallenge: request.codeChallenge,
      ...(request.attestationJkt && { attestationJkt: request.attestationJkt }),
      actions,
      step: 0,
    };
    return this.progress.start(issuer, session, state, EMPTY_RESULT);
  }

  /** auth_session (of a flow started at this face), the client it belongs to, then the answer to the interaction under way. */
  async followUp(face: Face, call: ClientRequest): Promise<FlowAnswer> {
    const issuer = await this.issuers.get(call.tenantId);
    const params = parseOAuthParams(FollowUpRequestSchema, call.body);
    const { session, state } = await this.findAuthSession(face, issuer, params.auth_session);
    await this.checkSameClient(issuer, call, state, params.client_id);
    const result = issuancePrivate(session)?.authorizationResult ?? EMPTY_RESULT;
    const presentation = pendingPresentation(state);
    if (presentation) {
      if (params.openid4vp_response === undefined)
        throw invalidRequest('openid4vp_response is required: the presentation step is under way');
      const response = parseResponse(params.openid4vp_response);
      await this.spendAuthSession(face, params.auth_session);
      const credentials = await this.verifiedPresentation(face, issuer, session, presentation, response);
      await this.sessions.log(session.id, 'info', 'interactive authorization: presentation verified', { credentials: credentials.length });
      const outcome = withPresentation(result, presentation.presentationConfigId, credentials);
      return this.progress.advance(issuer, session, state, outcome);
    }
    if (state.pending?.kind !== 'web' || !state.pending.completed)
      throw invalidRequest('the web step is not completed yet: the user finishes it in the browser first');
    checkCodeVerifier(state, params.code_verifier);
    await this.spendAuthSession(face, params.auth_session);
    return this.progress.advance(issuer, session, state, result);
  }

  /** The request_uri, pushed before or just now, works once; its authorization request is the one the flow runs for. */
  private async takeRequestUri(issuer: Issuer, requestUri: string): Promise<{ session: SessionState; request: AuthorizationRequest }> {
    const secret = requestUri.startsWith(REQUEST_URI_PREFIX) ? requestUri.slice(REQUEST_URI_PREFIX.length) : '';
    const session = secret ? await this.sessions.findByHandle(AUTHORIZATION_HANDLE.requestUri, secret) : undefined;
    const taken = session?.tenantId === issuer.tenantId && (await this.sessions.spendHandle(AUTHORIZATION_HANDLE.requestUri, secret));
    const request = session && issuancePrivate(session)?.authorizationRequest;
    if (!session || !taken || !request) throw invalidRequestUri('request_uri is unknown, expired or already used');
    const refusal = offerRefusal(session);
    if (refusal) throw invalidRequest(refusal);
    return { session, request };
  }

  /** A request pushed before is continued by the client that pushed it, authenticated as at PAR (the same wallet instance, if attested). */
  private async checkPushedClient(issuer: Issuer, call: ClientRequest, request: AuthorizationRequest, clientId: string | undefined) {
    if (clientId === undefined) throw invalidRequest('client_id is required');
    if (clientId !== request.clientId) throw invalidRequest('client_id does not match the pushed authorization request');
    const attested = await this.attestations.check(issuer, clientId, call.attestation);
    checkInstance(request.attestationJkt, attested);
  }

  /**
   * auth_session names a flow of this issuer, started at this endpoint, that waits for the wallet; it
   * is spent only once the answer is complete. Another endpoint's flow is unknown here and stays as it
   * is: its presentation is bound to that endpoint, and its answers are in that endpoint's draft.
   */
  private async findAuthSession(
    face: Face,
    issuer: Issuer,
    authSession: string,
  ): Promise<{ session: SessionState; state: InteractiveState }> {
    const session = await this.sessions.findByHandle(STEP_HANDLE.authSession, authSession);
    const state = session?.tenantId === issuer.tenantId ? flowOf(session) : undefined;
    if (!session || !state?.pending || state.face !== face.name) throw face.unknownSession();
    const refusal = offerRefusal(session);
    if (refusal) throw invalidRequest(refusal);
    return { session, state };
  }

  /** Exactly one request consumes an auth_session. */
  private async spendAuthSession(face: Face, authSession: string) {
    if (!(await this.sessions.spendHandle(STEP_HANDLE.authSession, authSession))) throw face.unknownSession();
  }

  /** Every request of a flow comes from the client that started it, authenticated as at PAR; an attested flow stays with its wallet instance. */
  private async checkSameClient(issuer: Issuer, call: ClientRequest, state: InteractiveState, clientId: string | undefined) {
    if (clientId !== undefined && clientId !== state.clientId) throw invalidRequest('client_id is not the client of this authorization');
    const attested = await this.attestations.check(issuer, state.clientId, call.attestation);
    checkInstance(state.attestationJkt, attested);
  }

  /**
   * The wallet's OpenID4VP response, verified by the verification pipeline against the request of
   * this step (nonce, the key binding audience of the flow's endpoint, issuer trust, status, DCQL). A
   * refusal or a failing presentation ends the flow with access_denied.
   */
  private async verifiedPresentation(
    face: Face,
    issuer: Issuer,
    session: SessionState,
    presentation: NonNullable<ReturnType<typeof pendingPresentation>>,
    response: Record<string, unknown>,
  ) {
    try {
      if (response.error !== undefined) {
        const described = typeof response.error_description === 'string' ? `: ${response.error_description.slice(0, 200)}` : '';
        throw new PresentationRejected(`the wallet answered ${String(response.error).slice(0, 100)}${described}`);
      }
      const endpoint = face.endpoint(issuer.urls);
      return await this.presentations.verify(issuer.tenantId, presentation, response, {
        audiences: face.audiences(endpoint),
        responseUri: endpoint,
      });
    } catch (err) {
      if (!(err instanceof PresentationRejected)) throw err;
      await this.progress.stop(session, err.message);
      throw accessDenied(`the presentation was not accepted: ${err.message}`);
    }
  }
}

/** interaction_types_supported: a comma-separated list. */
function interactionTypes(value: string): Set<string> {
  return new Set(
    value
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
  );
}

/** A flow started with a client attestation continues only with attestations of the same wallet instance. */
function checkInstance(expectedJkt: string | undefined, attested: WalletAttestation | undefined) {
  if (expectedJkt === undefined) return;
  if (attested === undefined)
    throw invalidClient('this authorization was started by an attested wallet instance: send its client attestation');
  if (attested.instanceJkt !== expectedJkt) throw invalidClient('this authorization was started by another wallet instance');
}

/** After a web step, the follow-up proves it comes from the wallet that started the flow: PKCE's code_verifier. */
function checkCodeVerifier(state: InteractiveState, verifier: string | undefined) {
  if (verifier === undefined) throw invalidRequest('code_verifier is required after the web step');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  if (!sameSecret(challenge, state.codeChallenge)) throw invalidRequest('code_verifier does not match the code_challenge');
}

/** openid4vp_response: a JSON object with the OpenID4VP authorization response (vp_token, or response when encrypted) or an error response. */
function parseResponse(raw: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw invalidRequest('openid4vp_response must be a JSON object');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalidRequest('openid4vp_response must be a JSON object');
  const response = value as Record<string, unknown>;
  if (response.error === undefined && response.vp_token === undefined && response.response === undefined)
    throw invalidRequest('openid4vp_response holds neither vp_token, response nor error');
  return response;
}
