import { z } from 'zod';
import { contextOf, tenantOf } from '../platform/http/access.js';
import type { App } from '../platform/http/types.js';
import { DeliveryListQuery, WebhookDeliveryPageSchema } from './schemas.js';
import { DELIVERY_ROLES, kindsFor, type WebhookDeliveries } from './service.js';

const access = { roles: DELIVERY_ROLES, tenant: 'required' } as const;
const tags = ['webhook deliveries'];
const SEEN = 'A caller sees the deliveries of issuance events with `issuance:manage`, of presentation events with `presentation:manage`.';

export function webhookDeliveryRoutes(app: App, deliveries: WebhookDeliveries) {
  app.get(
    '/api/webhook-deliveries',
    {
      config: { access },
      schema: {
        tags,
        summary: "List the tenant's webhook deliveries, newest first, a page at a time",
        description: SEEN,
        querystring: DeliveryListQuery,
        response: { 200: WebhookDeliveryPageSchema },
      },
    },
    (request) => {
      const { sessionId, state, endpointId, page, pageSize } = request.query;
      const kinds = kindsFor(contextOf(request).principal.roles);
      return deliveries.list(tenantOf(request), { sessionId, state, endpoint: endpointId, kinds }, page, pageSize);
    },
  );

  app.post(
    '/api/webhook-deliveries/:id/retry',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Send a delivery again: pending, due now, with a fresh retry horizon',
        description: `${SEEN} 404 for another tenant's delivery or one the caller does not see. A delivered one is sent again (the same webhook-id: receivers that deduplicate ignore it).`,
        params: z.object({ id: z.string() }),
        response: { 202: z.null() },
      },
    },
    async (request, reply) => {
      await deliveries.retry(tenantOf(request), request.params.id, kindsFor(contextOf(request).principal.roles));
      return reply.code(202).send(null);
    },
  );
}
