// The subordinates of an OpenID Federation intermediate or trust anchor: managed through the
// management API (issuance:manage, as the trust settings), and published beside the tenant's entity
// configuration through the fetch (section 8.1) and list (section 8.2) endpoints.
import { z } from 'zod';
import type { Signer } from '../../key-chains/signing.js';
import type { Clock } from '../../platform/clock.js';
import { contextOf, tenantOf } from '../../platform/http/access.js';
import { OAuthError } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import { entityIdOf } from './entity-configuration.js';
import { ENTITY_STATEMENT_MEDIA_TYPE, FederationRefused } from './entity-statement.js';
import type { ResolvedTrust } from './resolver.js';
import type { FederationSettings } from './settings.js';
import {
  type FederationSubordinates,
  RESOLVE_RESPONSE_MEDIA_TYPE,
  SubordinateInputSchema,
  SubordinateSchema,
  signResolveResponse,
  signSubordinateStatement,
} from './subordinates.js';

export interface SuperiorSources {
  subordinates: FederationSubordinates;
  /** The tenant's credential issuer identifier and federation settings; 404 for an unknown tenant. */
  issuerOf: (tenantId: string) => Promise<{ credentialIssuer: string; federation: FederationSettings | null }>;
  /** The tenant's federation signer (its default federation key chain). */
  federationSigner: (tenantId: string) => Promise<Signer>;
  /** An entity's trust chain to `anchorId` by the tenant's resolver (bounded by its deadline); throws FederationRefused. */
  resolve: (tenantId: string, settings: FederationSettings, entityId: string, anchorId: string) => Promise<ResolvedTrust>;
  clock: Clock;
}

const tags = ['federation'];
const manage = { roles: ['issuance:manage'], tenant: 'required' } as const;
const IdParams = z.object({ id: z.string().max(100) });
const SEEN =
  'Published only while the trust settings make the tenant an intermediate or trust_anchor (federation.role): its fetch endpoint ({credential_issuer}/federation/fetch?sub=) answers a subordinate statement about each, its list endpoint ({credential_issuer}/federation/list) names them.';

/** The error answer of the federation endpoints (OpenID Federation 1.0 section 8.9): JSON error and error_description. */
const federationError = (status: number, error: string, description: string) => new OAuthError(status, error, description);

