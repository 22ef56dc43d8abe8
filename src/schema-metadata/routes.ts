// /api/schema-metadata: the tenant's schema metadata at its registrar (TS11, experimental);
// /api/issuer/credentials/{id}/schema-metadata: what would be published for a credential configuration;
// /api/verifier/config/schema-metadata/resolve(-jwt): importing schema metadata as a DCQL query.
import { z } from 'zod';
import { contextOf, tenantOf } from '../platform/http/access.js';
import { withExample } from '../platform/http/examples.js';
import type { App } from '../platform/http/types.js';
import type { SchemaMetadataResolver } from './resolve.js';
import {
  ClassificationBody,
  DeprecationBody,
  FormatParams,
  IdParams,
  ListQuery,
  PublishBody,
  PublishVersionBody,
  ResolvedSchemaMetadataSchema,
  ResolveJwtBody,
  ResolveUrlBody,
  SCHEMA_METADATA_JWT_TYPE,
  SchemaMetadataRecordSchema,
  SchemaMetaPayloadSchema,
  VersionParams,
  VocabulariesSchema,
} from './schemas.js';
import type { SchemaMetadataService } from './service.js';

/** Publishing and changing the tenant's entries is registrar work. */
const manage = { roles: ['registrar:manage'], tenant: 'required' } as const;
/** Reading the catalog serves whoever publishes and whoever designs credentials against it. */
const read = { roles: ['registrar:manage', 'issuance:manage'], tenant: 'required' } as const;
const tags = ['schema metadata'];
const Records = z.array(SchemaMetadataRecordSchema);

const EXPERIMENTAL = 'Schema metadata follows TS11, an experimental specification that may change.';
const REGISTRAR =
  "Calls the tenant's registrar: 404 without a registrar configuration; a registrar failure is a 502 carrying its message, a 409 of the registrar a 409.";
const PUBLISH = [
  EXPERIMENTAL,
  `The payload (id, version, rulebookURI, rulebookIntegrity, attestationLoS, bindingType, schemaURIs, trustedAuthorities, iat) is signed as a JWS with typ ${SCHEMA_METADATA_JWT_TYPE},`,
  "the tenant's default access key chain's key and its certificate chain in x5c, and submitted to the registrar (POST /schema-metadata {jwt}); the answer is the registrar's record.",
  'Without config.schemaURIs, the schema comes from the credential configuration named by credentialConfigId: the JSON Schema derived from its fields, inline (schemaContent),',
  'with meta {vct} (dc+sd-jwt) or {doctype_value} (mso_mdoc). config.category and config.tags are set at the registrar after submission (they are not signed).',
  "With credentialConfigId, that configuration's schemaMeta becomes the config with id set to the attestation id. Input is checked before the registrar is called.",
  REGISTRAR,
].join(' ');

