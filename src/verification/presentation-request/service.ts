// Presentation requests: a session with its nonce, state and response encryption key, and the
// openid4vp:// URI the wallet opens. Wallet-facing URLs carry an unguessable per-session value.
// response_type dc-api (OpenID4VP 1.0 appendix A): the signed request is made at once, for the
// integrator's page to pass to navigator.credentials.get; the page posts the wallet's answer back.
// response_type iso-18013-7 (ISO/IEC 18013-7 Annex C, protocol org-iso-mdoc) is made by annex-c/.
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import type { SigningService } from '../../key-chains/signing.js';
import type { RequestContext } from '../../platform/auth/principal.js';
import type { Executor } from '../../platform/db/values.js';
import { badRequest, type FieldError, forbidden, invalidFields } from '../../platform/http/problem.js';
import type { OutboundClient } from '../../platform/outbound/client.js';
import type { SessionService } from '../../sessions/service.js';
import type { AnnexCOfferMaker } from '../annex-c/index.js';
import type { VerifierFederation } from '../federation.js';
import type { PresentationConfiguration, PresentationConfigurations, RegistrationCertificateSource } from '../ports.js';
import type { RequestObjects } from '../request-object/endpoint.js';
import { clientIdFor, type VerifierInfo } from '../request-object/sign.js';
import { ownWebhook, presentationWebhookTarget } from '../response/webhook.js';
import type { PresentationPrivate, PresentationPublic } from '../session.js';
import { PRESENTATION_HANDLE, presentationUrls } from '../urls.js';
import type { PresentationOfferRequest } from './schemas.js';

const random = () => randomBytes(32).toString('base64url');
const DEFAULT_LIFETIME_SECONDS = 300;

function checkAllowed(ctx: RequestContext, requestId: string) {
  const allowed = ctx.principal.allowedPresentationConfigs;
  if (allowed?.length && !allowed.includes(requestId))
    throw forbidden(`this client may not use presentation configuration '${requestId}' (allowedPresentationConfigs)`);
}

/** The page's origin for expected_origins; its form is checked with the request body. */
function expectedOrigin(value: string | undefined, responseType: string): string {
  if (value) return value;
  const message = `response_type '${responseType}' requires the origin of the page that calls the Digital Credentials API`;
  throw badRequest(`expected_origin: ${message}`, [{ field: 'body.expected_origin', message }]);
}

/** A tenant's rule over a presentation request before its session opens (a conformance profile); answers what it breaks. */
export type PresentationRequestCheck = (
  tenantId: string,
  input: PresentationOfferRequest,
  config: PresentationConfiguration,
) => Promise<FieldError[]>;

export class PresentationOffers {
  private readonly checks: PresentationRequestCheck[] = [];

  constructor(
    private readonly db: Executor,
    private readonly publicUrl: string,
    private readonly sessions: SessionService,
    private readonly configs: PresentationConfigurations,
    private readonly registrationCertificates: RegistrationCertificateSource,
    private readonly signing: SigningService,
    private readonly outbound: OutboundClient,
    private readonly requests: RequestObjects,
    private readonly federation: VerifierFederation,
    private readonly annexC?: AnnexCOfferMaker,
  ) {}

  /** Adds a rule the tenant's presentation requests obey, checked before the session opens. */
  addCheck(check: PresentationRequestCheck) {
    this.checks.push(check);
  }

  /** checkInput, checkAllowed, configuration, the tenant's checks, verifier info; then the session opens (and over the DC API, the request is signed at once). */
  async create(ctx: RequestContext, tenantId: string, input: PresentationOfferRequest) {
    const browserOrigin = this.checkInput(input);
    checkAllowed(ctx, input.requestId);
    const config = await this.configuration(tenantId, input.requestId);
    const errors: FieldError[] = input.clientIdPrefix === 'openid_federation' ? await this.federation.refusal(tenantId) : [];
    for (const check of this.checks) errors.push(...(await check(tenantId, input, config)));
    if (errors.length) throw invalidFields(errors);
    if (input.response_type === 'iso-18013-7' && browserOrigin && this.annexC)
      return this.annexC.create(ctx, tenantId, { ...input, expected_origin: browserOrigin }, config);
    const verifierInfo = await this.verifierInfoOf(tenantId, config);
    const { session, offer, urls } = await this.open(ctx, tenantId, input, config, verifierInfo, browserOrigin);
    if (!browserOrigin) return offer;
    // The wallet gets the request through the browser, never by request_uri: the session is `fetched` at once.
    const request = await this.requests.sign(session);
    await this.sessions.update(tenantId, session.id, { status: 'fetched' }, { expected: { statuses: ['active'] } });
    await this.sessions.log(session.id, 'info', 'request object made for the Digital Credentials API', { origin: browserOrigin });
    return {
      ...offer,
      dcApiRequest: { protocol: 'openid4vp-v1-signed' as const, data: { request } },
      responseUri: urls.dcApiResponse,
    };
  }

