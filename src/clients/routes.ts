import { z } from 'zod';
import { RoleSchema } from '../platform/auth/roles.js';
import { contextOf } from '../platform/http/access.js';
import { withExample } from '../platform/http/examples.js';
import { Problem } from '../platform/http/problem.js';
import type { App } from '../platform/http/types.js';
import type { ClientService } from './service.js';

// At most 100, well inside the router's maxParamLength, so every id can be addressed as /api/client/{id}.
const Id = z.string().regex(/^[A-Za-z0-9._~-]{1,100}$/, 'must be 1-100 characters of A-Z a-z 0-9 . _ ~ -');
const IdList = z.array(z.string().min(1)).nullable();

export const ClientSchema = z
  .object({
    clientId: z.string(),
    tenantId: z.string().nullable().describe('null only for clients that manage tenants'),
    description: z.string().nullable(),
    roles: z.array(RoleSchema),
    allowedPresentationConfigs: IdList.describe('presentation configuration ids usable by the client; null means all'),
    allowedIssuanceConfigs: IdList.describe('issuance configuration ids usable by the client; null means all'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Client' });
const ClientWithSecret = ClientSchema.extend({
  secret: z.string().describe('shown once; only its hash is stored (in external mode, the identity provider keeps it)'),
});
const Secret = z.object({ secret: z.string() });
const Params = z.object({ id: z.string() });

export const CreateBody = z.strictObject({
  clientId: Id,
  roles: z.array(RoleSchema).min(1),
  secret: z.string().min(16).max(512).optional().describe('generated (256 bits) when absent'),
  description: z.string().max(1000).nullable().optional(),
  allowedPresentationConfigs: IdList.optional(),
  allowedIssuanceConfigs: IdList.optional(),
  tenantId: z.string().nullable().optional().describe('clients without a tenant only: the tenant of the new client'),
});
const UpdateBody = z.strictObject({
  roles: z.array(RoleSchema).min(1),
  description: z.string().max(1000).nullable().optional(),
  allowedPresentationConfigs: IdList.optional(),
  allowedIssuanceConfigs: IdList.optional(),
});

const access = { roles: ['clients:manage', 'tenants:manage'] } as const;
const tags = ['clients'];
const scopeNote =
  "A tenant's client works inside its tenant, and grants, changes, rotates and deletes only what it holds itself: roles it lacks, or configurations outside its allowed lists, are refused with 403. A client without tenant (tenants:manage) sees and manages every client. In external mode the client, its secret and its roles are kept at the identity provider (through its admin API): a duplicate there is a 409, any other failure of the provider a 502 naming its message.";

export function clientRoutes(app: App, clients: ClientService) {
  app.get(
    '/api/client',
    {
      config: { access },
      schema: { tags, summary: 'List clients', description: scopeNote, response: { 200: z.array(ClientSchema) } },
    },
    (request) => clients.list(contextOf(request)),
  );

  app.post(
    '/api/client',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Create a client; the secret is returned only here',
        description: scopeNote,
        body: withExample(CreateBody, {
          clientId: 'acme-offers',
          roles: ['issuance:offer'],
          secret: 'offers-secret-change-me-0123456789',
          description: 'the web shop: creates offers',
        }),
        response: { 201: ClientWithSecret },
      },
    },
    async (request, reply) => reply.code(201).send(await clients.create(contextOf(request), request.body)),
  );

  app.get(
    '/api/client/:id',
    {
      config: { access },
      schema: { tags, summary: 'Get a client', params: Params, response: { 200: ClientSchema } },
    },
    (request) => clients.get(contextOf(request), request.params.id),
  );

  app.patch(
    '/api/client/:id',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Update roles, description and allowed configurations',
        description: scopeNote,
        params: Params,
        body: withExample(UpdateBody, {
          roles: ['issuance:offer', 'presentation:request'],
          description: 'the web shop: offers and age checks',
        }),
        response: { 200: ClientSchema },
      },
    },
    (request) => clients.update(contextOf(request), request.params.id, request.body),
  );

  app.delete(
    '/api/client/:id',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Delete a client; its tokens stop working for good, also if a client of the same id is created later',
        description: scopeNote,
        params: Params,
        response: { 204: z.null() },
      },
    },
    async (request, reply) => {
      await clients.remove(contextOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/client/:id/secret',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Always 410: secrets are stored hashed (or kept at the identity provider) and cannot be read back',
        description: 'Use POST /api/client/{id}/rotate-secret to obtain a new secret.',
        params: Params,
      },
    },
    async (request) => {
      await clients.get(contextOf(request), request.params.id);
      throw new Problem(
        410,
        'Gone',
        'client secrets are stored hashed (or kept at the identity provider) and cannot be read back; POST /api/client/{id}/rotate-secret issues a new one',
        {
          rotate: `/api/client/${encodeURIComponent(request.params.id)}/rotate-secret`,
        },
      );
    },
  );

  app.post(
    '/api/client/:id/rotate-secret',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Generate a new secret, returned once; the old one and the tokens issued under it stop working',
        description:
          'tenants:manage may rotate any client; clients:manage only clients of its tenant that hold no more than the caller: no role it lacks, no configuration outside its allowed lists (403 otherwise).',
        params: Params,
        response: { 200: Secret },
      },
    },
    (request) => clients.rotateSecret(contextOf(request), request.params.id),
  );
}
