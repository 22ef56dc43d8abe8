import { z } from 'zod';
import { RoleSchema } from '../platform/auth/roles.js';
import type { Clock } from '../platform/clock.js';
import { contextOf } from '../platform/http/access.js';
import type { App } from '../platform/http/types.js';

export interface SystemInfo {
  name: string;
  version: string;
  observabilityUrl?: string;
  /** PUBLIC_URL: the base under which wallets and relying parties reach the service. */
  publicUrl: string;
  /** How a front end gets a token: the integrated token server, or the identity provider's authorization code flow. */
  auth: FrontendAuth;
  /** Resolves when the database answers, rejects otherwise. */
  checkDatabase(): Promise<void>;
  /** Each key provider besides db: 'ok' when it can sign, else why it cannot (for the log; the answer says 'cannot sign'). */
  checkKeyProviders(): Promise<Record<string, string>>;
  /** True once a stop has begun: readiness then answers 503 at once, so load balancers send no new requests. */
  draining(): boolean;
  /** What time it is: whoami's expiry of a token that carries none. */
  clock: Clock;
}

const Version = z.object({ name: z.string(), version: z.string(), apiVersion: z.string().describe('major.minor of the management API') });
const FrontendAuthSchema = z
  .discriminatedUnion('mode', [
    z.object({ mode: z.literal('integrated'), tokenUrl: z.string().describe('POST client credentials here') }),
    z.object({
      mode: z.literal('external'),
      issuer: z.string(),
      authorizationEndpoint: z.string().optional(),
      tokenEndpoint: z.string(),
      clientId: z.string().describe('the public client of the web console (OIDC_UI_CLIENT_ID): authorization code with PKCE'),
      tenantClaim: z.string().describe('the token claim naming the tenant (OIDC_SUB)'),
    }),
  ])
  .describe('how a front end obtains a management token');
export type FrontendAuth = z.infer<typeof FrontendAuthSchema>;
const FrontendConfig = z.object({
  observability: z.object({ enabled: z.boolean(), url: z.string().optional() }).describe('where a front end sends telemetry'),
  auth: FrontendAuthSchema,
  publicUrl: z
    .string()
    .describe(
      'the base URL wallets and relying parties reach the service at (PUBLIC_URL); a console opened at another address names published documents with it',
    ),
});
const WhoAmI = z
  .object({
    clientId: z.string(),
    tenantId: z.string().nullable().describe('null: a client of the service itself (tenants:manage)'),
    roles: z.array(RoleSchema).describe('the roles the caller holds now (a changed client counts, not the token of its issue)'),
    expiresAt: z.string().describe('when the access token expires'),
    actingAdminId: z
      .string()
      .optional()
      .describe(
        'present only for a token exchanged by a service administrator (RFC 8693, act claim): the administrator acting in the tenant',
      ),
  })
  .meta({ id: 'WhoAmI' });
const Health = z.object({
  status: z.enum(['ok', 'unavailable', 'draining']).describe('draining: the service is stopping (SIGTERM) and takes no new work'),
  checks: z.record(z.string(), z.string()).optional(),
});

export function systemRoutes(app: App, info: SystemInfo) {
  const tags = ['service'];
  app.get(
    '/api/version',
    {
      config: { access: { roles: [] } },
      schema: { tags, summary: 'Service version', response: { 200: Version } },
    },
    () => ({ name: info.name, version: info.version, apiVersion: '5.0' }),
  );

  app.get(
    '/api/whoami',
    {
      config: { access: { roles: [] } },
      schema: {
        tags,
        summary: 'Who the access token speaks for: client, tenant, roles',
        description: 'A front end shows the sections and actions of these roles; every route still checks its own.',
        response: { 200: WhoAmI },
      },
    },
    (request) => {
      const { principal } = contextOf(request);
      const expiresAt = request.grant?.expiresAt;
      return {
        clientId: principal.clientId,
        tenantId: principal.tenantId,
        roles: principal.roles,
        expiresAt: new Date(expiresAt ?? info.clock.now().getTime()).toISOString(),
        ...(principal.actingAdmin ? { actingAdminId: principal.actingAdmin } : {}),
      };
    },
  );

  app.get(
    '/api/frontend-config',
    {
      // Public: a front end reads it before anyone has logged in, to know how to log in.
      config: { access: { public: true } },
      schema: { tags, summary: 'Configuration for a web front end', response: { 200: FrontendConfig } },
    },
    () => ({
      observability: info.observabilityUrl ? { enabled: true, url: info.observabilityUrl } : { enabled: false },
      auth: info.auth,
      publicUrl: info.publicUrl,
    }),
  );

  app.get(
    '/health',
    {
      schema: { tags, summary: 'Liveness: the process answers', response: { 200: Health } },
    },
    () => ({ status: 'ok' as const }),
  );

  app.get(
    '/health/ready',
    {
      schema: {
        tags,
        summary: 'Readiness: the database answers and every key provider can sign (checks: database, keyProvider:<id>)',
        description:
          'From the moment the service is told to stop (SIGTERM, SIGINT) it answers 503 with status draining, without checking anything.',
        response: { 200: Health, 503: Health },
      },
    },
    async (request, reply) => {
      if (info.draining()) return reply.code(503).send({ status: 'draining' as const });
      const [database, providers] = await Promise.all([
        info.checkDatabase().then(
          () => 'ok',
          (err: unknown) => {
            request.log.warn({ err }, 'readiness check failed: the database');
            return 'unreachable';
          },
        ),
        info.checkKeyProviders(),
      ]);
      const checks: Record<string, string> = { database };
      const reasons: Record<string, string> = {};
      for (const [id, state] of Object.entries(providers)) {
        checks[`keyProvider:${id}`] = state === 'ok' ? 'ok' : 'cannot sign';
        if (state !== 'ok') reasons[`keyProvider:${id}`] = state;
      }
      if (Object.values(checks).every((state) => state === 'ok')) return { status: 'ok' as const, checks };
      request.log.warn({ checks: { ...checks, ...reasons } }, 'readiness check failed');
      return reply.code(503).send({ status: 'unavailable' as const, checks });
    },
  );
}
