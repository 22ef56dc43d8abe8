// The wallet's answer to an Annex C request, as the integrator's page posts it: the `response` of
// the DigitalCredential's data, base64url(CBOR(EncryptedResponse)). It is opened with the session's
// recipient key over the session transcript made from the session's EncryptionInfo and its expected
// origin (never from anything the page sends), and the DeviceResponse inside is verified over that
// same transcript: issuer signature and trust, MSO validity and digests, device signature. Each
// document must be of a docType the request asked for; it answers that credential query. Status,
// DCQL and completion follow in ResponseEndpoint.respondWith, as for every other flow.

import { verifyMdocPresentation } from '../../formats/mso-mdoc/verify.js';
import type { PresentationContext } from '../../formats/presentation-context.js';
import { PresentationRejected } from '../errors.js';
import type { ResponseEndpoint, VerifiedCredential } from '../response/endpoint.js';
import { presentationPrivate, presentationPublic } from '../session.js';
import { itemsRequestsOf } from './device-request.js';
import { openResponse, parseEncryptedResponse } from './encryption.js';
import { annexCSecrets } from './session.js';
import { annexCTranscript } from './transcript.js';

export interface AnnexCResponseBody {
  response: string;
  origin?: string;
}

export class AnnexCResponses {
  constructor(private readonly responses: ResponseEndpoint) {}

  respond(handle: string, body: AnnexCResponseBody): Promise<{ redirect_uri?: string }> {
    return this.responses.respondWith(handle, { ...body }, 'annex-c', async ({ session }, context) => {
      const request = presentationPublic(session);
      const secrets = annexCSecrets(session);
      const dcqlQuery = presentationPrivate(session)?.dcqlQuery;
      if (!secrets || !dcqlQuery || !request.browserOrigin) throw new PresentationRejected('this session holds no Annex C request');
      const transcript = annexCTranscript(secrets.encryptionInfo, request.browserOrigin);
      const deviceResponse = await openResponse(
        { privateJwk: secrets.recipientKey },
        parseEncryptedResponse(body.response),
        transcript.bytes,
      );
      return this.verify(deviceResponse, context, transcript.forMdoc, dcqlQuery);
    });
  }

  private async verify(
    deviceResponse: Uint8Array,
    context: PresentationContext,
    sessionTranscript: ReturnType<typeof annexCTranscript>['forMdoc'],
    dcqlQuery: Record<string, unknown>,
  ): Promise<VerifiedCredential[]> {
    const queries = itemsRequestsOf(dcqlQuery);
    const documents = await verifyMdocPresentation(Buffer.from(deviceResponse).toString('base64url'), context, sessionTranscript);
    return documents.map((document) => {
      const query = queries.find((q) => q.docType === document.docType);
      if (!query) throw new PresentationRejected(`mdoc: document ${document.docType} was not requested`);
      return { queryId: query.queryId, ...document };
    });
  }
}
