import { contextOf, tenantOf } from '../../platform/http/access.js';
import type { App } from '../../platform/http/types.js';
import { OfferBody, OfferResponse } from './schemas.js';
import type { PresentationOffers } from './service.js';

export function presentationRequestRoutes(app: App, offers: PresentationOffers) {
  app.post(
    '/api/verifier/offer',
    {
      config: { access: { roles: ['presentation:request'], tenant: 'required' } },
      schema: {
        tags: ['verification'],
        summary: 'Create a presentation request (OpenID4VP 1.0 with DCQL, or ISO/IEC 18013-7 Annex C)',
        description: [
          'response_type uri: an openid4vp:// URI for a wallet. dc-api: a signed OpenID4VP request (openid4vp-v1-signed) for',
          'navigator.credentials.get. iso-18013-7: an Annex C request (org-iso-mdoc: deviceRequest with ReaderAuth signed by the',
          "access key chain, encryptionInfo with this session's recipient key) for navigator.credentials.get; the configuration's",
          'DCQL must consist of mso_mdoc queries with claims, without transaction_data. dc-api and iso-18013-7 need',
          "expected_origin, and the page posts the wallet's answer to responseUri. A client whose allowedPresentationConfigs",
          'excludes requestId gets 403.',
        ].join(' '),
        body: OfferBody,
        response: { 201: OfferResponse },
      },
    },
    async (request, reply) => reply.code(201).send(await offers.create(contextOf(request), tenantOf(request), request.body)),
  );
}
