import { z } from 'zod';
import { contextOf, tenantOf } from '../platform/http/access.js';
import { withExample } from '../platform/http/examples.js';
import type { App } from '../platform/http/types.js';
import { CreateBody, CredentialConfigurationSchema, UpdateBody } from './schemas.js';
import type { CredentialConfigService } from './service.js';

const Params = z.object({ id: z.string() });
const access = { roles: ['issuance:manage'], tenant: 'required' } as const;
const tags = ['credential configurations'];

const MODEL = [
  'Field model of major version 5: the claims are described by `fields`. The version-4 keys `claims`, `disclosureFrame`, `schema`,',
  '`config.namespace`, `config.claimsByNamespace` and `config.claimsMetadata` are refused, each with the name of its replacement.',
  'For `mso_mdoc`, `config.docType` and a `namespace` on every top-level field are required; the claims are keyed by namespace.',
  'Referenced key chains (usage type attestation), attribute providers and webhook endpoints must exist in the tenant.',
].join(' ');

export function credentialConfigRoutes(app: App, configs: CredentialConfigService) {
  app.get(
    '/api/issuer/credentials',
    {
      config: { access },
      schema: { tags, summary: "List the tenant's credential configurations", response: { 200: z.array(CredentialConfigurationSchema) } },
    },
    (request) => configs.list(tenantOf(request)),
  );

  app.post(
    '/api/issuer/credentials',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Create a credential configuration',
        description: MODEL,
        body: CreateBody,
        response: { 201: CredentialConfigurationSchema },
      },
    },
    async (request, reply) => reply.code(201).send(await configs.create(contextOf(request), tenantOf(request), request.body)),
  );

  app.get(
    '/api/issuer/credentials/:id',
    {
      config: { access },
      schema: { tags, summary: 'Get a credential configuration', params: Params, response: { 200: CredentialConfigurationSchema } },
    },
    (request) => configs.get(tenantOf(request), request.params.id),
  );

  app.patch(
    '/api/issuer/credentials/:id',
    {
      config: { access },
      schema: {
        tags,
        summary:
          'Update a credential configuration: top-level fields given replace the stored ones (null clears), config and fields as a whole',
        description: MODEL,
        params: Params,
        body: withExample(UpdateBody, { description: 'the PID of ACME staff', lifeTime: 31536000 }),
        response: { 200: CredentialConfigurationSchema },
      },
    },
    (request) => configs.update(contextOf(request), tenantOf(request), request.params.id, request.body),
  );

  app.delete(
    '/api/issuer/credentials/:id',
    {
      config: { access },
      schema: { tags, summary: 'Delete a credential configuration', params: Params, response: { 204: z.null() } },
    },
    async (request, reply) => {
      await configs.remove(contextOf(request), tenantOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
