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
        summary: 'Create a presentation request (OpenID4VP 1.0 with DCQL)',
        description: 'A client whose allowedPresentationConfigs excludes requestId gets 403.',
        body: OfferBody,
        response: { 201: OfferResponse },
      },
    },
    async (request, reply) => reply.code(201).send(await offers.create(contextOf(request), tenantOf(request), request.body)),
  );
}