export function federationSubordinateRoutes(app: App, sources: SuperiorSources) {
  const { subordinates } = sources;

  app.get(
    '/api/federation/subordinates',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: "The tenant's OpenID Federation subordinates, by entity identifier",
        description: SEEN,
        response: { 200: z.array(SubordinateSchema) },
      },
    },
    (request) => subordinates.list(tenantOf(request)),
  );

  app.post(
    '/api/federation/subordinates',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Register a subordinate: an entity this tenant vouches for as intermediate or trust anchor',
        description: `${SEEN} Without jwks, the keys are read from the entity's configuration ({entityId}/.well-known/openid-federation) now (400 naming jwks when it cannot be read). 409 when the entity is registered already. Audited as federation_subordinate.created.`,
        body: SubordinateInputSchema,
        response: { 201: SubordinateSchema },
      },
    },
    async (request, reply) => reply.code(201).send(await subordinates.create(contextOf(request), tenantOf(request), request.body)),
  );

  app.get(
    '/api/federation/subordinates/:id',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'One subordinate (404 when missing or of another tenant)',
        params: IdParams,
        response: { 200: SubordinateSchema },
      },
    },
    (request) => subordinates.get(tenantOf(request), request.params.id),
  );

  app.put(
    '/api/federation/subordinates/:id',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Replace a subordinate (absent fields are dropped; absent jwks read again from its entity configuration)',
        description:
          '404 when missing or of another tenant; 409 when another subordinate has the entityId. Audited as federation_subordinate.updated.',
        params: IdParams,
        body: SubordinateInputSchema,
        response: { 200: SubordinateSchema },
      },
    },
    (request) => subordinates.update(contextOf(request), tenantOf(request), request.params.id, request.body),
  );

  app.delete(
    '/api/federation/subordinates/:id',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Remove a subordinate: its statement is no longer answered',
        description: '404 when missing or of another tenant. Audited as federation_subordinate.deleted.',
        params: IdParams,
        response: { 204: z.null() },
      },
    },
    async (request, reply) => {
      await subordinates.delete(contextOf(request), tenantOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  /** The tenant as a superior: 404 not_found when it is none (a leaf, or no federation settings). */
  async function superior(tenantId: string) {
    const { credentialIssuer, federation } = await sources.issuerOf(tenantId);
    if (!federation || federation.role === 'leaf')
      throw federationError(404, 'not_found', `the issuer '${tenantId}' is no intermediate or trust anchor (federation.role)`);
    return { entityId: entityIdOf(credentialIssuer, federation), federation };
  }

  const TenantParams = z.object({ tenantId: z.string() });

  app.get(
    '/issuers/:tenantId/federation/fetch',
    {
      schema: {
        tags,
        summary: 'OpenID Federation fetch endpoint (section 8.1): the subordinate statement about sub',
        description:
          "application/entity-statement+jwt: typ entity-statement+jwt, signed by the tenant's default federation key chain; iss the tenant's entity identifier, sub, jwks, metadata_policy and constraints as registered, iat, exp a day later. Errors as JSON (section 8.9): 400 invalid_request without sub, 404 not_found for an entity that is not a subordinate, or when the tenant is no intermediate or trust anchor.",
        params: TenantParams,
        querystring: z.object({ sub: z.string().optional(), iss: z.string().optional() }),
      },
    },
    async (request, reply) => {
      const { tenantId } = request.params;
      const { entityId } = await superior(tenantId);
      const { sub } = request.query;
      if (!sub) throw federationError(400, 'invalid_request', 'sub is missing: the entity identifier of the subordinate');
      const found = await subordinates.findByEntityId(tenantId, sub);
      if (!found) throw federationError(404, 'not_found', `${sub} is not a subordinate of ${entityId}`);
      const statement = await signSubordinateStatement(await sources.federationSigner(tenantId), entityId, found, sources.clock.now());
      return reply.type(ENTITY_STATEMENT_MEDIA_TYPE).send(statement);
    },
  );

  app.get(
    '/issuers/:tenantId/federation/list',
    {
      schema: {
        tags,
        summary: 'OpenID Federation list endpoint (section 8.2): the entity identifiers of the subordinates',
        description:
          'A JSON array. The filters entity_type, trust_marked, trust_mark_type and intermediate are not supported: 400 unsupported_parameter (section 8.2.2). 404 not_found when the tenant is no intermediate or trust anchor.',
        params: TenantParams,
        querystring: z.object({
          entity_type: z.unknown().optional(),
          trust_marked: z.unknown().optional(),
          trust_mark_type: z.unknown().optional(),
          intermediate: z.unknown().optional(),
        }),
        response: { 200: z.array(z.string()) },
      },
    },
    async (request) => {
      const { tenantId } = request.params;
      await superior(tenantId);
      const filter = Object.entries(request.query).find(([, value]) => value !== undefined);
      if (filter) throw federationError(400, 'unsupported_parameter', `${filter[0]} is not supported by this list endpoint`);
      return (await subordinates.list(tenantId)).map((subordinate) => subordinate.entityId);
    },
  );

  app.get(
    '/issuers/:tenantId/federation/resolve',
    {
      schema: {
        tags,
        summary: 'OpenID Federation resolve endpoint (section 8.3): the resolved metadata and trust chain of sub',
        description:
          "application/resolve-response+jwt: typ resolve-response+jwt, signed by the tenant's default federation key chain; iss the tenant's entity identifier, sub, iat, exp (at most the expiry of the chain's statements), metadata (sub's metadata with the chain's policies applied) and trust_chain (sub's entity configuration, the subordinate statements upward, the anchor's entity configuration). Resolved as svc's verifier resolves (the outbound client, FEDERATION_RESOLUTION_DEADLINE_MS, cached cacheTtlSeconds). trust_anchor must be one of the tenant's trustAnchors, or the tenant itself when it is a trust_anchor: 404 invalid_trust_anchor otherwise. Errors as JSON (section 8.9): 400 invalid_request without sub or trust_anchor, 404 invalid_trust_chain when no chain resolves, 404 not_found when the tenant is no intermediate or trust anchor. entity_type is not supported (400 unsupported_parameter).",
        params: TenantParams,
        querystring: z.object({ sub: z.string().optional(), trust_anchor: z.string().optional(), entity_type: z.unknown().optional() }),
      },
    },
    async (request, reply) => {
      const { tenantId } = request.params;
      const { entityId, federation } = await superior(tenantId);
      const { sub, trust_anchor: anchor, entity_type: entityType } = request.query;
      if (!sub || !anchor) throw federationError(400, 'invalid_request', 'sub and trust_anchor are required');
      if (entityType !== undefined)
        throw federationError(400, 'unsupported_parameter', 'entity_type is not supported by this resolve endpoint');
      // Only anchors the tenant trusts itself: the endpoint is public, and resolving reads other servers.
      const accepted =
        federation.trustAnchors.some((trusted) => trusted.entityId === anchor) ||
        (federation.role === 'trust_anchor' && anchor === entityId);
      if (!accepted) throw federationError(404, 'invalid_trust_anchor', `${anchor} is not a trust anchor of ${entityId}`);
      let trust: ResolvedTrust;
      try {
        trust = await sources.resolve(tenantId, federation, sub, anchor);
      } catch (err) {
        if (err instanceof FederationRefused)
          throw federationError(404, 'invalid_trust_chain', `${sub} does not resolve to ${anchor}: ${err.message}`);
        throw err;
      }
      const response = await signResolveResponse(await sources.federationSigner(tenantId), entityId, sub, trust, sources.clock.now());
      return reply.type(RESOLVE_RESPONSE_MEDIA_TYPE).send(response);
    },
  );
}
