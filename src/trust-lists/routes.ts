// /api/trust-list: a tenant's signed lists of trusted entities; the signed list is public under /issuers/{tenantId}.
import { z } from 'zod';
import { contextOf, tenantOf } from '../platform/http/access.js';
import { withExample } from '../platform/http/examples.js';
import type { App } from '../platform/http/types.js';
import { TrustListExportSchema, TrustListInputSchema, TrustListSchema, TrustListVersionSchema } from './schemas.js';
import type { TrustListService } from './service.js';
import { TRUST_LIST_JWT_TYPE } from './signer.js';

const Params = z.object({ id: z.string() });
const VersionParams = z.object({ id: z.string(), versionId: z.string() });
const access = { roles: ['presentation:manage', 'issuance:manage'], tenant: 'required' } as const;
const tags = ['trust lists'];
/** Public caches keep a list at most this long, and never past its NextUpdate, so that an update propagates soon. */
const MAX_PUBLIC_AGE_SECONDS = 300;

const signing =
  `The list is an ETSI TS 119 602 list of trusted entities ({"LoTE": {ListAndSchemeInformation, TrustedEntitiesList}}), ` +
  `signed as a compact JWS (typ ${TRUST_LIST_JWT_TYPE}, x5c of the trustList key chain) and served at /issuers/{tenantId}/trust-lists/{id}. ` +
  'It is re-signed before its NextUpdate and when its key chains rotate; re-signing keeps the sequence number unless the content changes.';

/** The body of a create and of a replace, with the one example both show. */
const TrustListBody = withExample(TrustListInputSchema, {
  id: 'issuers',
  description: 'the issuers whose credentials the verifier accepts',
  entities: [
    { type: 'internal', keyChainId: 'default-attestation' },
    { type: 'internal', keyChainId: 'default-statusList', serviceType: 'revocation' },
  ],
});

export function trustListRoutes(app: App, trustLists: TrustListService) {
  app.post(
    '/api/trust-list',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Create and sign a trust list',
        description: signing,
        body: TrustListBody,
        response: { 201: TrustListSchema },
      },
    },
    async (request, reply) => reply.code(201).send(await trustLists.create(contextOf(request), tenantOf(request), request.body)),
  );

  app.get(
    '/api/trust-list',
    { config: { access }, schema: { tags, summary: "List the tenant's trust lists", response: { 200: z.array(TrustListSchema) } } },
    (request) => trustLists.list(tenantOf(request)),
  );

  app.get(
    '/api/trust-list/:id',
    { config: { access }, schema: { tags, summary: 'Get a trust list', params: Params, response: { 200: TrustListSchema } } },
    (request) => trustLists.get(tenantOf(request), request.params.id),
  );

  app.put(
    '/api/trust-list/:id',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Replace the content: stores a new version with the next sequence number and signs it',
        description: `${signing} Without keyChainId the list keeps its signing key chain.`,
        params: Params,
        body: TrustListBody,
        response: { 200: TrustListSchema },
      },
    },
    (request) => trustLists.update(contextOf(request), tenantOf(request), request.params.id, request.body),
  );

  app.delete(
    '/api/trust-list/:id',
    {
      config: { access },
      schema: { tags, summary: 'Delete a trust list and its versions', params: Params, response: { 204: z.null() } },
    },
    async (request, reply) => {
      await trustLists.remove(contextOf(request), tenantOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/trust-list/:id/export',
    {
      config: { access },
      schema: {
        tags,
        summary: 'The input that recreates the list (data: its extra LoTE scheme information)',
        params: Params,
        response: { 200: TrustListExportSchema },
      },
    },
    (request) => trustLists.export(tenantOf(request), request.params.id),
  );

  app.get(
    '/api/trust-list/:id/versions',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Every version of the list, newest first (one per sequence number, the current one included)',
        params: Params,
        response: { 200: z.array(TrustListVersionSchema) },
      },
    },
    (request) => trustLists.versions(tenantOf(request), request.params.id),
  );

  app.get(
    '/api/trust-list/:id/versions/:versionId',
    {
      config: { access },
      schema: {
        tags,
        summary: 'One version of the list, with the JWS it was signed with',
        params: VersionParams,
        response: { 200: TrustListVersionSchema },
      },
    },
    (request) => trustLists.version(tenantOf(request), request.params.id, request.params.versionId),
  );

  app.get(
    '/issuers/:tenantId/trust-lists/:id',
    {
      schema: {
        tags: ['public keys'],
        summary: 'The signed trust list (compact JWS, application/jwt)',
        description: `${signing} Cacheable until NextUpdate, for at most ${MAX_PUBLIC_AGE_SECONDS} seconds.`,
        params: z.object({ tenantId: z.string(), id: z.string() }),
        produces: ['application/jwt'],
      },
    },
    async (request, reply) => {
      const list = await trustLists.published(request.params.tenantId, request.params.id);
      const untilNextUpdate = Math.floor((Date.parse(list.nextUpdate) - trustLists.clock.now().getTime()) / 1000);
      const maxAge = Math.max(0, Math.min(MAX_PUBLIC_AGE_SECONDS, untilNextUpdate));
      return reply
        .type('application/jwt')
        .header('cache-control', `public, max-age=${maxAge}`)
        .header('last-modified', new Date(list.issuedAt).toUTCString())
        .send(list.jwt);
    },
  );
}
