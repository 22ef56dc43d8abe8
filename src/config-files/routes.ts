import { z } from 'zod';
import type { App } from '../platform/http/types.js';
import { TENANT_ID } from '../tenants/routes.js';
import type { ConfigFileService } from './service.js';

const ExportSchema = z
  .object({
    files: z
      .record(z.string(), z.record(z.string(), z.unknown()))
      .describe('file path (relative to the CONFIG_IMPORT folder, starting with the tenant id) -> file content'),
    environment: z.array(z.string()).describe('environment variables the files refer to; set them before importing'),
  })
  .meta({ id: 'ConfigExport' });

const DESCRIPTION = [
  "The tenant's configuration in the layout that CONFIG_IMPORT reads: tenant.json, clients/, key-chains/, issuer.json,",
  'attribute-providers/, webhook-endpoints/, credential-configs/, presentation-configs/, trust-lists/.',
  'No secret leaves the service: client secrets, header values of attribute providers and webhooks, and private keys of',
  'imported key chains are given as {"env": "SVC_IMPORT_..."} references, listed in `environment`. Generated key chains are',
  'exported as the request that generates a chain like them.',
].join(' ');

export function configFileRoutes(app: App, configFiles: ConfigFileService) {
  app.get(
    '/api/config/export',
    {
      config: { access: { roles: ['tenants:manage'] } },
      schema: {
        tags: ['configuration files'],
        summary: "Export a tenant's configuration as import files, without secrets",
        description: DESCRIPTION,
        querystring: z.strictObject({ tenantId: TENANT_ID.describe('the tenant to export') }),
        response: { 200: ExportSchema },
      },
    },
    (request) => configFiles.export(request.query.tenantId),
  );
}
