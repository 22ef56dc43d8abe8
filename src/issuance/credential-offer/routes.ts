// The offer from both sides: the integrator creates it, the wallet fetches it by reference.
import { z } from 'zod';
import { contextOf, tenantOf } from '../../platform/http/access.js';
import type { App } from '../../platform/http/types.js';
import { noStore, TenantParams, WALLET_TAGS } from '../routes-support.js';
import { OfferBody, OfferResponse } from './schemas.js';
import type { OfferService } from './service.js';

export function offerRoutes(app: App, offers: OfferService) {
  app.post(
    '/api/issuer/offer',
    {
      config: { access: { roles: ['issuance:offer'], tenant: 'required' } },
      schema: {
        tags: ['issuance'],
        summary: 'Create a credential offer (pre-authorized code or authorization code flow)',
        description:
          'Creates an issuance session and returns the offer URI. Inline claims are validated against the configurations now; a client whose allowedIssuanceConfigs excludes a requested id gets 403.',
        body: OfferBody,
        response: { 201: OfferResponse },
      },
    },
    async (request, reply) => reply.code(201).send(await offers.create(contextOf(request), tenantOf(request), request.body)),
  );

  app.get(
    '/issuers/:tenantId/credential-offer/:handle',
    {
      schema: {
        tags: WALLET_TAGS,
        summary: 'A credential offer by reference (credential_offer_uri)',
        description:
          'The offer a wallet fetches from the credential_offer_uri of a QR code or deep link. The handle is single-purpose and unguessable; an unknown or expired one answers 404 invalid_request.',
        params: TenantParams.extend({ handle: z.string() }),
      },
    },
    async (request, reply) => {
      const offer = await offers.byReference(request.params.tenantId, request.params.handle);
      if (!offer) return reply.code(404).send({ error: 'invalid_request', error_description: 'unknown or expired credential offer' });
      return noStore(reply).send(offer);
    },
  );
}
