// The wallet-facing OpenID4VP 1.0 endpoints of a presentation session: the request object (by
// request_uri, GET or POST) and the response endpoint. `verifyResponse` lists its steps in order;
// any failure fails the session closed.
import { randomBytes } from 'node:crypto';
import { compactDecrypt, importJWK, type JWK } from 'jose';
import { postJsonWithRetries } from '../platform/http/outbound.js';
import { OAuthError, unlessNotFound } from '../platform/http/problem.js';
import { lazy } from '../platform/lazy.js';
import type { SessionState } from '../sessions/model.js';
import type { VerifiedForDcql } from './dcql.js';
import { PRESENTATION_HANDLE, type VerificationDeps } from './deps.js';
import type { PresentationOfferRequest } from './offers.js';
import { encodeTransactionData, type RequestObjectInput, signRequestObject, type VerifierInfo } from './request-object.js';
import { PresentationRejected, verifySdJwtPresentation } from './sd-jwt.js';
import type { StatusListChecker } from './status.js';

const mdocVerifier = lazy(() => import('./mdoc.js'));
const dcqlChecker = lazy(() => import('./dcql.js'));

const invalidRequest = (description: string) => new OAuthError(400, 'invalid_request', description);

export interface VerifiedCredential extends VerifiedForDcql {
  queryId: string;
  issuer?: string;
}

export class PresentationProtocol {
  constructor(
    private readonly deps: VerificationDeps,
    private readonly status: StatusListChecker,
  ) {}

  private async session(handle: string): Promise<SessionState> {
    const session = await this.deps.sessions.findByHandle(PRESENTATION_HANDLE, handle);
    if (!session) throw new OAuthError(404, 'invalid_request', 'unknown or expired presentation request');
    return session;
  }

  /** The browser origin a dc-api session expects its response from, for CORS; undefined otherwise. */
  async browserOrigin(handle: string): Promise<string | undefined> {
    const session = await this.deps.sessions.findByHandle(PRESENTATION_HANDLE, handle);
    return session?.public.useDcApi ? (session.public.browserOrigin as string | undefined) : undefined;
  }

  /** The signed request object; it can be fetched once (the session moves to `fetched`). */
  async requestObject(handle: string, walletNonce?: string): Promise<string> {
    const session = await this.session(handle);
    if (session.status === 'expired') throw invalidRequest('the presentation request has expired');
    const fetched = await this.deps.sessions.update(session.tenantId, session.id, { status: 'fetched' }, { statuses: ['active'] });
    if (!fetched) throw invalidRequest('the request object was already fetched');
    const jwt = await signedRequestOf(this.deps, session, walletNonce);
    await this.deps.sessions.log(session.id, 'info', 'request object fetched');
    return jwt;
  }

  /**
   * The response endpoint: `redirect` for the wallet's direct_post(.jwt) to response_uri, `dc-api`
   * for the integrator's page posting what navigator.credentials.get returned. A session answers
   * only through the endpoint of its own flow.
   */
  async respond(handle: string, body: Record<string, unknown>, flow: Flow = 'redirect'): Promise<{ redirect_uri?: string }> {
    const session = await this.session(handle);
    if (flowOf(session) !== flow)
      throw invalidRequest(
        flow === 'dc-api'
          ? 'this presentation request was not made for the Digital Credentials API'
          : 'this presentation request was made for the Digital Credentials API; post its response to the dc-api-response endpoint',
      );
    if (session.status === 'expired') throw invalidRequest('the presentation request has expired');
    if (session.consumed || session.status !== 'fetched')
      throw invalidRequest('this presentation request does not accept a response (already answered, or never fetched)');
    try {
      const credentials = await this.verifyResponse(session, body);
      return await this.complete(session, credentials);
    } catch (err) {
      if (!(err instanceof PresentationRejected || err instanceof OAuthError)) throw err;
      const reason = err.message;
      await this.deps.sessions.update(session.tenantId, session.id, { status: 'failed', errorReason: reason }, { consumed: false });
      await this.deps.sessions.log(session.id, 'warn', 'presentation rejected', { reason });
      throw invalidRequest(reason);
    }
  }

