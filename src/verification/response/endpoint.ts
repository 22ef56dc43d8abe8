// The response endpoint of OpenID4VP 1.0 (direct_post, direct_post.jwt) and of the DC API flow
// (dc_api.jwt, posted by the integrator's page). `respond` lists the steps in the order they apply;
// each enforces one rule and rejects with the reason it names. A rejection fails the session closed
// (its errorReason says why) and answers the wallet invalid_request.
import { randomBytes } from 'node:crypto';
import type { JWK } from 'jose';
import { formatOf, type VerifiedPresentation } from '../../formats/index.js';
import type { PresentationContext } from '../../formats/presentation-context.js';
import type { Clock } from '../../platform/clock.js';
import { OAuthError } from '../../platform/http/problem.js';
import { nullRecord } from '../../platform/json.js';
import { lazy } from '../../platform/lazy.js';
import type { SessionState } from '../../sessions/model.js';
import type { SessionService } from '../../sessions/service.js';
import type { VerifiedForDcql } from '../dcql/check.js';
import { queryOf } from '../dcql/query.js';
import { invalidRequest, PresentationRejected, unknownRequest } from '../errors.js';
import { federationAnchorsOf, type TrustAnchors } from '../ports.js';
import { encodeTransactionData } from '../request-object/sign.js';
import {
  type Flow,
  flowOf,
  type PresentationPrivate,
  type PresentationPublicData,
  presentationPrivate,
  presentationPublic,
} from '../session.js';
import type { StatusListChecker } from '../status/checker.js';
import type { AcceptedBy, TrustedAuthorities } from '../trusted-authorities/index.js';
import { PRESENTATION_HANDLE, RESPONSE_CODE_HANDLE, RESPONSE_CODE_LIFETIME_SECONDS } from '../urls.js';
import { verifyPresentation } from '../verify-presentation.js';
import { responsePayload } from './decrypt.js';
import { parseVpToken } from './vp-token.js';

const dcql = lazy(() => import('../dcql/check.js'));

/** A credential as a format verifier proves it, with the credential query it answers. */
export type VerifiedCredential = VerifiedPresentation & { queryId: string };
/** A credential as the session keeps it: without its issuer's chain, with the trusted authority it matched. */
export type AcceptedCredential = AcceptedBy<VerifiedCredential>;

/** How a session's response comes back: the flows of OpenID4VP, and ISO 18013-7 Annex C over the DC API. */
export type ResponseFlow = Flow | 'annex-c';
const responseFlowOf = (request: PresentationPublicData): ResponseFlow =>
  request.dcApiProtocol === 'iso-18013-7' ? 'annex-c' : flowOf(request);
const WHERE_TO_POST: Record<ResponseFlow, string> = {
  redirect: 'it was made for a wallet, which posts its response to the response endpoint',
  'dc-api': 'it was made for the Digital Credentials API (OpenID4VP); post its response to the dc-api-response endpoint',
  'annex-c': 'it was made for ISO 18013-7 Annex C; post its response to the annex-c-response endpoint',
};

/** The part of a presentation that another protocol decodes and verifies itself (ISO 18013-7 Annex C). */
export type PresentationOpener = (
  answerable: { session: SessionState; request: PresentationPublicData },
  context: PresentationContext,
) => Promise<VerifiedCredential[]>;

/** A session that may take this response, with its typed request and secrets. */
interface Answerable {
  session: SessionState;
  request: PresentationPublicData;
  secrets: PresentationPrivate;
}

export class ResponseEndpoint {
  constructor(
    private readonly sessions: SessionService,
    private readonly trust: TrustAnchors,
    private readonly status: StatusListChecker,
    private readonly clock: Clock,
    private readonly authorities: TrustedAuthorities,
  ) {}

