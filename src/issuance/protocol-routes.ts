// The wallet-facing OpenID4VCI surface of a tenant: public, and answering in the OAuth error shape.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { WALLET_SECURITY } from '../platform/http/openapi.js';
import { unlessNotFound } from '../platform/http/problem.js';
import type { App } from '../platform/http/types.js';
import type { CredentialEndpoint } from './credential-endpoint.js';
import type { DeferredService } from './deferred.js';
import type { IssuanceDeps } from './deps.js';
import { notFoundIssuer } from './errors.js';
import { authorizationServerMetadata, credentialIssuerMetadata, issuerUrls } from './metadata.js';
import type { NotificationEndpoint } from './notification.js';
import type { OfferService } from './offers.js';
import type { TokenEndpoint } from './token-endpoint.js';

const Tenant = z.object({ tenantId: z.string() });
const tags = ['wallet: OpenID4VCI'];
const Json = z.record(z.string(), z.unknown());

export interface ProtocolEndpoints {
  offers: OfferService;
  token: TokenEndpoint;
  credential: CredentialEndpoint;
  deferred: DeferredService;
  notification: NotificationEndpoint;
}

/** The full URL the wallet called, as DPoP's htu compares it. */
const requestUrl = (publicUrl: string, request: FastifyRequest) => `${publicUrl}${request.url}`;
const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

