// Presentation requests: a session with its nonce, state and response encryption key, and the
// openid4vp:// URI the wallet opens. Wallet-facing URLs carry an unguessable per-session value.
// response_type dc-api (OpenID4VP 1.0 appendix A): the signed request is made at once, for the
// integrator's page to pass to navigator.credentials.get; the page posts the wallet's answer back.
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import type { RequestContext } from '../platform/auth/principal.js';
import { badRequest, forbidden, invalidFields } from '../platform/http/problem.js';
import { PRESENTATION_HANDLE, presentationUrls, type VerificationDeps } from './deps.js';
import type { PresentationConfiguration } from './ports.js';
import { signedRequestOf } from './protocol.js';
import { type ClientIdPrefix, clientIdFor, type ResponseMode, type VerifierInfo } from './request-object.js';

export interface PresentationOfferRequest {
  response_type: 'uri' | 'dc-api' | 'iso-18013-7';
  requestId: string;
  /** Overrides the configuration's webhook for this request. */
  webhook?: { url: string; auth?: { type: 'none' } | { type: 'header'; header: { name: string; value: string } } };
  redirectUri?: string;
  expected_origin?: string;
  transaction_data?: Record<string, unknown>[];
  /** Ours: x509_hash (default, HAIP) or x509_san_dns. */
  clientIdPrefix?: ClientIdPrefix;
  /** Ours: direct_post.jwt (default) or direct_post. */
  responseMode?: ResponseMode;
  /** Ours: get (default) or post for request_uri_method. */
  requestUriMethod?: 'get' | 'post';
}

const random = () => randomBytes(32).toString('base64url');
const DEFAULT_LIFETIME_SECONDS = 300;

/** The page's origin for expected_origins; its form is checked with the request body. */
function expectedOrigin(value: string | undefined): string {
  if (value) return value;
  const message = "response_type 'dc-api' requires the origin of the page that calls the Digital Credentials API";
  throw badRequest(`expected_origin: ${message}`, [{ field: 'body.expected_origin', message }]);
}

export class PresentationOffers {
  constructor(private readonly deps: VerificationDeps) {}

  async create(ctx: RequestContext, tenantId: string, input: PresentationOfferRequest) {
    if (input.response_type === 'iso-18013-7') {
      throw badRequest(`response_type: '${input.response_type}' is not supported yet`, [
        { field: 'body.response_type', message: 'only uri and dc-api are supported so far' },
      ]);
    }
    const webhookRefusal = input.webhook && this.deps.outbound.urlRefusal(input.webhook.url);
    if (webhookRefusal) throw invalidFields([{ field: 'body.webhook.url', message: webhookRefusal }]);
    const dcApi = input.response_type === 'dc-api';
    const browserOrigin = dcApi ? expectedOrigin(input.expected_origin) : undefined;
    if (dcApi && (input.responseMode || input.requestUriMethod))
      throw badRequest("responseMode and requestUriMethod do not apply to response_type 'dc-api' (it uses dc_api.jwt)", [
        { field: input.responseMode ? 'body.responseMode' : 'body.requestUriMethod', message: "not for response_type 'dc-api'" },
      ]);
    const allowed = ctx.principal.allowedPresentationConfigs;
    if (allowed?.length && !allowed.includes(input.requestId))
      throw forbidden(`this client may not use presentation configuration '${input.requestId}' (allowedPresentationConfigs)`);
    const config = await this.deps.configs.get(tenantId, input.requestId).catch(() => {
      throw badRequest(`requestId: no presentation configuration '${input.requestId}'`, [
        { field: 'body.requestId', message: 'no such presentation configuration' },
      ]);
    });
    const signer = await this.deps.signing.signer(tenantId, { keyChainId: config.accessKeyChainId, usageType: 'access' });
    const verifierInfo = await this.verifierInfoOf(tenantId, config);
    const clientIdPrefix = input.clientIdPrefix ?? 'x509_hash';
    const clientId = clientIdFor(clientIdPrefix, signer, this.deps.publicUrl);
    const walletNonce = random();
    const urls = presentationUrls(this.deps.publicUrl, walletNonce);
    const responseMode = dcApi ? 'dc_api.jwt' : (input.responseMode ?? 'direct_post.jwt');
    const encryption = responseMode === 'direct_post' ? undefined : await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
    const lifetime = config.lifeTime ?? DEFAULT_LIFETIME_SECONDS;
    const transactionData = input.transaction_data ?? config.transaction_data ?? undefined;
    const redirectUri = input.redirectUri ?? config.redirectUri ?? undefined;
    const session = await this.deps.db.transaction().execute(async (trx) => {
      const created = await this.deps.sessions.create(
        {
          tenantId,
          kind: 'presentation',
          clientId: ctx.principal.clientId,
          lifetimeSeconds: lifetime,
          public: {
            requestId: config.id,
            clientId,
            clientIdPrefix,
            responseMode,
            requestUriMethod: input.requestUriMethod ?? 'get',
            requestUrl: urls.request,
            responseUri: dcApi ? urls.dcApiResponse : urls.response,
            walletNonce,
            useDcApi: dcApi,
            ...(browserOrigin && { dcApiProtocol: 'oid4vp', browserOrigin }),
            ...(redirectUri && { redirectUri }),
          },
          private: {
            nonce: random(),
            state: random(),
            dcqlQuery: config.dcql_query,
            ...(input.webhook && { webhook: input.webhook }),
            ...(transactionData?.length && { transactionData }),
            ...(encryption && { encryptionKey: await exportJWK(encryption.privateKey) }),
            ...(verifierInfo.length && { verifierInfo }),
          },
        },
        trx,
      );
      await this.deps.sessions.addHandle(created.id, PRESENTATION_HANDLE, walletNonce, created.expiresAt, trx);
      await this.deps.sessions.log(
        created.id,
        'info',
        'presentation request created',
        { requestId: config.id, by: ctx.principal.clientId },
        trx,
      );
      return created;
    });
    const params = new URLSearchParams({ client_id: clientId, request_uri: urls.request });
    if (input.requestUriMethod === 'post') params.set('request_uri_method', 'post');
    const offer = { uri: `openid4vp://?${params.toString()}`, session: session.id, requestUri: urls.request, expiresAt: session.expiresAt };
    if (!dcApi) return offer;
    // The wallet gets the request through the browser, never by request_uri: the session is `fetched` at once.
    const request = await signedRequestOf(this.deps, session);
    await this.deps.sessions.update(tenantId, session.id, { status: 'fetched' }, { statuses: ['active'] });
    await this.deps.sessions.log(session.id, 'info', 'request object made for the Digital Credentials API', { origin: browserOrigin });
    return {
      ...offer,
      dcApiRequest: { protocol: 'openid4vp-v1-signed' as const, data: { request } },
      responseUri: urls.dcApiResponse,
    };
  }

  /**
   * What the request tells the wallet about the verifier: the configuration's registration
   * certificate, obtained (or taken from its cache) before the session exists, so that a registrar
   * failure fails the offer instead of sending a request without it; then the configuration's
   * attachments.
   */
  private async verifierInfoOf(tenantId: string, config: PresentationConfiguration): Promise<VerifierInfo[]> {
    const registrationCert = await this.deps.registrationCertificates.forRequest(tenantId, config);
    return [...(registrationCert ? [{ format: 'registration_cert', data: registrationCert }] : []), ...(config.attached ?? [])];
  }
}