  private async verifyResponse(session: SessionState, body: Record<string, unknown>): Promise<VerifiedCredential[]> {
    const secrets = session.private as unknown as PresentationSecrets;
    // DC API (appendix A): no state (A.2 defines none); the response is bound to the browser's origin
    // instead: the KB-JWT audience is `origin:<origin>` even for signed requests (A.4), and the mdoc
    // session transcript is the OpenID4VPDCAPIHandover over the origin (B.2.6.2).
    const dcApiOrigin = flowOf(session) === 'dc-api' ? (session.public.browserOrigin as string) : undefined;
    if (dcApiOrigin && body.origin !== undefined && body.origin !== dcApiOrigin)
      throw new PresentationRejected('origin: the response comes from an origin this request does not expect');
    const payload = await this.decrypt(session, secrets.encryptionKey, body);
    if (!dcApiOrigin && payload.state !== secrets.state) throw new PresentationRejected('state does not match the request');
    // Draft-era JARM senders (Sphereon's did-auth-siop 0.20) repeat state in the clear beside the
    // encrypted response. Only the encrypted one counts; a repeated one must say the same.
    if (body.state !== undefined && body.state !== payload.state)
      throw new PresentationRejected('state: the state sent beside the encrypted response differs from the one inside it');
    const vpToken = parseVpToken(payload.vp_token);
    const trusted = await this.deps.trust.trustedCertificates(session.tenantId);
    const context = {
      clientId: session.public.clientId as string,
      ...(dcApiOrigin && { audience: `origin:${dcApiOrigin}` }),
      nonce: secrets.nonce,
      trustedCertificates: trusted,
      transactionData: secrets.transactionData ? encodeTransactionData(secrets.transactionData) : [],
      now: new Date(),
    };
    const queries = (secrets.dcqlQuery.credentials as { id: string; format: string }[]) ?? [];
    const verified: VerifiedCredential[] = [];
    for (const [queryId, presentations] of Object.entries(vpToken)) {
      const query = queries.find((q) => q.id === queryId);
      if (!query) throw new PresentationRejected(`vp_token: '${queryId}' is not a credential query of the request`);
      for (const presentation of presentations) {
        if (query.format === 'mso_mdoc') {
          const { d: _private, ...encryptionJwk } = secrets.encryptionKey ?? {};
          const mdocContext = {
            ...context,
            responseUri: session.public.responseUri as string,
            ...(dcApiOrigin && { origin: dcApiOrigin }),
            ...(secrets.encryptionKey && { encryptionJwk: encryptionJwk as JWK }),
          };
          const { verifyMdocPresentation } = await mdocVerifier();
          for (const mdoc of await verifyMdocPresentation(presentation, mdocContext)) {
            await this.status.check(session.tenantId, mdoc.status, context);
            verified.push({ queryId, ...mdoc });
          }
          continue;
        }
        if (query.format !== 'dc+sd-jwt') throw new PresentationRejected(`vp_token: format ${query.format} cannot be verified yet`);
        const credential = await verifySdJwtPresentation(presentation, context);
        await this.status.check(session.tenantId, credential.status, context);
        verified.push({ queryId, ...credential });
      }
    }
    const byQuery: Record<string, VerifiedForDcql[]> = {};
    for (const credential of verified) byQuery[credential.queryId] = [...(byQuery[credential.queryId] ?? []), credential];
    (await dcqlChecker()).checkDcql(secrets.dcqlQuery, byQuery);
    return verified;
  }

  /** direct_post.jwt and dc_api.jwt: the response is a JWE to the session's key; direct_post: plain form fields. */
  private async decrypt(session: SessionState, key: JWK | undefined, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (session.public.responseMode === 'direct_post') {
      if (body.response !== undefined)
        throw new PresentationRejected('this request expects response_mode direct_post, not an encrypted response');
      return body;
    }
    if (typeof body.response !== 'string' || !key)
      throw new PresentationRejected(`the response must be encrypted (response_mode ${session.public.responseMode})`);
    try {
      const { plaintext } = await compactDecrypt(body.response, await importJWK(key, 'ECDH-ES'), {
        keyManagementAlgorithms: ['ECDH-ES'],
        contentEncryptionAlgorithms: ['A128GCM', 'A256GCM'],
      });
      return JSON.parse(new TextDecoder().decode(plaintext)) as Record<string, unknown>;
    } catch {
      throw new PresentationRejected('the encrypted response could not be decrypted');
    }
  }

  private async complete(session: SessionState, credentials: VerifiedCredential[]) {
    const redirectTemplate = session.public.redirectUri as string | undefined;
    const responseCode = redirectTemplate ? randomBytes(24).toString('base64url') : undefined;
    const done = await this.deps.sessions.update(
      session.tenantId,
      session.id,
      { status: 'completed', consumed: true, private: { credentials }, ...(responseCode && { public: { responseCode } }) },
      { consumed: false, statuses: ['fetched'] },
    );
    if (!done) throw invalidRequest('this presentation request was already answered');
    await this.deps.sessions.log(session.id, 'info', 'presentation verified', { credentials: credentials.length });
    // Delivered in the background: the wallet's answer does not wait for the relying party. Each
    // attempt is logged on the session; an error around them (the database gone) is logged too, and
    // must not become an unhandled rejection, which would end the process.
    void this.sendWebhook(session, credentials).catch((err: Error) =>
      this.deps.sessions.log(session.id, 'error', 'webhook delivery failed', { reason: err.message }).catch(() => undefined),
    );
    if (!redirectTemplate || !responseCode) return {};
    const redirect = new URL(redirectTemplate.replaceAll('{sessionId}', session.id));
    redirect.searchParams.set('response_code', responseCode);
    return { redirect_uri: redirect.toString() };
  }