export function schemaMetadataRoutes(app: App, service: SchemaMetadataService, resolver: SchemaMetadataResolver) {
  for (const [path, deprecated] of [
    ['/api/schema-metadata/publish', false],
    ['/api/schema-metadata/sign', true],
  ] as const) {
    app.post(
      path,
      {
        config: { access: manage },
        schema: {
          tags,
          deprecated,
          summary: deprecated
            ? 'Deprecated alias of POST /api/schema-metadata/publish'
            : 'Publish schema metadata under a newly reserved id',
          description: `${PUBLISH} The id is reserved at the registrar (POST /schema-metadata/reserve with config.nameHint); config.id must be absent.`,
          body: withExample(PublishBody, {
            credentialConfigId: 'pid',
            config: {
              version: '1.0.0',
              nameHint: 'acme-staff-badge',
              attestationLoS: 'iso_18045_moderate',
              bindingType: 'key',
              category: 'employment',
            },
          }),
          response: { 201: SchemaMetadataRecordSchema },
        },
      },
      async (request, reply) => reply.code(201).send(await service.publish(contextOf(request), tenantOf(request), request.body)),
    );
  }
  for (const [path, deprecated] of [
    ['/api/schema-metadata/publish-version', false],
    ['/api/schema-metadata/sign-version', true],
  ] as const) {
    app.post(
      path,
      {
        config: { access: manage },
        schema: {
          tags,
          deprecated,
          summary: deprecated
            ? 'Deprecated alias of POST /api/schema-metadata/publish-version'
            : 'Publish a new version of existing schema metadata',
          description: `${PUBLISH} Body as for publish, with config.id required: the attestation id (the reserved URL, or the registrar's short id, whose URL is read from its latest version) and config.version the new version. The registrar refuses a version it has (409) and an id of another relying party (502 with its message).`,
          body: withExample(PublishVersionBody, {
            credentialConfigId: 'pid',
            config: { id: 'acme-staff-badge', version: '1.1.0', attestationLoS: 'iso_18045_moderate', bindingType: 'key' },
          }),
          response: { 201: SchemaMetadataRecordSchema },
        },
      },
      async (request, reply) => reply.code(201).send(await service.publishVersion(contextOf(request), tenantOf(request), request.body)),
    );
  }

  app.get(
    '/api/schema-metadata/vocabularies',
    {
      config: { access: read },
      schema: { tags, summary: 'Categories and tags the registrar accepts', description: REGISTRAR, response: { 200: VocabulariesSchema } },
    },
    (request) => service.vocabularies(tenantOf(request)),
  );
  app.get(
    '/api/schema-metadata',
    {
      config: { access: read },
      schema: {
        tags,
        summary: "The registrar's schema metadata, optionally of one id and version",
        description: `${EXPERIMENTAL} ${REGISTRAR}`,
        querystring: ListQuery,
        response: { 200: Records },
      },
    },
    (request) => service.list(tenantOf(request), request.query),
  );
  app.get(
    '/api/schema-metadata/mine',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Every version of every schema metadata id the tenant published',
        description: `The ids the tenant published through this service, as the registrar has them now. ${REGISTRAR}`,
        response: { 200: Records },
      },
    },
    (request) => service.mine(tenantOf(request)),
  );
  app.get(
    '/api/schema-metadata/:id/versions',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'The versions of one id, latest first',
        description: REGISTRAR,
        params: IdParams,
        response: { 200: Records },
      },
    },
    (request) => service.versions(tenantOf(request), request.params.id),
  );
  app.get(
    '/api/schema-metadata/:id/versions/:version/jwt',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'The signed JWT of one version (application/jwt)',
        description: REGISTRAR,
        params: VersionParams,
        produces: ['application/jwt'],
      },
    },
    async (request, reply) =>
      reply.type('application/jwt').send(await service.jwt(tenantOf(request), request.params.id, request.params.version)),
  );
  app.get(
    '/api/schema-metadata/:id/versions/:version/schemas/:format',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'The JSON Schema of one version for one format',
        description: REGISTRAR,
        params: FormatParams,
        response: { 200: z.record(z.string(), z.unknown()) },
      },
    },
    (request) => service.schema(tenantOf(request), request.params.id, request.params.version, request.params.format),
  );
  app.patch(
    '/api/schema-metadata/:id/versions/:version/deprecation',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Deprecate a version (or take the deprecation back)',
        description: `Only the uploader may: the registrar refuses others (502 with its message). ${REGISTRAR}`,
        params: VersionParams,
        body: withExample(DeprecationBody, { deprecated: true, message: 'use version 1.1.0', supersededByVersion: '1.1.0' }),
        response: { 200: SchemaMetadataRecordSchema },
      },
    },
    (request) => service.deprecate(contextOf(request), tenantOf(request), request.params.id, request.params.version, request.body),
  );
  app.patch(
    '/api/schema-metadata/:id/versions/:version',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Set the category and tags of a version',
        description: `Catalog attributes the registrar keeps beside the signed metadata (the path mirrors the registrar's PATCH /schema-metadata/{id}/versions/{version}). ${REGISTRAR}`,
        params: VersionParams,
        body: withExample(ClassificationBody, { category: 'employment', tags: ['eudi'] }),
        response: { 200: SchemaMetadataRecordSchema },
      },
    },
    (request) => service.classify(contextOf(request), tenantOf(request), request.params.id, request.params.version, request.body),
  );

  app.get(
    '/api/issuer/credentials/:id/schema-metadata',
    {
      config: { access: { roles: ['issuance:manage'], tenant: 'required' } },
      schema: {
        tags: ['credential configurations'],
        summary: 'The schema metadata payload the service would sign for a credential configuration',
        description: `${EXPERIMENTAL} Built from the configuration's schemaMeta and, where schemaMeta has no schemaURIs, the JSON Schema derived from its fields with its vct or docType; id is the attestation id once published, iat is added at signing. 409 when the configuration has no schemaMeta.`,
        params: z.object({ id: z.string() }),
        response: { 200: SchemaMetaPayloadSchema },
      },
    },
    (request) => service.generate(tenantOf(request), request.params.id),
  );

  const verifier = { roles: ['presentation:manage'], tenant: 'required' } as const;
  const RESOLVED = [
    `${EXPERIMENTAL} The JWT must be a compact JWS of typ ${SCHEMA_METADATA_JWT_TYPE}, signed by the leaf of its x5c; each certificate signed by the next and valid now and at iat.`,
    "Else 400 naming the field with the reason. signer.trusted tells whether the chain leads to a certificate of the tenant's trust lists (null: none configured); it is not required.",
    'Per format (the first schemaURIs entry of each), the schema is schemaContent or fetched from uri (checked against integrity when given); every leaf claim it names becomes a claim of',
    'the DCQL query: dc+sd-jwt with meta.vct_values, mso_mdoc with meta.doctype_value and [namespace, element] paths.',
  ].join(' ');
  app.post(
    '/api/verifier/config/schema-metadata/resolve',
    {
      config: { access: verifier },
      schema: {
        tags: ['verification'],
        summary: 'Import schema metadata from a URL as a DCQL query',
        description: `The URL is fetched by the service under its outbound address policy (a refused address is a 400 naming body.schemaMetadataUrl); the JSON it answers must hold signedJwt. ${RESOLVED}`,
        body: withExample(ResolveUrlBody, {
          schemaMetadataUrl: 'https://registrar.example/schema-metadata/acme-staff-badge/versions/1.0.0/jwt',
        }),
        response: { 200: ResolvedSchemaMetadataSchema },
      },
    },
    (request) => resolver.fromUrl(tenantOf(request), request.body.schemaMetadataUrl),
  );
  app.post(
    '/api/verifier/config/schema-metadata/resolve-jwt',
    {
      config: { access: verifier },
      schema: {
        tags: ['verification'],
        summary: 'Verify signed schema metadata and build a DCQL query from it',
        description: RESOLVED,
        body: withExample(ResolveJwtBody, {
          signedJwt:
            'eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0dGVzdGF0aW9uLXNjaGVtYStqd3QiLCJ4NWMiOlsiTUlJQiJdfQ.eyJpZCI6ImFjbWUtc3RhZmYtYmFkZ2UiLCJ2ZXJzaW9uIjoiMS4wLjAifQ.c2lnbmF0dXJl',
        }),
        response: { 200: ResolvedSchemaMetadataSchema },
      },
    },
    (request) => resolver.fromJwt(tenantOf(request), request.body.signedJwt),
  );
}