export function issuanceProtocolRoutes(app: App, deps: IssuanceDeps, endpoints: ProtocolEndpoints) {
  async function issuerMetadata(tenantId: string) {
    if (!(await deps.tenantExists(tenantId))) throw notFoundIssuer(tenantId);
    const [settings, configs] = await Promise.all([deps.settings.get(tenantId), deps.configs.list(tenantId)]);
    const algorithms = new Map<string, string>();
    for (const config of configs)
      algorithms.set(
        config.id,
        (await deps.keyChains.resolve(tenantId, { keyChainId: config.keyChainId, usageType: 'attestation' })).algorithm,
      );
    return credentialIssuerMetadata(issuerUrls(deps.publicUrl, tenantId), settings, configs, (c) => algorithms.get(c.id) ?? 'ES256');
  }

  const servedMetadata = {
    'openid-credential-issuer': {
      summary: 'Credential issuer metadata',
      handler: (request: FastifyRequest<{ Params: { tenantId: string } }>) => issuerMetadata(request.params.tenantId),
    },
    'oauth-authorization-server': {
      summary: 'Authorization server metadata of the built-in authorization server',
      handler: async (request: FastifyRequest<{ Params: { tenantId: string } }>) => {
        const { tenantId } = request.params;
        if (!(await deps.tenantExists(tenantId))) throw notFoundIssuer(tenantId);
        return authorizationServerMetadata(issuerUrls(deps.publicUrl, tenantId), await deps.settings.get(tenantId));
      },
    },
  };
  // The well-known suffix goes between host and path (RFC 8414 section 3.1, as OpenID4VCI 1.0
  // requires). Draft-era clients still in wallets (Sphereon's oid4vci-client 0.20) append it to the
  // issuer identifier instead; that location serves the same document through the same handler, so
  // both can never differ. openid-configuration stays unserved: it would claim an OpenID Provider.
  for (const [suffix, { summary, handler }] of Object.entries(servedMetadata)) {
    app.get(`/.well-known/${suffix}/issuers/:tenantId`, { schema: { tags, summary, params: Tenant } }, handler);
    app.get(
      `/issuers/:tenantId/.well-known/${suffix}`,
      { schema: { tags, summary: `${summary} (compatibility location for draft-era clients)`, params: Tenant } },
      handler,
    );
  }

  app.get(
    '/.well-known/jwt-vc-issuer/issuers/:tenantId',
    {
      schema: { tags, summary: 'JWT VC issuer metadata (SD-JWT VC): the keys that sign credentials', params: Tenant },
    },
    async (request) => {
      const { tenantId } = request.params;
      if (!(await deps.tenantExists(tenantId))) throw notFoundIssuer(tenantId);
      return { issuer: issuerUrls(deps.publicUrl, tenantId).issuer, jwks: await deps.signing.jwks(tenantId, ['attestation']) };
    },
  );

  app.get(
    '/issuers/:tenantId/types/:configurationId',
    {
      schema: {
        tags,
        summary: 'SD-JWT VC type metadata hosted for a configuration whose vct is an object',
        params: Tenant.extend({ configurationId: z.string() }),
      },
    },
    async (request) => {
      const { tenantId, configurationId } = request.params;
      const config = await unlessNotFound(deps.configs.get(tenantId, configurationId));
      if (config?.config.format !== 'dc+sd-jwt') throw notFoundIssuer(`${tenantId}/${configurationId}`);
      const urls = issuerUrls(deps.publicUrl, tenantId);
      const described = typeof config.vct === 'object' && config.vct ? config.vct : {};
      return {
        ...described,
        vct: `${urls.types}/${encodeURIComponent(config.id)}`,
        ...(config.config.display && { display: config.config.display }),
      };
    },
  );

  app.get(
    '/issuers/:tenantId/credential-offer/:handle',
    {
      schema: {
        tags,
        summary: 'A credential offer by reference (credential_offer_uri)',
        description:
          'The offer a wallet fetches from the credential_offer_uri of a QR code or deep link. The handle is single-purpose and unguessable; an unknown or expired one answers 404 invalid_request.',
        params: Tenant.extend({ handle: z.string() }),
      },
    },
    async (request, reply) => {
      const offer = await endpoints.offers.byReference(request.params.tenantId, request.params.handle);
      if (!offer) return reply.code(404).send({ error: 'invalid_request', error_description: 'unknown or expired credential offer' });
      return noStore(reply).send(offer);
    },
  );

  app.post(
    '/issuers/:tenantId/token',
    {
      schema: {
        tags,
        summary: 'Token endpoint (pre-authorized code grant, optional DPoP)',
        description:
          'Form-encoded (application/x-www-form-urlencoded) as OAuth 2.0 requires: grant_type urn:ietf:params:oauth:grant-type:pre-authorized_code, pre-authorized_code, and tx_code when the offer asked for one (wrong codes count toward a lock-out). A DPoP header binds the access token to the wallet key (required when the issuer settings say so). Errors use the OAuth shape {error, error_description}.',
        params: Tenant,
        body: Json.optional(),
      },
    },
    async (request, reply) => {
      const dpop = request.headers.dpop;
      const response = await endpoints.token.exchange({
        tenantId: request.params.tenantId,
        body: request.body ?? {},
        url: requestUrl(deps.publicUrl, request),
        ...(typeof dpop === 'string' && { dpop }),
      });
      return noStore(reply).send(response);
    },
  );

  app.post(
    '/issuers/:tenantId/nonce',
    {
      schema: {
        tags,
        summary: 'Nonce endpoint: a fresh c_nonce for key proofs',
        description: 'Each nonce is accepted in one key proof, until it expires (issuer settings: nonceLifetimeSeconds).',
        params: Tenant,
      },
    },
    async (request, reply) => {
      const { tenantId } = request.params;
      if (!(await deps.tenantExists(tenantId))) throw notFoundIssuer(tenantId);
      const settings = await deps.settings.get(tenantId);
      return noStore(reply).send({ c_nonce: await deps.nonces.issue(tenantId, 'c_nonce', settings.nonceLifetimeSeconds) });
    },
  );

  const resource = (request: FastifyRequest) => {
    const { authorization, dpop } = request.headers;
    return {
      tenantId: (request.params as { tenantId: string }).tenantId,
      url: requestUrl(deps.publicUrl, request),
      body: (request.body as Record<string, unknown> | undefined) ?? {},
      ...(authorization && { authorization }),
      ...(typeof dpop === 'string' && { dpop }),
    };
  };

  app.post(
    '/issuers/:tenantId/credential',
    {
      schema: {
        tags,
        summary: 'Credential endpoint (jwt proofs; several proofs give a batch)',
        description:
          'JSON body with credential_configuration_id (or credential_identifier) and proofs.jwt: key proofs of type openid4vci-proof+jwt over a c_nonce from the nonce endpoint, one credential per proof. Needs the access token of the token endpoint, as a DPoP-bound token with a DPoP proof when it was issued so. Answers the credentials, or a transaction_id for deferred issuance (202).',
        params: Tenant,
        body: Json.optional(),
        security: WALLET_SECURITY,
      },
    },
    async (request, reply) => {
      const result = await endpoints.credential.issue(resource(request));
      return noStore(reply).code(result.status).send(result.body);
    },
  );

  app.post(
    '/issuers/:tenantId/deferred-credential',
    {
      schema: {
        tags,
        summary: 'Deferred credential endpoint',
        description:
          'JSON body with the transaction_id of a deferred issuance; answers the credentials once the issuer completed them, else issuance_pending with an interval.',
        params: Tenant,
        body: Json.optional(),
        security: WALLET_SECURITY,
      },
    },
    async (request, reply) => {
      const result = await endpoints.deferred.retrieve(resource(request));
      return noStore(reply).code(result.status).send(result.body);
    },
  );

  app.post(
    '/issuers/:tenantId/notification',
    {
      schema: {
        tags,
        summary: 'Notification endpoint',
        description:
          'JSON body with the notification_id of an issued credential and an event (credential_accepted, credential_failure, credential_deleted); answers 204.',
        params: Tenant,
        body: Json.optional(),
        security: WALLET_SECURITY,
      },
    },
    async (request, reply) => {
      await endpoints.notification.notify(resource(request));
      return reply.code(204).send();
    },
  );
}