  /**
   * `redirect`: the wallet's direct_post(.jwt) to response_uri; `dc-api`: the integrator's page
   * posting what navigator.credentials.get returned. A session answers only through its own flow.
   */
  async respond(handle: string, body: Record<string, unknown>, flow: Flow = 'redirect'): Promise<{ redirect_uri?: string }> {
    const answerable = await this.checkSession(handle, flow);
    try {
      this.checkOrigin(answerable, body);
      const payload = await responsePayload(answerable.request, answerable.secrets, body);
      this.checkState(answerable, body, payload);
      const vpToken = parseVpToken(payload.vp_token);
      const verified = await this.verifyPresentations(answerable, vpToken);
      await this.checkDcql(answerable.secrets, verified);
      return await this.complete(answerable, verified);
    } catch (err) {
      if (!(err instanceof PresentationRejected || err instanceof OAuthError)) throw err;
      await this.fail(answerable.session, err.message);
      throw invalidRequest(err.message);
    }
  }

  /**
   * A response whose decryption and verification `open` does (ISO 18013-7 Annex C): the session's
   * flow, the origin, then the status of each credential, the DCQL query and the completion exactly
   * as for the OpenID4VP responses. A rejection fails the session with its reason.
   */
  async respondWith(handle: string, body: Record<string, unknown>, flow: ResponseFlow, open: PresentationOpener) {
    const answerable = await this.checkSession(handle, flow);
    try {
      this.checkOrigin(answerable, body);
      const context = await this.contextOf(answerable);
      const accepted: AcceptedCredential[] = [];
      for (const credential of await open(answerable, context)) {
        await this.status.check(answerable.session.tenantId, credential.status, context);
        accepted.push(await this.authorities.accept(queryOf(answerable.secrets, credential.queryId), credential, context.now));
      }
      await this.checkDcql(answerable.secrets, accepted);
      return await this.complete(answerable, accepted);
    } catch (err) {
      if (!(err instanceof PresentationRejected || err instanceof OAuthError)) throw err;
      await this.fail(answerable.session, err.message);
      throw invalidRequest(err.message);
    }
  }

  /** The browser origin a dc-api session expects its response from, for CORS; undefined otherwise. */
  async browserOrigin(handle: string): Promise<string | undefined> {
    const session = await this.sessions.findByHandle(PRESENTATION_HANDLE, handle);
    if (!session) return undefined;
    const request = presentationPublic(session);
    return request.useDcApi ? request.browserOrigin : undefined;
  }

  private async checkSession(handle: string, flow: ResponseFlow): Promise<Answerable> {
    const session = await this.sessions.findByHandle(PRESENTATION_HANDLE, handle);
    if (!session) throw unknownRequest();
    const request = presentationPublic(session);
    const made = responseFlowOf(request);
    if (made !== flow) throw invalidRequest(`this presentation request does not answer here: ${WHERE_TO_POST[made]}`);
    if (session.status === 'expired') throw invalidRequest('the presentation request has expired');
    const secrets = presentationPrivate(session);
    if (session.consumed || session.status !== 'fetched' || !secrets)
      throw invalidRequest('this presentation request does not accept a response (already answered, or never fetched)');
    return { session, request, secrets };
  }

  /**
   * DC API (appendix A): the response is bound to the browser's origin instead of a state (A.2
   * defines none); a page that names its origin must name the expected one.
   */
  private checkOrigin({ request }: Answerable, body: Record<string, unknown>) {
    if (flowOf(request) === 'dc-api' && body.origin !== undefined && body.origin !== request.browserOrigin)
      throw new PresentationRejected('origin: the response comes from an origin this request does not expect');
  }

  private checkState({ request, secrets }: Answerable, body: Record<string, unknown>, payload: Record<string, unknown>) {
    if (flowOf(request) !== 'dc-api' && payload.state !== secrets.state) throw new PresentationRejected('state does not match the request');
    // Draft-era JARM senders (Sphereon's did-auth-siop 0.20) repeat state in the clear beside the
    // encrypted response. Only the encrypted one counts; a repeated one must say the same.
    if (body.state !== undefined && body.state !== payload.state)
      throw new PresentationRejected('state: the state sent beside the encrypted response differs from the one inside it');
  }

