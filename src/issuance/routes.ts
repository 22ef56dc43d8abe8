// Management API of issuance: issuer settings, offers, deferred transactions.
import { z } from 'zod';
import { contextOf, tenantOf } from '../platform/http/access.js';
import type { App } from '../platform/http/types.js';
import type { DeferredService } from './deferred.js';
import type { OfferService } from './offers.js';
import { IssuerSettingsSchema, type IssuerSettingsService } from './settings.js';

const HeaderAuth = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('none') }),
  z.strictObject({ type: z.literal('header'), header: z.strictObject({ name: z.string().min(1), value: z.string().min(1) }) }),
]);
const ClaimSource = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('inline'), claims: z.record(z.string(), z.unknown()) }),
  z.strictObject({ type: z.literal('attributeProvider'), attributeProviderId: z.string().min(1) }),
  z.strictObject({
    type: z.literal('webhook'),
    webhook: z.strictObject({ url: z.url({ protocol: /^https?$/ }), auth: HeaderAuth.optional() }),
  }),
]);

const OfferBody = z
  .strictObject({
    response_type: z.enum(['uri', 'dc-api', 'iso-18013-7']).describe('only `uri` is available so far'),
    flow: z.enum(['authorization_code', 'pre_authorized_code']).describe('only `pre_authorized_code` is available so far'),
    // Each id is looked up in turn: an offer names a few configurations, never thousands.
    credentialConfigurationIds: z.array(z.string().min(1)).min(1).max(100),
    authorization_server: z.string().optional().describe('default: the first enabled authorization server'),
    credentialClaims: z
      .record(z.string(), ClaimSource)
      .optional()
      .describe(
        "per configuration id: where its claims come from (default: the attribute provider of the configuration, else the fields' default values)",
      ),
    tx_code: z.string().min(1).max(64).optional().describe('a transaction code the wallet user must enter; deliver it out of band'),
    tx_code_description: z.string().max(300).optional(),
    webhookEndpointId: z.string().optional(),
  })
  .meta({
    examples: [
      {
        response_type: 'uri',
        flow: 'pre_authorized_code',
        credentialConfigurationIds: ['pid'],
        credentialClaims: {
          pid: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12', age_over_18: true } },
        },
        tx_code: '493817',
      },
    ],
  });
const OfferResponse = z.object({
  uri: z.string().describe('openid-credential-offer:// URI with credential_offer_uri: show as QR code or link'),
  session: z.string().describe('the session id'),
  credentialOffer: z.record(z.string(), z.unknown()).describe('the offer object the URI refers to'),
  credentialOfferUri: z.string(),
  expiresAt: z.string(),
});
const DeferredResult = z
  .object({
    transactionId: z.string(),
    status: z.enum(['pending', 'ready', 'retrieved', 'expired', 'failed']),
    message: z.string().optional(),
  })
  .meta({ id: 'DeferredTransactionResult' });
const TransactionParams = z.object({ transactionId: z.string() });

const tags = ['issuance'];

export function issuanceRoutes(app: App, services: { settings: IssuerSettingsService; offers: OfferService; deferred: DeferredService }) {
  const manage = { roles: ['issuance:manage'], tenant: 'required' } as const;

  app.get(
    '/api/issuer/config',
    {
      config: { access: manage },
      schema: { tags, summary: "The tenant's issuer settings", response: { 200: IssuerSettingsSchema } },
    },
    (request) => services.settings.get(tenantOf(request)),
  );

  app.put(
    '/api/issuer/config',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Replace the issuer settings (absent fields take their defaults)',
        body: IssuerSettingsSchema,
        response: { 200: IssuerSettingsSchema },
      },
    },
    (request) => services.settings.put(contextOf(request), tenantOf(request), request.body),
  );

  app.post(
    '/api/issuer/offer',
    {
      config: { access: { roles: ['issuance:offer'], tenant: 'required' } },
      schema: {
        tags,
        summary: 'Create a credential offer (pre-authorized code flow)',
        description:
          'Creates an issuance session and returns the offer URI. Inline claims are validated against the configurations now; a client whose allowedIssuanceConfigs excludes a requested id gets 403.',
        body: OfferBody,
        response: { 201: OfferResponse },
      },
    },
    async (request, reply) => reply.code(201).send(await services.offers.create(contextOf(request), tenantOf(request), request.body)),
  );

  app.post(
    '/api/issuer/deferred/:transactionId/complete',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Supply the claims of a pending deferred transaction; the credential becomes ready',
        params: TransactionParams,
        body: z.strictObject({ claims: z.record(z.string(), z.unknown()) }),
        response: { 200: DeferredResult },
      },
    },
    (request) => services.deferred.complete(contextOf(request), tenantOf(request), request.params.transactionId, request.body.claims),
  );

  app.post(
    '/api/issuer/deferred/:transactionId/fail',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Fail a pending deferred transaction; the wallet then gets invalid_transaction_id',
        params: TransactionParams,
        response: { 200: DeferredResult },
      },
    },
    (request) => services.deferred.fail(contextOf(request), tenantOf(request), request.params.transactionId),
  );
}
