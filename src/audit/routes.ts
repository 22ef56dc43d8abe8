import { z } from 'zod';
import { ROLES } from '../platform/auth/roles.js';
import { contextOf } from '../platform/http/access.js';
import type { App } from '../platform/http/types.js';
import type { AuditService } from './service.js';

const Snapshot = z.record(z.string(), z.unknown()).nullable();
export const AuditLogEntrySchema = z
  .object({
    id: z.string(),
    tenantId: z.string().nullable(),
    actionType: z.string().describe('`<resource>.<action>`, for example `tenant.created`, `client.secret_rotated`'),
    actorType: z
      .enum(['client', 'system'])
      .describe('`client` (a management API client) or `system` (a scheduled job, actorId `system:<job>`)'),
    actorId: z.string(),
    actorDisplay: z.string().nullable().describe('for a service administrator in a tenant: `admin <actorId> in tenant <tenantId>`'),
    actingAdminId: z
      .string()
      .nullable()
      .describe('the service administrator acting in the tenant with an exchanged token (RFC 8693); null otherwise'),
    changedFields: z.array(z.string()),
    before: Snapshot,
    after: Snapshot,
    requestId: z.string().nullable(),
    timestamp: z.string(),
  })
  .meta({ id: 'AuditLogEntry' });

const MANAGE_ROLES = ROLES.filter((r) => r.endsWith(':manage'));

export function auditRoutes(app: App, audit: AuditService) {
  app.get(
    '/api/admin/audit-logs',
    {
      config: { access: { roles: MANAGE_ROLES } },
      schema: {
        tags: ['audit'],
        summary: 'Recent audit entries, newest first',
        description: "A tenant's clients see their tenant's entries; a client without tenant sees all.",
        querystring: z.strictObject({ limit: z.coerce.number().int().min(1).max(500).default(100) }),
        response: { 200: z.array(AuditLogEntrySchema) },
      },
    },
    (request) => audit.list(contextOf(request), request.query.limit),
  );
}
