// HTTP surface of status lists: management (/api/status-list-config, /api/status-lists,
// /api/session/revoke, /api/cache) and the public status list tokens under /issuers/{tenantId}.
import { z } from 'zod';
import type { Role } from '../platform/auth/roles.js';
import { contextOf, tenantOf } from '../platform/http/access.js';
import { withExample } from '../platform/http/examples.js';
import { notFound } from '../platform/http/problem.js';
import type { App } from '../platform/http/types.js';
import type { OwnRoute } from '../platform/outbound/own-urls.js';
import { StatusListConfigSchema } from '../tenants/schemas.js';
import type { TenantService } from '../tenants/service.js';
import { type Caches, type StampedCache, tenantPrefix } from './cache.js';
import type { StatusListService } from './service.js';
import { CWT_MEDIA_TYPE, JWT_MEDIA_TYPE } from './token.js';

const manage = { roles: ['issuance:manage'] as Role[], tenant: 'required' } as const;
const caches = { roles: ['issuance:manage', 'presentation:manage'] as Role[], tenant: 'required' } as const;
const tags = ['status lists'];

const STATUS_LIST_TOKEN_PATH = '/issuers/:tenantId/status-lists/:listId';

const Bits = z.union([z.literal(1), z.literal(2), z.literal(4), z.literal(8)]);

/**
 * What the flag still chooses once the served token always shows every committed change: who pays for
 * signing. The spec's "false regenerates lazily when the TTL expires" would publish a revocation up to
 * a ttl late, so lazily here means at the next fetch.
 */
const IMMEDIATE_UPDATE =
  'Who signs the new token after a status change; either way the token served at the list uri shows every change committed before the request. true: the change request signs it (it takes longer; the next fetch is served from the stored token). false (default): the first fetch after a change signs it, once per list and instance however many fetch at the same time. Neither delays a change at the uri; a relying party that fetched a token before the change may keep using it until its ttl has passed (its exp, and Cache-Control max-age).';

const EffectiveConfigSchema = z
  .object({
    capacity: z.number().describe('entries of a new list (a configured capacity above STATUS_MAX_CAPACITY counts as STATUS_MAX_CAPACITY)'),
    bits: Bits,
    ttl: z.number().describe('seconds a status list token is valid (and may be cached)'),
    immediateUpdate: z.boolean().describe(IMMEDIATE_UPDATE),
    enableAggregation: z.boolean().describe('true: tokens carry aggregation_uri'),
  })
  .meta({ id: 'EffectiveStatusListConfig' });

const StatusListSchema = z
  .object({
    id: z.string(),
    tenantId: z.string(),
    credentialConfigurationId: z.string().nullable().describe('null: a shared list'),
    keyChainId: z.string().nullable().describe("null: the tenant's default statusList key chain"),
    bits: Bits,
    capacity: z.number(),
    usedEntries: z.number(),
    availableEntries: z.number(),
    ttl: z.number(),
    immediateUpdate: z.boolean(),
    enableAggregation: z.boolean(),
    uri: z.string().describe('public URI of the status list token'),
    createdAt: z.string(),
    updatedAt: z.string(),
    expiresAt: z.string().nullable().describe('expiry of the current token; null if none has been signed yet'),
  })
  .meta({ id: 'StatusList' });

const CreateBody = z.strictObject({
  credentialConfigurationId: z.string().nullable().optional().describe('binds the list to this configuration; empty or null: shared'),
  keyChainId: z.string().nullable().optional().describe("empty or null: the tenant's default statusList key chain"),
  bits: Bits.optional().describe('default from the status list configuration'),
  capacity: z
    .number()
    .int()
    .min(1000)
    .max(100_000_000)
    .optional()
    .describe('default from the status list configuration; at most STATUS_MAX_CAPACITY (400 beyond)'),
});
const UpdateBody = z.strictObject({
  credentialConfigurationId: z.string().nullable().optional().describe('null makes the list shared'),
  keyChainId: z.string().nullable().optional().describe("null: the tenant's default statusList key chain"),
});
const ListParams = z.object({ listId: z.string() });

const RevokeBody = z.strictObject({
  sessionId: z.string().min(1),
  status: z.union([z.literal(0), z.literal(1), z.literal(2)]).describe('0 valid, 1 revoked, 2 suspended (needs bits >= 2)'),
  credentialConfigurationId: z
    .string()
    .min(1)
    .optional()
    .describe('only the credentials of this configuration; absent: all of the session'),
});
const RevokeResult = z.object({ sessionId: z.string(), status: z.number(), updatedEntries: z.number() });

const SessionCredentialSchema = z
  .object({
    credentialConfigurationId: z.string(),
    statusListId: z.string(),
    index: z.number().describe("the credential's entry in the status list"),
    status: z.number().describe('the value of the entry: 0 valid, 1 revoked, 2 suspended, others application-specific'),
    state: z.enum(['valid', 'revoked', 'suspended', 'other']).describe('the value by name'),
  })
  .meta({ id: 'SessionCredentialStatus' });

