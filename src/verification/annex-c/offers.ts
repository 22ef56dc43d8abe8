// A presentation request by ISO/IEC 18013-7 Annex C (protocol org-iso-mdoc of the W3C Digital
// Credentials API): the session, its recipient key and EncryptionInfo, and the DeviceRequest with
// ReaderAuth over the session transcript, which binds them to the origin of the integrator's page.
// The page passes { protocol: 'org-iso-mdoc', data: { deviceRequest, encryptionInfo } } to
// navigator.credentials.get and posts what the wallet answers to the session's response URL.
import { randomBytes } from 'node:crypto';
import type { SigningService } from '../../key-chains/signing.js';
import type { RequestContext } from '../../platform/auth/principal.js';
import type { Executor } from '../../platform/db/values.js';
import { badRequest } from '../../platform/http/problem.js';
import type { SessionService } from '../../sessions/service.js';
import type { PresentationConfiguration } from '../ports.js';
import { clientIdFor } from '../request-object/sign.js';
import { ownWebhook, presentationWebhookTarget } from '../response/webhook.js';
import type { PresentationPrivate, PresentationPublic } from '../session.js';
import { PRESENTATION_HANDLE } from '../urls.js';
import { deviceRequest, itemsRequestsOf } from './device-request.js';
import { newEncryptionInfo } from './encryption.js';
import { ANNEX_C_PROTOCOL, type AnnexCSecrets, annexCResponseUrl, ISO_18013_7 } from './session.js';
import { annexCTranscript } from './transcript.js';

const random = () => randomBytes(32).toString('base64url');
const DEFAULT_LIFETIME_SECONDS = 300;

export interface AnnexCOfferInput {
  expected_origin: string;
  webhook?: PresentationPrivate['webhook'];
  redirectUri?: string;
  transaction_data?: unknown[];
}

export class AnnexCOffers {
  constructor(
    private readonly db: Executor,
    private readonly publicUrl: string,
    private readonly sessions: SessionService,
    private readonly signing: SigningService,
  ) {}

  async create(ctx: RequestContext, tenantId: string, input: AnnexCOfferInput, config: PresentationConfiguration) {
    // Annex C has no place for transaction data: a request that needs it cannot be made this way.
    if (input.transaction_data?.length || config.transaction_data?.length)
      throw badRequest("transaction_data: response_type 'iso-18013-7' cannot carry transaction data", [
        { field: 'body.transaction_data', message: 'not carried by ISO 18013-7 Annex C' },
      ]);
    const items = itemsRequestsOf(config.dcql_query);
    const origin = input.expected_origin;
    const signer = await this.signing.signer(tenantId, { keyChainId: config.accessKeyChainId, usageType: 'access' });
    const { recipient, encryptionInfo } = await newEncryptionInfo();
    const transcript = annexCTranscript(encryptionInfo, origin);
    const request = await deviceRequest(items, transcript, signer);

    const walletNonce = random();
    const responseUri = annexCResponseUrl(this.publicUrl, walletNonce);
    const redirectUri = input.redirectUri ?? config.redirectUri ?? undefined;
    const publicData: PresentationPublic = {
      requestId: config.id,
      // No client_id travels in Annex C; the reader is the access certificate, named as OpenID4VP would.
      clientId: clientIdFor('x509_hash', signer, this.publicUrl),
      clientIdPrefix: 'x509_hash',
      responseMode: 'dc_api',
      responseUri,
      walletNonce,
      useDcApi: true,
      dcApiProtocol: ISO_18013_7,
      browserOrigin: origin,
      ...(redirectUri && { redirectUri }),
    };
    const annexC: AnnexCSecrets = { encryptionInfo, recipientKey: recipient.privateJwk as Record<string, unknown> };
    const own = ownWebhook(input.webhook);
    const privateData: PresentationPrivate & { annexC: AnnexCSecrets } = {
      nonce: random(),
      state: random(),
      dcqlQuery: config.dcql_query,
      ...(own.webhook && { webhook: own.webhook }),
      annexC,
    };
    const session = await this.db.transaction().execute(async (trx) => {
      const lifetimeSeconds = config.lifeTime ?? DEFAULT_LIFETIME_SECONDS;
      const created = await this.sessions.create(
        {
          tenantId,
          kind: 'presentation',
          clientId: ctx.principal.clientId,
          lifetimeSeconds,
          public: publicData,
          private: privateData,
          webhookTarget: presentationWebhookTarget(own.webhook !== undefined, config),
        },
        trx,
      );
      await this.sessions.addHandle(created.id, PRESENTATION_HANDLE, walletNonce, created.expiresAt, trx);
      await this.sessions.log(
        created.id,
        'info',
        'presentation request created',
        { requestId: config.id, by: ctx.principal.clientId },
        trx,
      );
      return created;
    });
    // The wallet gets the request through the browser, never by request_uri: the session is `fetched` at once.
    await this.sessions.update(tenantId, session.id, { status: 'fetched' }, { expected: { statuses: ['active'] } });
    await this.sessions.log(session.id, 'info', 'ISO 18013-7 Annex C request made for the Digital Credentials API', {
      origin,
      docTypes: items.map((i) => i.docType),
    });
    return {
      session: session.id,
      expiresAt: session.expiresAt,
      dcApiRequest: { protocol: ANNEX_C_PROTOCOL, data: { deviceRequest: request, encryptionInfo } },
      responseUri,
      ...own.answer,
    };
  }
}
