import { z } from 'zod';
import { ClientSchema } from '../clients/routes.js';
import { RoleSchema } from '../platform/auth/roles.js';
import { contextOf } from '../platform/http/access.js';
import { withExample } from '../platform/http/examples.js';
import type { App } from '../platform/http/types.js';
import { SessionConfigSchema, StatusListConfigSchema } from './schemas.js';
import type { TenantService } from './service.js';

export const TENANT_ID = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._~-]{0,63}$/, 'must be 1-64 URL-safe characters (A-Z a-z 0-9 . _ ~ -), starting with a letter or digit');

export const TenantSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    status: z.enum(['initializing', 'active']).describe('`active` once initialisation has completed'),
    sessionConfig: SessionConfigSchema.nullable(),
    statusListConfig: StatusListConfigSchema.nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    clients: z.array(ClientSchema),
  })
  .meta({ id: 'Tenant' });

const AdminClient = z.object({
  clientId: z.string(),
  secret: z.string().describe('shown once'),
  roles: z.array(RoleSchema),
});
const TenantWithClient = TenantSchema.extend({
  client: AdminClient.optional().describe('the admin client created for `roles`, with its secret (only in this response)'),
});

const TenantRoles = z.array(RoleSchema).min(1).describe("roles of the tenant's admin client (`{id}-admin`)");
export const CreateBody = z
  .strictObject({
    id: TENANT_ID,
    name: z.string().min(1).max(200),
    description: z.string().max(2000).nullable().optional(),
    sessionConfig: SessionConfigSchema.nullable().optional(),
    statusListConfig: StatusListConfigSchema.nullable().optional(),
    roles: TenantRoles.optional(),
  })
  .meta({
    examples: [
      {
        id: 'acme',
        name: 'ACME',
        roles: ['clients:manage', 'users:manage', 'issuance:manage', 'issuance:offer', 'presentation:manage', 'presentation:request'],
      },
    ],
  });
const UpdateBody = CreateBody.omit({ id: true }).partial();
const Params = z.object({ id: z.string() });

const access = { roles: ['tenants:manage'] } as const;
const tags = ['tenants'];

export function tenantRoutes(app: App, tenants: TenantService) {
  app.get(
    '/api/tenant',
    {
      config: { access },
      schema: { tags, summary: 'List tenants', response: { 200: z.array(TenantSchema) } },
    },
    () => tenants.list(),
  );

  app.post(
    '/api/tenant',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Create and initialise a tenant',
        description: 'With `roles`, an admin client `{id}-admin` of the tenant is created and returned once with its secret.',
        body: CreateBody,
        response: { 201: TenantWithClient },
      },
    },
    async (request, reply) => reply.code(201).send(await tenants.create(contextOf(request), request.body)),
  );

  app.get(
    '/api/tenant/:id',
    {
      config: { access },
      schema: { tags, summary: 'Get a tenant', params: Params, response: { 200: TenantSchema } },
    },
    (request) => tenants.get(request.params.id),
  );

  app.patch(
    '/api/tenant/:id',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Update a tenant',
        description:
          'Config objects are merged key by key; a key set to null returns to the global default. `roles` replaces the roles of the admin client (re-created, with a new secret in `client`, if it was deleted).',
        params: Params,
        body: withExample(UpdateBody, { description: 'Issues and checks the staff badges of ACME' }),
        response: { 200: TenantWithClient },
      },
    },
    (request) => tenants.update(contextOf(request), request.params.id, request.body),
  );

  app.delete(
    '/api/tenant/:id',
    {
      config: { access },
      schema: { tags, summary: 'Delete a tenant and everything it owns', params: Params, response: { 204: z.null() } },
    },
    async (request, reply) => {
      await tenants.remove(contextOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
