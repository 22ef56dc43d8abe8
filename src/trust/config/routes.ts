// The trust settings of a tenant, through the management API: the same role as the issuer settings
// that keep them (issuance:manage).
import { contextOf, tenantOf } from '../../platform/http/access.js';
import { withExample } from '../../platform/http/examples.js';
import type { App } from '../../platform/http/types.js';
import { TrustConfigSchema, type TrustConfigStore } from './schema.js';

const tags = ['trust'];

export function trustConfigRoutes(app: App, store: TrustConfigStore) {
  const manage = { roles: ['issuance:manage'], tenant: 'required' } as const;

  app.get(
    '/api/trust-config',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: "The tenant's trust settings",
        description:
          'The federation block is the one of the issuer settings (GET /api/issuer/config, field federation): that field is an alias of this resource.',
        response: { 200: TrustConfigSchema },
      },
    },
    async (request) => store.get(tenantOf(request)),
  );

  app.put(
    '/api/trust-config',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Replace the trust settings (absent fields take their defaults)',
        description:
          'Saved as the federation field of the issuer settings (the other issuer settings are kept), audited as issuer_settings.updated; PUT /api/issuer/config with a federation field writes the same settings.',
        body: withExample(TrustConfigSchema, {
          federation: { role: 'leaf', mode: 'hybrid', authorityHints: [], trustAnchors: [{ entityId: 'https://federation.example.eu' }] },
        }),
        response: { 200: TrustConfigSchema },
      },
    },
    async (request) => store.put(contextOf(request), tenantOf(request), request.body),
  );
}