  /** Every presentation by the verifier of its query's format (signature, issuer trust, holder binding, transaction data), then its status. */
  private async verifyPresentations(answerable: Answerable, vpToken: Record<string, string[]>): Promise<AcceptedCredential[]> {
    const context = await this.contextOf(answerable);
    const verified: AcceptedCredential[] = [];
    for (const [queryId, presentations] of Object.entries(vpToken)) {
      const query = queryOf(answerable.secrets, queryId);
      for (const presentation of presentations) {
        const forQuery = { ...context, federationAnchors: federationAnchorsOf(query) };
        for (const credential of await verifyPresentation(query.format, presentation, forQuery)) {
          const forStatus = formatOf(credential.format)?.statusListSubject?.(credential);
          await this.status.check(answerable.session.tenantId, credential.status, {
            ...context,
            ...(forStatus && { credential: forStatus }),
          });
          verified.push(await this.authorities.accept(query, { queryId, ...credential }, context.now));
        }
      }
    }
    return verified;
  }

  /**
   * What a presentation is checked against. Over the DC API the KB-JWT audience is `origin:<origin>`
   * even for signed requests (A.4), and the mdoc session transcript is the OpenID4VPDCAPIHandover
   * over the origin (B.2.6.2).
   */
  private async contextOf({ session, request, secrets }: Answerable): Promise<PresentationContext> {
    const dcApiOrigin = flowOf(request) === 'dc-api' ? request.browserOrigin : undefined;
    const { d: _private, ...encryptionJwk } = secrets.encryptionKey ?? {};
    return {
      clientId: request.clientId,
      ...(dcApiOrigin && { audiences: [`origin:${dcApiOrigin}`], origin: dcApiOrigin }),
      nonce: secrets.nonce,
      ...(await this.trust.tenantTrust(session.tenantId)),
      transactionData: secrets.transactionData ? encodeTransactionData(secrets.transactionData) : [],
      now: this.clock.now(),
      responseUri: request.responseUri,
      ...(secrets.encryptionKey && { encryptionJwk: encryptionJwk as JWK }),
    };
  }

  /** The verified credentials satisfy the DCQL query (claims, values, credential sets). */
  private async checkDcql(secrets: PresentationPrivate, verified: AcceptedCredential[]) {
    // Query ids are the tenant's names: grouped without a prototype, so that none finds an inherited member.
    const byQuery = nullRecord<VerifiedForDcql[]>();
    for (const credential of verified) byQuery[credential.queryId] = [...(byQuery[credential.queryId] ?? []), credential];
    (await dcql()).checkDcql(secrets.dcqlQuery, byQuery);
  }

  /**
   * Completes the session with the verified credentials. With a redirect (same-device flow), the
   * redirect carries a fresh response code, registered (hashed) in the statement that completes the
   * session; the result, and the webhook with it, then wait for that code (verification/result).
   */
  private async complete({ session, request }: Answerable, credentials: AcceptedCredential[]) {
    const responseCode = request.redirectUri ? randomBytes(24).toString('base64url') : undefined;
    // Wall-clock time, as for every session handle: the statement that spends the code compares with it.
    const codeExpiresAt = new Date(this.clock.now().getTime() + RESPONSE_CODE_LIFETIME_SECONDS * 1000).toISOString();
    const done = await this.sessions.update(
      session.tenantId,
      session.id,
      { status: 'completed', consumed: true, private: { credentials }, ...(responseCode && { public: { responseCodeRequired: true } }) },
      {
        expected: { consumed: false, statuses: ['fetched'] },
        from: session,
        log: { level: 'info', message: 'presentation verified', details: { credentials: credentials.length } },
        ...(responseCode && { writes: [this.sessions.handleWrite(session.id, RESPONSE_CODE_HANDLE, responseCode, codeExpiresAt)] }),
      },
    );
    if (!done) throw invalidRequest('this presentation request was already answered');
    // Without a redirect the completion wrote the webhook event (migration 0022); the worker was woken by the status change.
    if (!request.redirectUri || !responseCode) return {};
    const redirect = new URL(request.redirectUri.replaceAll('{sessionId}', session.id));
    redirect.searchParams.set('response_code', responseCode);
    return { redirect_uri: redirect.toString() };
  }

  /** Fails a session not yet answered; a response that lost the race to an accepted one leaves the winner's session and log alone. */
  private async fail(session: SessionState, reason: string) {
    // Logged only by the change that failed the session, in its statement.
    await this.sessions.update(
      session.tenantId,
      session.id,
      { status: 'failed', errorReason: reason },
      { expected: { consumed: false }, from: session, log: { level: 'warn', message: 'presentation rejected', details: { reason } } },
    );
  }
}