const CacheStatsSchema = z.object({ entries: z.number(), hits: z.number(), misses: z.number(), maxEntries: z.number() });

export interface StatusListRouteDeps {
  statusLists: StatusListService;
  tenants: TenantService;
  caches: Caches;
  /** The trust-list feature's cache of what each tenant's verifier trusts. */
  trustCache: StampedCache<unknown>;
  tenantExists(tenantId: string): Promise<boolean>;
}

/** Which form the Accept header asks for: the CWT when it names statuslist+cwt before (or without) statuslist+jwt. */
export function wantsCwt(accept: string | undefined): boolean {
  if (!accept) return false;
  const cwt = accept.indexOf(CWT_MEDIA_TYPE);
  const jwt = accept.indexOf(JWT_MEDIA_TYPE);
  return cwt >= 0 && (jwt < 0 || cwt < jwt);
}

export function statusListRoutes(app: App, deps: StatusListRouteDeps) {
  const { statusLists, tenants } = deps;

  app.get(
    '/api/status-list-config',
    {
      config: { access: manage },
      schema: { tags, summary: "The tenant's status list configuration, as in effect", response: { 200: EffectiveConfigSchema } },
    },
    (request) => statusLists.effectiveConfig(tenantOf(request)),
  );

  app.put(
    '/api/status-list-config',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: "Set the tenant's status list configuration",
        description:
          'A field with a value sets it; null returns it to the global default (STATUS_CAPACITY, STATUS_BITS, STATUS_TTL; immediateUpdate false, enableAggregation true); an absent field stays. Applies to lists created afterwards. 400 naming capacity above STATUS_MAX_CAPACITY.',
        body: withExample(StatusListConfigSchema, { bits: 2, capacity: 10000 }),
        response: { 200: EffectiveConfigSchema },
      },
    },
    async (request) => {
      const tenantId = tenantOf(request);
      await tenants.updateStatusListConfig(contextOf(request), tenantId, request.body);
      return statusLists.effectiveConfig(tenantId);
    },
  );

  app.delete(
    '/api/status-list-config',
    { config: { access: manage }, schema: { tags, summary: 'Return to the global defaults', response: { 204: z.null() } } },
    async (request, reply) => {
      await tenants.updateStatusListConfig(contextOf(request), tenantOf(request), null);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/status-lists',
    { config: { access: manage }, schema: { tags, summary: "The tenant's status lists", response: { 200: z.array(StatusListSchema) } } },
    (request) => statusLists.list(tenantOf(request)),
  );

  app.post(
    '/api/status-lists',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Create a status list',
        description:
          'A list takes capacity × bits / 8 bytes of storage. 400 naming capacity above STATUS_MAX_CAPACITY; 409 when the tenant already holds STATUS_MAX_LISTS_PER_TENANT lists (a list opened at issuance because all are full is never refused, but counts).',
        body: withExample(CreateBody, { bits: 2, capacity: 10000 }),
        response: { 201: StatusListSchema },
      },
    },
    async (request, reply) => reply.code(201).send(await statusLists.create(contextOf(request), tenantOf(request), request.body)),
  );

  app.get(
    '/api/status-lists/:listId',
    { config: { access: manage }, schema: { tags, summary: 'A status list', params: ListParams, response: { 200: StatusListSchema } } },
    (request) => statusLists.get(tenantOf(request), request.params.listId),
  );

  app.patch(
    '/api/status-lists/:listId',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Rebind a status list or change its key chain',
        params: ListParams,
        body: withExample(UpdateBody, { credentialConfigurationId: 'pid' }),
        response: { 200: StatusListSchema },
      },
    },
    (request) => statusLists.update(contextOf(request), tenantOf(request), request.params.listId, request.body),
  );

  app.delete(
    '/api/status-lists/:listId',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Delete a status list (409 while credentials use it)',
        description:
          "On SQLite the freed space goes back to the file system at once (databases created by this version, whose auto_vacuum is incremental); on PostgreSQL autovacuum makes it reusable by the database, which keeps the file's size.",
        params: ListParams,
        response: { 204: z.null() },
      },
    },
    async (request, reply) => {
      await statusLists.remove(contextOf(request), tenantOf(request), request.params.listId);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/session/revoke',
    {
      config: { access: manage },
      schema: {
        tags: ['sessions', ...tags],
        summary: "Set the status of a session's credentials",
        description:
          'All credentials issued in the session, or those of one configuration, get the status. 400 when a list has too few bits for it; 404 for an unknown session.',
        body: withExample(RevokeBody, { sessionId: '3f1c2b9e-6a4d-4e8b-9c1f-2d7a5b8e0c41', status: 1 }),
        response: { 200: RevokeResult },
      },
    },
    (request) => statusLists.changeSessionStatus(contextOf(request), tenantOf(request), request.body),
  );

  app.get(
    '/api/session/:id/credentials',
    {
      config: { access: manage },
      schema: {
        tags: ['sessions', ...tags],
        summary: 'The credentials a session issued, each with its status now',
        description:
          'One entry per credential with a status list entry (a configuration without statusManagement issues none), in the order they were issued. Empty for a presentation session. 404 for an unknown session or one of another tenant.',
        params: z.object({ id: z.string() }),
        response: { 200: z.array(SessionCredentialSchema) },
      },
    },
    (request) => statusLists.sessionCredentials(tenantOf(request), request.params.id),
  );

  const stats = (tenantId: string) => ({
    statusList: deps.caches.statusList.stats(tenantPrefix(tenantId)),
    trustList: deps.trustCache.stats(tenantPrefix(tenantId)),
    fetchedStatusList: deps.caches.fetchedStatusList.stats(tenantPrefix(tenantId)),
  });
  app.get(
    '/api/cache/stats',
    {
      config: { access: caches },
      schema: {
        tags: ['caches'],
        summary:
          "Statistics of the signed status list and trust list caches, and of the status list tokens fetched to verify presentations (entries: the tenant's; hits, misses: this instance's)",
        response: { 200: z.object({ statusList: CacheStatsSchema, trustList: CacheStatsSchema, fetchedStatusList: CacheStatsSchema }) },
      },
    },
    (request) => stats(tenantOf(request)),
  );
  for (const [path, which] of [
    // The status list cache covers both the tokens this service signs and those it fetched as a verifier.
    ['/api/cache', ['statusList', 'fetchedStatusList', 'trustList']],
    ['/api/cache/status-list', ['statusList', 'fetchedStatusList']],
    ['/api/cache/trust-list', ['trustList']],
  ] as const) {
    app.delete(
      path,
      {
        config: { access: caches },
        schema: {
          tags: ['caches'],
          summary: `Clear the tenant's ${which.filter((c) => c !== 'fetchedStatusList').join(' and ')} cache on this instance`,
          response: { 204: z.null() },
        },
      },
      async (request, reply) => {
        const prefix = tenantPrefix(tenantOf(request));
        for (const cache of which) (cache === 'trustList' ? deps.trustCache : deps.caches[cache]).clear(prefix);
        return reply.code(204).send(null);
      },
    );
  }

  const Tenant = z.object({ tenantId: z.string() });
  app.get(
    '/issuers/:tenantId/status-lists',
    {
      config: { access: { public: true } },
      schema: { tags, summary: "Status list aggregation: the URIs of the tenant's status lists", params: Tenant },
    },
    async (request, reply) => {
      if (!(await deps.tenantExists(request.params.tenantId))) throw notFound('issuer', request.params.tenantId);
      return reply.header('cache-control', 'public, max-age=60').send(await statusLists.aggregation(request.params.tenantId));
    },
  );

  app.get(
    STATUS_LIST_TOKEN_PATH,
    {
      config: { access: { public: true } },
      schema: {
        tags,
        summary: 'A status list token',
        description: `The signed status list: a JWT (${JWT_MEDIA_TYPE}) by default, the CWT when Accept asks for ${CWT_MEDIA_TYPE}. It shows every status change committed before the request: a token signed before the last change is not served (immediateUpdate only decides whether the change request or this fetch signs the new one). Cache-Control max-age is the token's remaining lifetime (at most its ttl): how long a relying party may keep it.`,
        params: Tenant.extend({ listId: z.string() }),
      },
    },
    async (request, reply) => {
      const { tenantId, listId } = request.params;
      const served = await servedToken(statusLists, tenantId, listId, request.headers.accept);
      return reply.headers(served.headers).type(served.contentType).send(served.body);
    },
  );
}

/**
 * What GET /issuers/{tenantId}/status-lists/{listId} answers. The route sends it, and the service's
 * verifier reads it in-process when a credential it is shown names one of the service's own lists.
 */
async function servedToken(statusLists: StatusListService, tenantId: string, listId: string, accept: string | undefined) {
  const token = await statusLists.token(tenantId, listId);
  const maxAge = Math.max(0, Math.floor((Date.parse(token.expiresAt) - statusLists.clock.now().getTime()) / 1000));
  const headers = { 'cache-control': `public, max-age=${maxAge}`, vary: 'accept', expires: new Date(token.expiresAt).toUTCString() };
  if (wantsCwt(accept)) return { contentType: CWT_MEDIA_TYPE, body: Buffer.from(token.cwt), headers };
  return { contentType: JWT_MEDIA_TYPE, body: token.jwt, headers };
}

/** The status list tokens as the service's own URLs (OwnUrlsFirst): read in-process, exactly as served. */
export function ownStatusListTokens(statusLists: StatusListService): OwnRoute {
  return {
    path: STATUS_LIST_TOKEN_PATH,
    serve: (params, headers) => servedToken(statusLists, params.tenantId as string, params.listId as string, headers.accept),
  };
}
