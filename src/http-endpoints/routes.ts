import { z } from 'zod';
import { contextOf, tenantOf } from '../platform/http/access.js';
import { withExample } from '../platform/http/examples.js';
import type { App } from '../platform/http/types.js';
import {
  AttributeProviderSchema,
  CreatedWebhookEndpointSchema,
  CreateEndpointBody,
  RotatedSecretSchema,
  UpdateEndpointBody,
  WebhookEndpointSchema,
} from './schemas.js';
import type { HttpEndpointService } from './service.js';

const Params = z.object({ id: z.string() });
const access = { roles: ['issuance:manage'], tenant: 'required' } as const;

/** The same five operations under one path per kind. */
function endpointRoutes(
  app: App,
  service: HttpEndpointService,
  path: string,
  View: typeof AttributeProviderSchema,
  created: { schema: typeof AttributeProviderSchema | typeof CreatedWebhookEndpointSchema; description: string },
) {
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
        description: `${auth}${created.description}`,
        body: withExample(CreateEndpointBody, { id: 'crm', name: 'CRM', url: 'https://crm.acme.example/claims', auth: { type: 'none' } }),
        response: { 201: created.schema },
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
  endpointRoutes(app, services.attributeProviders, '/api/issuer/attribute-providers', AttributeProviderSchema, {
    schema: AttributeProviderSchema,
    description: '',
  });
  const path = '/api/issuer/webhook-endpoints';
  endpointRoutes(app, services.webhookEndpoints, path, WebhookEndpointSchema, {
    schema: CreatedWebhookEndpointSchema,
    description: ' The answer carries `signingSecret`, the Standard Webhooks secret that signs every request to the endpoint, this once.',
  });
  app.post(
    `${path}/:id/rotate-secret`,
    {
      config: { access },
      schema: {
        tags: ['webhook endpoints'],
        summary: 'Replace the signing secret of a webhook endpoint',
        description:
          'Answers the new `signingSecret`, this once. For WEBHOOK_SECRET_ROTATION_GRACE_SECONDS (default a day) the previous secret still signs too: webhook-signature then carries both signatures, space-separated, so the receiver can switch over without losing a request. An endpoint made before signing existed is sent unsigned until this gives it its first secret.',
        params: Params,
        response: { 200: RotatedSecretSchema },
      },
    },
    (request) => services.webhookEndpoints.rotateSecret(contextOf(request), tenantOf(request), request.params.id),
  );
}
