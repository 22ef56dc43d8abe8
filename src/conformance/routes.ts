// The conformance report through the management API.
import { z } from 'zod';
import { HAIP_PROFILE } from '../issuance/settings/profile.js';
import { tenantOf } from '../platform/http/access.js';
import type { App } from '../platform/http/types.js';
import type { ConformanceService } from './service.js';

const Requirement = z
  .object({
    id: z.string().describe('our stable name of the requirement'),
    section: z.string().describe('the section(s) of HAIP 1.0 that state it'),
    role: z.enum(['issuer', 'verifier']),
    requirement: z.string().describe('what it asks, in short'),
    status: z.enum(['met', 'not-met', 'not-applicable']),
    detail: z.string().describe('why: the setting, configuration or key chain that fails, by id; or how svc meets it'),
  })
  .meta({ id: 'ConformanceRequirement' });

const Report = z
  .object({
    profile: z.literal(HAIP_PROFILE),
    tenantId: z.string(),
    requirements: z.array(Requirement),
  })
  .meta({ id: 'ConformanceReport' });

const Query = z.strictObject({
  profile: z.literal(HAIP_PROFILE).describe('the profile to judge the tenant against; haip-1.0 is the only one'),
});

export function conformanceRoutes(app: App, conformance: ConformanceService) {
  app.get(
    '/api/conformance',
    {
      config: { access: { roles: ['issuance:manage', 'presentation:manage'], tenant: 'required' } },
      schema: {
        tags: ['conformance'],
        summary: 'Where the tenant stands against a conformance profile',
        description:
          "One entry per normative requirement of OpenID4VC HAIP 1.0 that binds an issuer or a verifier, judged on the tenant's live " +
          'configuration (issuer settings, credential and presentation configurations, key chains, trusted wallet providers), whatever ' +
          'profile the tenant is in: not-met names what fails by id. Set the profile in the issuer settings (profile: haip-1.0) to have ' +
          'the tenant refuse what would break the requirements it enforces.',
        querystring: Query,
        response: { 200: Report },
      },
    },
    (request) => conformance.report(tenantOf(request), request.query.profile),
  );
}