  /** What the body alone decides; the expected browser origin for a dc-api request. */
  private checkInput(input: PresentationOfferRequest): string | undefined {
    if (input.response_type === 'iso-18013-7' && !this.annexC) {
      throw badRequest(`response_type: '${input.response_type}' is not supported by this instance`, [
        { field: 'body.response_type', message: 'ISO 18013-7 Annex C is not set up' },
      ]);
    }
    const webhookRefusal = input.webhook && this.outbound.urlRefusal(input.webhook.url);
    if (webhookRefusal) throw invalidFields([{ field: 'body.webhook.url', message: webhookRefusal }]);
    if (input.response_type === 'uri') {
      // svc encrypts responses with a key made per session, which the federation metadata cannot carry.
      if (input.clientIdPrefix === 'openid_federation' && input.responseMode === 'direct_post.jwt')
        throw badRequest('responseMode: openid_federation requests use direct_post', [
          { field: 'body.responseMode', message: 'must be direct_post (the default) with clientIdPrefix openid_federation' },
        ]);
      return undefined;
    }
    if (input.clientIdPrefix === 'openid_federation')
      throw badRequest(`clientIdPrefix: openid_federation is for response_type 'uri' only`, [
        { field: 'body.clientIdPrefix', message: `not for response_type '${input.response_type}'` },
      ]);
    const origin = expectedOrigin(input.expected_origin, input.response_type);
    if (input.responseMode || input.requestUriMethod)
      throw badRequest(`responseMode and requestUriMethod do not apply to response_type '${input.response_type}'`, [
        {
          field: input.responseMode ? 'body.responseMode' : 'body.requestUriMethod',
          message: `not for response_type '${input.response_type}'`,
        },
      ]);
    if (input.response_type === 'iso-18013-7' && input.clientIdPrefix)
      throw badRequest("clientIdPrefix does not apply to response_type 'iso-18013-7' (it has no client_id)", [
        { field: 'body.clientIdPrefix', message: "not for response_type 'iso-18013-7'" },
      ]);
    return origin;
  }

  private async configuration(tenantId: string, requestId: string): Promise<PresentationConfiguration> {
    const config = await this.configs.find(tenantId, requestId);
    if (config) return config;
    throw badRequest(`requestId: no presentation configuration '${requestId}'`, [
      { field: 'body.requestId', message: 'no such presentation configuration' },
    ]);
  }

  /** The session with its nonce, state and response key, and its wallet-facing handle, in one transaction. */
  private async open(
    ctx: RequestContext,
    tenantId: string,
    input: PresentationOfferRequest,
    config: PresentationConfiguration,
    verifierInfo: VerifierInfo[],
    browserOrigin: string | undefined,
  ) {
    const signer = await this.signing.signer(tenantId, { keyChainId: config.accessKeyChainId, usageType: 'access' });
    const clientIdPrefix = input.clientIdPrefix ?? 'x509_hash';
    const viaFederation = clientIdPrefix === 'openid_federation';
    const clientId = viaFederation ? await this.federation.clientId(tenantId) : clientIdFor(clientIdPrefix, signer, this.publicUrl);
    const walletNonce = random();
    const urls = presentationUrls(this.publicUrl, walletNonce);
    const responseMode = browserOrigin ? 'dc_api.jwt' : (input.responseMode ?? (viaFederation ? 'direct_post' : 'direct_post.jwt'));
    const encryption = responseMode === 'direct_post' ? undefined : await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
    const transactionData = input.transaction_data ?? config.transaction_data ?? undefined;
    const redirectUri = input.redirectUri ?? config.redirectUri ?? undefined;
    const publicData: PresentationPublic = {
      requestId: config.id,
      clientId,
      clientIdPrefix,
      responseMode,
      requestUriMethod: input.requestUriMethod ?? 'get',
      requestUrl: urls.request,
      responseUri: browserOrigin ? urls.dcApiResponse : urls.response,
      walletNonce,
      useDcApi: browserOrigin !== undefined,
      ...(browserOrigin && { dcApiProtocol: 'oid4vp', browserOrigin }),
      ...(redirectUri && { redirectUri }),
    };
    const own = ownWebhook(input.webhook);
    const privateData: PresentationPrivate = {
      nonce: random(),
      state: random(),
      dcqlQuery: config.dcql_query,
      ...(own.webhook && { webhook: own.webhook }),
      ...(transactionData?.length && { transactionData }),
      ...(encryption && { encryptionKey: { ...(await exportJWK(encryption.privateKey)) } }),
      ...(verifierInfo.length && { verifierInfo }),
    };
    const lifetimeSeconds = config.lifeTime ?? DEFAULT_LIFETIME_SECONDS;
    const details = { requestId: config.id, by: ctx.principal.clientId };
    const session = await this.sessions.create(
      {
        tenantId,
        kind: 'presentation',
        clientId: ctx.principal.clientId,
        lifetimeSeconds,
        public: publicData,
        private: privateData,
        webhookTarget: presentationWebhookTarget(own.webhook !== undefined, config),
      },
      this.db,
      {
        handles: [{ purpose: PRESENTATION_HANDLE, secret: walletNonce }],
        log: { level: 'info', message: 'presentation request created', details },
      },
    );
    const params = new URLSearchParams({ client_id: clientId, request_uri: urls.request });
    if (input.requestUriMethod === 'post') params.set('request_uri_method', 'post');
    const offer = {
      uri: `openid4vp://?${params.toString()}`,
      session: session.id,
      requestUri: urls.request,
      expiresAt: session.expiresAt,
      ...own.answer,
    };
    return { session, offer, urls };
  }

  /**
   * What the request tells the wallet about the verifier: the configuration's registration
   * certificate, obtained (or taken from its cache) before the session exists, so that a registrar
   * failure fails the offer instead of sending a request without it; then the configuration's
   * attachments.
   */
  private async verifierInfoOf(tenantId: string, config: PresentationConfiguration): Promise<VerifierInfo[]> {
    const registrationCert = await this.registrationCertificates.forRequest(tenantId, config);
    return [...(registrationCert ? [{ format: 'registration_cert', data: registrationCert }] : []), ...(config.attached ?? [])];
  }
}
