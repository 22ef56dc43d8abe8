import { z } from 'zod';
import { contextOf, tenantOf } from '../platform/http/access.js';
import { withExample } from '../platform/http/examples.js';
import type { App } from '../platform/http/types.js';
import { RegistrarConfigBody, RegistrarConfigPatch, RegistrarConfigView } from './schemas.js';
import type { RegistrarService } from './service.js';

const access = { roles: ['registrar:manage'], tenant: 'required' } as const;
const tags = ['registrar'];
const secrets =
  '`password` and `clientSecret` are write-only: stored encrypted (the spec says plaintext; they are credentials) and never returned. The credentials must log in (password grant at `{oidcUrl}/protocol/openid-connect/token`) before they are stored: 400 naming body.password when refused, 502 when the provider cannot be reached.';

export function registrarRoutes(app: App, registrar: RegistrarService) {
  app.get(
    '/api/registrar/config',
    { config: { access }, schema: { tags, summary: "The tenant's registrar configuration", response: { 200: RegistrarConfigView } } },
    (request) => registrar.get(tenantOf(request)),
  );
  app.post(
    '/api/registrar/config',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Create or replace the registrar configuration',
        description: secrets,
        body: withExample(RegistrarConfigBody, {
          registrarUrl: 'https://registrar.example',
          oidcUrl: 'https://registrar.example/realms/registrar',
          clientId: 'registrar-client',
          username: 'acme',
          password: 'the-password-of-acme-at-the-registrar',
        }),
        response: { 200: RegistrarConfigView },
      },
    },
    (request) => registrar.replace(contextOf(request), tenantOf(request), request.body),
  );
  app.patch(
    '/api/registrar/config',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Change some fields of the registrar configuration',
        description: `${secrets} On a change, the login is tested again only when one of its fields changed.`,
        body: withExample(RegistrarConfigPatch, { password: 'the-new-password-of-acme-at-the-registrar' }),
        response: { 200: RegistrarConfigView },
      },
    },
    (request) => registrar.update(contextOf(request), tenantOf(request), request.body),
  );
  app.delete(
    '/api/registrar/config',
    { config: { access }, schema: { tags, summary: 'Delete the registrar configuration', response: { 204: z.null() } } },
    async (request, reply) => {
      await registrar.remove(contextOf(request), tenantOf(request));
      return reply.code(204).send(null);
    },
  );
  app.get(
    '/api/verifier/config/schema-metadata/catalog',
    {
      config: { access: { roles: ['presentation:manage'], tenant: 'required' } },
      schema: {
        tags: ['verification'],
        summary: "Schema metadata entries of the tenant's registrar catalog; an empty list when no registrar is configured",
        response: { 200: z.array(z.unknown()) },
      },
    },
    (request) => registrar.catalog(tenantOf(request)),
  );
}
