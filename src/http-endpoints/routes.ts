import { z } from 'zod';
import { contextOf, tenantOf } from '../platform/http/access.js';
import { withExample } from '../platform/http/examples.js';
import type { App } from '../platform/http/types.js';
import { AttributeProviderSchema, CreateEndpointBody, UpdateEndpointBody, WebhookEndpointSchema } from './schemas.js';
import type { HttpEndpointService } from './service.js';

const Params = z.object({ id: z.string() });
const access = { roles: ['issuance:manage'], tenant: 'required' } as const;

/** The same five operations under one path per kind. */
function endpointRoutes(app: App, service: HttpEndpointService, path: string, View: typeof AttributeProviderSchema) {
  const { label } = service.kind;
  const tags = [`${label}s`];
  const auth = 'A header value is write-only: it is stored encrypted and every response shows it as `****`.';

  app.get(
    path,
    { config: { access }, schema: { tags, summary: `List the tenant's ${label}s`, response: { 200: z.array(View) } } },
    (request) => service.list(tenantOf(request)),
  );

  app.post(
    path,
    {
      config: { access },
      schema: {
        tags,
        summary: `Create a ${label}`,
        description: auth,
        body: withExample(CreateEndpointBody, { id: 'crm', name: 'CRM', url: 'https://crm.acme.example/claims', auth: { type: 'none' } }),
        response: { 201: View },
      },
    },
    async (request, reply) => reply.code(201).send(await service.create(contextOf(request), tenantOf(request), request.body)),
  );

  app.get(
    `${path}/:id`,
    { config: { access }, schema: { tags, summary: `Get a ${label}`, params: Params, response: { 200: View } } },
    (request) => service.get(tenantOf(request), request.params.id),
  );

  app.patch(
    `${path}/:id`,
    {
      config: { access },
      schema: {
        tags,
        summary: `Update a ${label}; the fields given replace the stored ones, auth as a whole`,
        description: auth,
        params: Params,
        body: withExample(UpdateEndpointBody, { name: 'CRM (production)', description: 'claims of the staff from the CRM' }),
        response: { 200: View },
      },
    },
    (request) => service.update(contextOf(request), tenantOf(request), request.params.id, request.body),
  );

  app.delete(
    `${path}/:id`,
    {
      config: { access },
      schema: {
        tags,
        summary: `Delete a ${label} (409 while a credential configuration refers to it)`,
        params: Params,
        response: { 204: z.null() },
      },
    },
    async (request, reply) => {
      await service.remove(contextOf(request), tenantOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}

export function httpEndpointRoutes(app: App, services: { attributeProviders: HttpEndpointService; webhookEndpoints: HttpEndpointService }) {
  endpointRoutes(app, services.attributeProviders, '/api/issuer/attribute-providers', AttributeProviderSchema);
  endpointRoutes(app, services.webhookEndpoints, '/api/issuer/webhook-endpoints', WebhookEndpointSchema);
}
