import { z } from 'zod';
import { RoleSchema } from '../platform/auth/roles.js';
import { contextOf } from '../platform/http/access.js';
import { withExample } from '../platform/http/examples.js';
import type { App } from '../platform/http/types.js';
import type { UserService } from './service.js';

const UserSchema = z
  .object({
    id: z.string(),
    username: z.string(),
    email: z.string().nullable(),
    enabled: z.boolean(),
    roles: z.array(RoleSchema),
    tenantId: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'ManagedUser' });
const CreatedUser = UserSchema.extend({ temporaryPassword: z.string().describe('one-time password, shown only here') });

const CreateBody = z.strictObject({
  username: z.string().min(1).max(200),
  roles: z.array(RoleSchema),
  email: z.email().nullable().optional(),
  enabled: z.boolean().optional().describe('default true'),
  temporaryPassword: z.string().min(8).max(512).optional().describe('generated when absent'),
});
const UpdateBody = CreateBody.omit({ temporaryPassword: true }).partial();
const Params = z.object({ id: z.string() });

const access = { roles: ['users:manage'], tenant: 'required' } as const;
const tags = ['users'];
const grantNote =
  'A client gives users only roles it holds itself, and changes or deletes only users holding no role it lacks (403 naming the roles otherwise). In external mode the users are kept at the identity provider: a duplicate there is a 409, any other failure of the provider a 502 naming its message.';

export function userRoutes(app: App, users: UserService) {
  app.get(
    '/api/user',
    {
      config: { access },
      schema: {
        tags,
        summary: "List the tenant's users",
        description: 'In external mode read from the identity provider (502 naming its message when it fails).',
        response: { 200: z.array(UserSchema) },
      },
    },
    (request) => users.list(contextOf(request)),
  );

  app.post(
    '/api/user',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Create a user; the temporary password is returned only here',
        description: grantNote,
        body: withExample(CreateBody, { username: 'operator', roles: ['issuance:offer'], email: 'operator@acme.example' }),
        response: { 201: CreatedUser },
      },
    },
    async (request, reply) => reply.code(201).send(await users.create(contextOf(request), request.body)),
  );

  app.get(
    '/api/user/:id',
    {
      config: { access },
      schema: { tags, summary: 'Get a user', params: Params, response: { 200: UserSchema } },
    },
    (request) => users.get(contextOf(request), request.params.id),
  );

  app.patch(
    '/api/user/:id',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Update a user',
        description: grantNote,
        params: Params,
        body: withExample(UpdateBody, { roles: ['issuance:offer', 'presentation:request'], enabled: true }),
        response: { 200: UserSchema },
      },
    },
    (request) => users.update(contextOf(request), request.params.id, request.body),
  );

  app.delete(
    '/api/user/:id',
    {
      config: { access },
      schema: { tags, summary: 'Delete a user', description: grantNote, params: Params, response: { 204: z.null() } },
    },
    async (request, reply) => {
      await users.remove(contextOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
