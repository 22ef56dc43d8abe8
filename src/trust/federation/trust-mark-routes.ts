// The tenant as an OpenID Federation trust mark issuer: its trust mark types and the marks it grants,
// managed through the management API (issuance:manage, as subordinates), and the public endpoints a
// verifier or a subject asks (OpenID Federation 1.0 sections 8.4 to 8.6), named in the
// federation_entity metadata of its entity configuration once it defines a type.
import { z } from 'zod';
import type { Signer } from '../../key-chains/signing.js';
import type { Clock } from '../../platform/clock.js';
import { contextOf, tenantOf } from '../../platform/http/access.js';
import { badRequest, OAuthError } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import { entityIdOf } from './entity-configuration.js';
import type { FederationSettings } from './settings.js';
import {
  type FederationTrustMarks,
  signTrustMarkStatus,
  TRUST_MARK_MEDIA_TYPE,
  TRUST_MARK_STATUS_MEDIA_TYPE,
  TrustMarkGrantSchema,
  TrustMarkSchema,
  TrustMarkTypeInputSchema,
  TrustMarkTypeSchema,
} from './trust-marks.js';

export interface TrustMarkIssuerSources {
  trustMarks: FederationTrustMarks;
  /** The tenant's credential issuer identifier and federation settings; 404 for an unknown tenant. */
  issuerOf: (tenantId: string) => Promise<{ credentialIssuer: string; federation: FederationSettings | null }>;
  /** The tenant's federation signer (its default federation key chain): the key of its entity configuration. */
  federationSigner: (tenantId: string) => Promise<Signer>;
  clock: Clock;
}

const tags = ['federation'];
const manage = { roles: ['issuance:manage'], tenant: 'required' } as const;
const IdParams = z.object({ id: z.string().max(100) });
const TenantParams = z.object({ tenantId: z.string() });
const PUBLISHED =
  "Marks are signed (typ trust-mark+jwt: iss the tenant's entity identifier, sub, trust_mark_type, iat, exp when the type has a lifetime, logo_uri and ref when it has them) with the tenant's default federation key, the key of its entity configuration; the tenant needs federation settings (PUT /api/trust-config). Once it defines a type its entity configuration names federation_trust_mark_status_endpoint, federation_trust_mark_list_endpoint and federation_trust_mark_endpoint in its federation_entity metadata.";

const federationError = (status: number, error: string, description: string) => new OAuthError(status, error, description);

