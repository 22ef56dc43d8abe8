import { z } from 'zod';
import type { App } from '../platform/http/types.js';
import { TENANT_ID } from '../tenants/routes.js';
import { exportFolder } from './export.js';
import type { ConfigFileService } from './service.js';
import { tarArchive } from './tar.js';

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
  'With `format=tar` the answer is that folder itself, as a ustar archive (`application/x-tar`, saved as `<tenant>-config.tar`):',
  '`tar -xf acme-config.tar -C <folder>` and start the service with CONFIG_IMPORT=<folder>. The archive adds',
  '`<tenant>/environment.txt`, naming (never giving) the environment variables to set first.',
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
        querystring: z.strictObject({
          tenantId: TENANT_ID.describe('the tenant to export'),
          format: z
            .enum(['json', 'tar'])
            .optional()
            .describe('json (the default): { files, environment }; tar: the import folder as a ustar archive (application/x-tar)'),
        }),
        response: { 200: ExportSchema },
      },
    },
    async (request, reply) => {
      const { tenantId, format } = request.query;
      const exported = await configFiles.export(tenantId);
      if (format !== 'tar') return exported;
      // Fastify sends a Buffer as it is, unserialised; the response schema (and so its type) is the JSON answer's.
      const archive = tarArchive(exportFolder(tenantId, exported)) as unknown as typeof exported;
      return reply.type('application/x-tar').header('content-disposition', `attachment; filename="${tenantId}-config.tar"`).send(archive);
    },
  );
}