  /** The offer's own webhook (kept encrypted with the session), else the configuration's. */
  private async webhookOf(session: SessionState): Promise<{ url: string; headers: Record<string, string> } | null | undefined> {
    const own = session.private?.webhook as PresentationOfferRequest['webhook'];
    if (own) return { url: own.url, headers: own.auth?.type === 'header' ? { [own.auth.header.name]: own.auth.header.value } : {} };
    const config = await unlessNotFound(this.deps.configs.get(session.tenantId, session.public.requestId as string));
    return config && unlessNotFound(this.deps.configs.resolveWebhook(session.tenantId, config));
  }

  private async sendWebhook(session: SessionState, credentials: VerifiedCredential[]) {
    const endpoint = await this.webhookOf(session);
    if (!endpoint) return;
    const payload = {
      type: 'presentation.completed',
      sessionId: session.id,
      tenantId: session.tenantId,
      requestId: session.public.requestId,
      credentials,
    };
    await postJsonWithRetries(
      this.deps.outbound,
      endpoint,
      payload,
      async ({ attempt, failure, final }) => {
        const details = { attempt, ...(failure && { reason: failure }) };
        if (!failure) await this.deps.sessions.log(session.id, 'info', 'webhook delivered', details);
        else
          await this.deps.sessions.log(
            session.id,
            final ? 'error' : 'warn',
            final ? 'webhook delivery failed; giving up' : 'webhook delivery failed; will retry',
            details,
          );
      },
      this.deps.webhookRetryDelaysMs,
    );
  }
}

export type Flow = 'redirect' | 'dc-api';
const flowOf = (session: SessionState): Flow => (session.public.useDcApi ? 'dc-api' : 'redirect');

interface PresentationSecrets {
  nonce: string;
  state: string;
  dcqlQuery: Record<string, unknown>;
  transactionData?: Record<string, unknown>[];
  encryptionKey?: JWK;
  verifierInfo?: VerifierInfo[];
}

/**
 * The session's signed request object. Over the DC API (appendix A.3.2) it carries
 * `expected_origins` and `response_mode` dc_api.jwt, and neither response_uri nor state.
 */
export async function signedRequestOf(deps: VerificationDeps, session: SessionState, walletNonce?: string): Promise<string> {
  const secrets = session.private as unknown as PresentationSecrets;
  const dcApi = flowOf(session) === 'dc-api';
  const config = await deps.configs.get(session.tenantId, session.public.requestId as string);
  const signer = await deps.signing.signer(session.tenantId, { keyChainId: config.accessKeyChainId, usageType: 'access' });
  const { d: _private, ...encryptionJwk } = secrets.encryptionKey ?? {};
  return signRequestObject(signer, {
    clientId: session.public.clientId as string,
    responseMode: session.public.responseMode as RequestObjectInput['responseMode'],
    ...(dcApi
      ? { expectedOrigins: [session.public.browserOrigin as string] }
      : { responseUri: session.public.responseUri as string, state: secrets.state }),
    nonce: secrets.nonce,
    dcqlQuery: secrets.dcqlQuery,
    lifetimeSeconds: Math.max(1, Math.floor((Date.parse(session.expiresAt) - Date.now()) / 1000)),
    ...(secrets.encryptionKey && { encryptionJwk: { ...encryptionJwk, kid: 'response-encryption' } as JWK }),
    ...(secrets.transactionData && { transactionData: secrets.transactionData }),
    ...(secrets.verifierInfo && { verifierInfo: secrets.verifierInfo }),
    ...(walletNonce && { walletNonce }),
  });
}

/** OpenID4VP 1.0: a JSON object from credential query id to a non-empty array of presentations. */
function parseVpToken(raw: unknown): Record<string, string[]> {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new PresentationRejected('vp_token must be a JSON object keyed by credential query id');
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new PresentationRejected('vp_token must be a JSON object keyed by credential query id');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) throw new PresentationRejected('vp_token holds no presentation');
  for (const [, list] of entries) {
    if (!Array.isArray(list) || list.length === 0 || list.some((p) => typeof p !== 'string'))
      throw new PresentationRejected('each vp_token entry must be a non-empty array of presentations');
  }
  return value as Record<string, string[]>;
}