export function federationTrustMarkRoutes(app: App, sources: TrustMarkIssuerSources) {
  const { trustMarks } = sources;

  /** The tenant's entity identifier; undefined when it takes part in no federation. */
  async function issuerEntity(tenantId: string) {
    const { credentialIssuer, federation } = await sources.issuerOf(tenantId);
    return federation ? entityIdOf(credentialIssuer, federation) : undefined;
  }

  app.get(
    '/api/federation/trust-mark-types',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'The trust mark types this tenant issues',
        description: PUBLISHED,
        response: { 200: z.array(TrustMarkTypeSchema) },
      },
    },
    (request) => trustMarks.listTypes(tenantOf(request)),
  );

  app.post(
    '/api/federation/trust-mark-types',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Define a trust mark type this tenant issues (OpenID Federation 1.0 section 7)',
        description: `${PUBLISHED} A trust anchor names which issuers it accepts for a type in its trust_mark_issuers (trustMarkIssuers of its federation settings). 409 when the type is defined already. Audited as federation_trust_mark_type.created.`,
        body: TrustMarkTypeInputSchema,
        response: { 201: TrustMarkTypeSchema },
      },
    },
    async (request, reply) => reply.code(201).send(await trustMarks.createType(contextOf(request), tenantOf(request), request.body)),
  );

  app.delete(
    '/api/federation/trust-mark-types/:id',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Stop issuing a trust mark type: marks granted before keep their status',
        description: '404 when missing or of another tenant. Audited as federation_trust_mark_type.deleted.',
        params: IdParams,
        response: { 204: z.null() },
      },
    },
    async (request, reply) => {
      await trustMarks.deleteType(contextOf(request), tenantOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/federation/trust-marks',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'The trust marks this tenant granted, oldest first, with their status',
        querystring: z.object({ trustMarkType: z.string().max(500).optional(), sub: z.string().max(500).optional() }),
        response: { 200: z.array(TrustMarkSchema) },
      },
    },
    (request) => trustMarks.list(tenantOf(request), request.query),
  );

  app.post(
    '/api/federation/trust-marks',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Grant an entity a trust mark of one of the tenant types: the signed mark it publishes in its trust_marks',
        description: `${PUBLISHED} 400 naming trustMarkType when it is not a type of this tenant, or naming federation when the tenant has no federation settings. Audited as federation_trust_mark.granted.`,
        body: TrustMarkGrantSchema,
        response: { 201: TrustMarkSchema },
      },
    },
    async (request, reply) => {
      const tenantId = tenantOf(request);
      const entityId = await issuerEntity(tenantId);
      if (!entityId)
        throw badRequest('the tenant has no federation settings: no entity identifier to sign the mark as', [
          { field: 'federation', message: 'set federation in the trust settings (PUT /api/trust-config) first' },
        ]);
      const mark = await trustMarks.grant(contextOf(request), tenantId, request.body, {
        entityId,
        signer: await sources.federationSigner(tenantId),
      });
      return reply.code(201).send(mark);
    },
  );

  app.get(
    '/api/federation/trust-marks/:id',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'One granted trust mark (404 when missing or of another tenant)',
        params: IdParams,
        response: { 200: TrustMarkSchema },
      },
    },
    (request) => trustMarks.get(tenantOf(request), request.params.id),
  );

  app.post(
    '/api/federation/trust-marks/:id/revoke',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Revoke a granted trust mark: the status endpoint answers revoked from now on',
        description:
          '404 when missing or of another tenant, 409 when revoked already (one database statement decides). Audited as federation_trust_mark.revoked.',
        params: IdParams,
        response: { 200: TrustMarkSchema },
      },
    },
    (request) => trustMarks.revoke(contextOf(request), tenantOf(request), request.params.id),
  );

  /** The tenant as a trust mark issuer: 404 not_found when it takes part in no federation. */
  async function publicIssuer(tenantId: string) {
    const entityId = await issuerEntity(tenantId);
    if (!entityId) throw federationError(404, 'not_found', `the issuer '${tenantId}' takes part in no federation`);
    return entityId;
  }

  app.post(
    '/issuers/:tenantId/federation/trust-mark-status',
    {
      schema: {
        tags,
        summary: 'OpenID Federation trust mark status endpoint (section 8.4): whether a mark this tenant granted is active',
        description:
          "POST application/x-www-form-urlencoded with trust_mark (the whole mark, as in OpenID Federation 1.0). Answers application/trust-mark-status-response+jwt: typ trust-mark-status-response+jwt signed by the tenant's default federation key, with iss, iat, trust_mark and status: active, revoked (revoked through the management API), expired (past its exp) or invalid (a mark this tenant did not grant, or not a mark at all). 400 invalid_request without trust_mark; 404 not_found when the tenant takes part in no federation.",
        params: TenantParams,
        body: z.object({ trust_mark: z.string().max(16_384).optional() }).optional(),
      },
    },
    async (request, reply) => {
      const { tenantId } = request.params;
      const entityId = await publicIssuer(tenantId);
      const trustMark = request.body?.trust_mark;
      if (!trustMark) throw federationError(400, 'invalid_request', 'trust_mark is missing: the trust mark whose status is asked');
      const granted = await trustMarks.findByJwt(tenantId, trustMark);
      const status = granted?.status ?? 'invalid';
      const response = await signTrustMarkStatus(
        await sources.federationSigner(tenantId),
        entityId,
        trustMark,
        status,
        sources.clock.now(),
      );
      return reply.type(TRUST_MARK_STATUS_MEDIA_TYPE).send(response);
    },
  );

  const TypeQuery = z.object({ trust_mark_type: z.string().max(500).optional(), sub: z.string().max(500).optional() });

  app.get(
    '/issuers/:tenantId/federation/trust-mark-list',
    {
      schema: {
        tags,
        summary: 'OpenID Federation trust mark list endpoint (section 8.5): the entities holding an active mark of a type',
        description:
          'A JSON array of entity identifiers, each once; sub narrows it to that entity. 400 invalid_request without trust_mark_type; 404 not_found when the tenant takes part in no federation.',
        params: TenantParams,
        querystring: TypeQuery,
        response: { 200: z.array(z.string()) },
      },
    },
    async (request) => {
      const { tenantId } = request.params;
      await publicIssuer(tenantId);
      const { trust_mark_type: trustMarkType, sub } = request.query;
      if (!trustMarkType) throw federationError(400, 'invalid_request', 'trust_mark_type is missing');
      const marks = await trustMarks.list(tenantId, { trustMarkType, ...(sub !== undefined && { sub }) });
      return [...new Set(marks.filter((mark) => mark.status === 'active').map((mark) => mark.sub))];
    },
  );

  app.get(
    '/issuers/:tenantId/federation/trust-mark',
    {
      schema: {
        tags,
        summary: 'OpenID Federation trust mark endpoint (section 8.6): the active mark of a type an entity holds',
        description:
          'application/trust-mark+jwt: the latest active mark of trust_mark_type granted to sub. 400 invalid_request without either; 404 not_found when there is none, or when the tenant takes part in no federation.',
        params: TenantParams,
        querystring: TypeQuery,
      },
    },
    async (request, reply) => {
      const { tenantId } = request.params;
      await publicIssuer(tenantId);
      const { trust_mark_type: trustMarkType, sub } = request.query;
      if (!trustMarkType || !sub) throw federationError(400, 'invalid_request', 'trust_mark_type and sub are required');
      const active = (await trustMarks.list(tenantId, { trustMarkType, sub })).filter((mark) => mark.status === 'active').at(-1);
      if (!active) throw federationError(404, 'not_found', `${sub} holds no active trust mark of type ${trustMarkType}`);
      return reply.type(TRUST_MARK_MEDIA_TYPE).send(active.trustMark);
    },
  );
}
