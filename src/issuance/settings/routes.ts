// The issuer settings of a tenant, through the management API.
import { contextOf, tenantOf } from '../../platform/http/access.js';
import { withExample } from '../../platform/http/examples.js';
import type { App } from '../../platform/http/types.js';
import { IssuerSettingsSchema, type IssuerSettingsService, shownSettings } from './service.js';

const tags = ['issuance'];

export function issuerSettingsRoutes(app: App, settings: IssuerSettingsService) {
  const manage = { roles: ['issuance:manage'], tenant: 'required' } as const;

  app.get(
    '/api/issuer/config',
    {
      config: { access: manage },
      schema: { tags, summary: "The tenant's issuer settings", response: { 200: IssuerSettingsSchema } },
    },
    async (request) => shownSettings(await settings.get(tenantOf(request))),
  );

  app.put(
    '/api/issuer/config',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Replace the issuer settings (absent fields take their defaults)',
        body: withExample(IssuerSettingsSchema, { display: [{ name: 'ACME', locale: 'en' }], batchSize: 1, offerLifetimeSeconds: 3600 }),
        response: { 200: IssuerSettingsSchema },
      },
    },
    async (request) => shownSettings(await settings.put(contextOf(request), tenantOf(request), request.body)),
  );
}
