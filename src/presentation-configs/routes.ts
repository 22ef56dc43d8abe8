import { z } from 'zod';
import { contextOf, tenantOf } from '../platform/http/access.js';
import { withExample } from '../platform/http/examples.js';
import type { App } from '../platform/http/types.js';
import { type IssuerMetadataResolver, ResolvedIssuerMetadata, ResolveIssuerMetadataBody } from './issuer-metadata.js';
import {
  PresentationConfigurationSchema,
  RotatedWebhookSigningSecretSchema,
  SaveBody,
  SavedPresentationConfigurationSchema,
  UpdateBody,
} from './schemas.js';
import type { PresentationConfigService } from './service.js';

const Params = z.object({ id: z.string() });
const access = { roles: ['presentation:manage'], tenant: 'required' } as const;
const tags = ['presentation configurations'];
const PATH = '/api/verifier/config';

const MODEL = [
  '`dcql_query` is checked with the dcql library; each credential query asks for dc+sd-jwt, mso_mdoc or jwt_vc_json',
  '(W3C VCs: meta.type_values, claim paths into the credential such as ["credentialSubject", "given_name"]). The `credential_ids` of',
  '`transaction_data` and `attached` name credential queries of `dcql_query`. References must exist in the tenant: `webhookEndpointId`',
  'a webhook endpoint, `accessKeyChainId` a key chain of usage type access. `webhookEndpointId` and the deprecated `webhook` exclude each',
  'other; a webhook header value is stored encrypted and answered as ****. `registrationCertCache` is read-only and ignored here.',
  'A write that gives the inline `webhook` a new signing secret (a new webhook, or a new URL) answers it as `webhookSigningSecret`, this once;',
  'the same URL keeps its secret, and no inline webhook (none, or `webhookEndpointId`) drops it.',
].join(' ');

const ROTATE = [
  'Answers the new `webhookSigningSecret` of the inline `webhook`, this once. For WEBHOOK_SECRET_ROTATION_GRACE_SECONDS (default a day)',
  'the previous secret still signs too: webhook-signature then carries both signatures, space-separated. A configuration whose webhook was',
  'stored before signing existed is sent unsigned until this gives it its first secret. 404 for an unknown configuration or another',
  "tenant's; 409 when the configuration has no inline webhook (none, or a `webhookEndpointId`, whose endpoint signs with its own secret).",
].join(' ');

const RESOLVE_ISSUER_METADATA = [
  'Fetches `{credentialIssuer}` metadata server-side from its well-known location (OpenID4VCI 1.0 section 12.2.2: the well-known segment',
  'between host and path) through the outbound address policy, checks that it is a JSON object naming that credential_issuer, and answers',
  'it with a summary per credential configuration (format, vct or doctype, claim paths, and a DCQL credential query for it). 400 naming',
  'body.credentialIssuer for an address the policy refuses; 502 with the reason when the issuer cannot be reached or answers anything else.',
].join(' ');

export function presentationConfigRoutes(app: App, configs: PresentationConfigService, issuerMetadata: IssuerMetadataResolver) {
  app.get(
    PATH,
    {
      config: { access },
      schema: {
        tags,
        summary: "List the tenant's presentation configurations",
        response: { 200: z.array(PresentationConfigurationSchema) },
      },
    },
    (request) => configs.list(tenantOf(request)),
  );

  app.post(
    PATH,
    {
      config: { access },
      schema: {
        tags,
        summary: 'Create a presentation configuration, or replace the one with this id',
        description: `${MODEL} An existing id is replaced as a whole: fields not given take their defaults; createdAt is kept. 201 when created, 200 when replaced.`,
        body: SaveBody,
        response: {
          200: SavedPresentationConfigurationSchema.describe('replaced'),
          201: SavedPresentationConfigurationSchema.describe('created'),
        },
      },
    },
    async (request, reply) => {
      const { created, configuration } = await configs.save(contextOf(request), tenantOf(request), request.body);
      return reply.code(created ? 201 : 200).send(configuration);
    },
  );

  app.post(
    `${PATH}/issuer-metadata/resolve`,
    {
      config: { access },
      schema: {
        tags,
        summary: "Fetch another credential issuer's metadata, to build a DCQL query for what it issues",
        description: RESOLVE_ISSUER_METADATA,
        body: withExample(ResolveIssuerMetadataBody, { credentialIssuer: 'https://issuer.example/issuers/acme' }),
        response: { 200: ResolvedIssuerMetadata },
      },
    },
    (request) => issuerMetadata.resolve(request.body.credentialIssuer),
  );

  app.get(
    `${PATH}/:id`,
    {
      config: { access },
      schema: { tags, summary: 'Get a presentation configuration', params: Params, response: { 200: PresentationConfigurationSchema } },
    },
    (request) => configs.get(tenantOf(request), request.params.id),
  );

  app.patch(
    `${PATH}/:id`,
    {
      config: { access },
      schema: {
        tags,
        summary: 'Update a presentation configuration: the fields given replace the stored ones (null clears or resets to the default)',
        description: MODEL,
        params: Params,
        body: withExample(UpdateBody, { description: 'adults only: given name and the age check' }),
        response: { 200: SavedPresentationConfigurationSchema },
      },
    },
    (request) => configs.update(contextOf(request), tenantOf(request), request.params.id, request.body),
  );

  app.post(
    `${PATH}/:id/rotate-webhook-secret`,
    {
      config: { access },
      schema: {
        tags,
        summary: "Replace the signing secret of a presentation configuration's inline webhook",
        description: ROTATE,
        params: Params,
        response: { 200: RotatedWebhookSigningSecretSchema },
      },
    },
    (request) => configs.rotateWebhookSecret(contextOf(request), tenantOf(request), request.params.id),
  );

  app.delete(
    `${PATH}/:id`,
    {
      config: { access },
      schema: { tags, summary: 'Delete a presentation configuration', params: Params, response: { 204: z.null() } },
    },
    async (request, reply) => {
      await configs.remove(contextOf(request), tenantOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
