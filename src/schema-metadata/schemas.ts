// Schema metadata (EUDI TS11 catalogue of attestations; the specification is experimental): the
// registrar's records as we pass them on, what a tenant publishes (the SchemaMetaConfig a credential
// configuration embeds: credential-configs/schema-meta.ts) and the bodies of the verifier's resolve
// endpoints. The enumerations are those of registrar-api.md.
import { z } from 'zod';
import { AttestationId, CATEGORIES, SCHEMA_FORMATS, SchemaMetaConfigSchema, SemVer, TAGS } from '../credential-configs/schema-meta.js';

/** The JWS type of signed schema metadata. */
export const SCHEMA_METADATA_JWT_TYPE = 'attestation-schema+jwt';
const JsonObject = z.record(z.string(), z.unknown());

const CredentialConfigId = z
  .string()
  .min(1)
  .max(256)
  .describe(
    'a credential configuration of the tenant: its fields give the schema when schemaURIs is absent, and its schemaMeta is set to what was published (with the attestation id)',
  );

export const PublishBody = z.strictObject({ config: SchemaMetaConfigSchema, credentialConfigId: CredentialConfigId.optional() });
export const PublishVersionBody = z.strictObject({
  config: SchemaMetaConfigSchema.extend({ id: AttestationId.describe('the attestation id of the existing schema metadata') }),
  credentialConfigId: CredentialConfigId.optional(),
});
export type PublishInput = z.infer<typeof PublishBody>;
export type PublishVersionInput = z.infer<typeof PublishVersionBody>;

export const DeprecationBody = z.strictObject({
  deprecated: z.boolean(),
  message: z.string().min(1).max(1000).optional(),
  supersededByVersion: SemVer.optional(),
});
export const ClassificationBody = z.strictObject({
  category: z.enum(CATEGORIES).optional(),
  tags: z.array(z.enum(TAGS)).max(TAGS.length).optional(),
});

/** The registrar's path segments: refused here when they could leave the catalog's paths. */
const Segment = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[A-Za-z0-9._~-]+$/, 'must be URL-safe characters (A-Z a-z 0-9 . _ ~ -)');
export const IdParams = z.object({ id: Segment });
export const VersionParams = z.object({ id: Segment, version: SemVer });
export const FormatParams = z.object({ id: Segment, version: SemVer, format: z.enum(SCHEMA_FORMATS) });
export const ListQuery = z.strictObject({
  attestationId: AttestationId.optional().describe('short id or reserved URL'),
  version: SemVer.optional(),
});

// Records are the registrar's, passed on as they come: the members we rely on are checked (a record
// without them is a 502), further members are kept.
const MetadataSchemaRecord = z
  .looseObject({
    formatIdentifier: z.string(),
    uri: z.string().optional(),
    schemaContent: JsonObject.optional(),
    meta: JsonObject.optional(),
  })
  .meta({ id: 'MetadataSchema' });
export const SchemaMetadataRecordSchema = z
  .looseObject({
    id: z.string(),
    version: z.string(),
    rulebookURI: z.string().optional(),
    rulebookIntegrity: z.string().optional(),
    attestationLoS: z.string(),
    bindingType: z.string(),
    supportedFormats: z.array(z.string()).optional(),
    schemaURIs: z.array(MetadataSchemaRecord),
    trustedAuthorities: z.array(JsonObject),
    category: z.string().nullable().optional(),
    tags: z.array(z.string()).nullable().optional(),
    signedJwt: z.string(),
    issuer: z.string().nullable().optional(),
    signerCertificateSerial: z.string().nullable().optional(),
    signerCertificate: JsonObject.nullable().optional(),
    issuedAt: z.string().optional(),
    createdAt: z.string().optional(),
    updatedAt: z.string().optional(),
    deprecated: z.boolean(),
    deprecationMessage: z.string().nullable().optional(),
    supersededByVersion: z.string().nullable().optional(),
    deprecatedAt: z.string().nullable().optional(),
  })
  .describe("the registrar's catalog record, as it answered it")
  .meta({ id: 'SchemaMetadata' });
export type SchemaMetadataRecord = z.infer<typeof SchemaMetadataRecordSchema>;

const VocabularyEntry = z.looseObject({
  code: z.string(),
  label: z.string(),
  status: z.string().describe('active or deprecated'),
  replacedBy: z.string().nullable().optional(),
});
export const VocabulariesSchema = z
  .looseObject({ version: z.string(), categories: z.array(VocabularyEntry), tags: z.array(VocabularyEntry) })
  .meta({ id: 'SchemaMetadataVocabularies' });

/** The payload the service signs: what TS11 puts in an attestation-schema+jwt (iat is added at signing). */
export const SchemaMetaPayloadSchema = z
  .object({
    id: z.string().optional().describe('the reserved attestation id; absent until publication reserves one'),
    version: z.string(),
    rulebookURI: z.string().optional(),
    rulebookIntegrity: z.string().optional(),
    attestationLoS: z.string(),
    bindingType: z.string(),
    schemaURIs: z.array(
      z.object({
        formatIdentifier: z.enum(SCHEMA_FORMATS),
        uri: z.string().optional(),
        schemaContent: JsonObject.optional(),
        integrity: z.string().optional(),
        meta: JsonObject,
      }),
    ),
    trustedAuthorities: z.array(JsonObject),
  })
  .meta({ id: 'SchemaMetaPayload' });
export type SchemaMetaPayload = z.infer<typeof SchemaMetaPayloadSchema>;

export const ResolveUrlBody = z.strictObject({
  schemaMetadataUrl: z
    .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
    .max(2048)
    .describe('fetched by the service (outbound address policy applies); the JSON answered must hold signedJwt'),
});
export const ResolveJwtBody = z.strictObject({
  signedJwt: z.string().min(1).max(200_000).describe(`compact JWS, typ ${SCHEMA_METADATA_JWT_TYPE}, signed by the leaf of its x5c`),
});

const ClaimPath = z.array(z.union([z.string(), z.number().int(), z.null()]));
export const ResolvedSchemaMetadataSchema = z
  .object({
    id: z.string(),
    version: z.string(),
    attestationLoS: z.string(),
    bindingType: z.string(),
    rulebookURI: z.string().nullable(),
    rulebookIntegrity: z.string().nullable(),
    issuedAt: z.string().nullable(),
    supportedFormats: z.array(z.enum(SCHEMA_FORMATS)),
    trustedAuthorities: z.array(JsonObject),
    signer: z
      .object({
        subject: z.string(),
        issuer: z.string(),
        serialNumber: z.string(),
        notBefore: z.string(),
        notAfter: z.string(),
        trusted: z
          .boolean()
          .nullable()
          .describe(
            "true: the x5c chain leads to a certificate of the tenant's trust lists; false: it does not; null: the tenant has no trust lists",
          ),
      })
      .describe('the leaf certificate of x5c, which signed the metadata'),
    credentials: z
      .array(
        z.object({
          format: z.enum(SCHEMA_FORMATS),
          vct: z.string().optional(),
          doctype: z.string().optional(),
          claims: z.array(z.object({ path: ClaimPath, mandatory: z.boolean() })),
        }),
      )
      .describe('per format: its type and the claims its JSON Schema names'),
    dcql_query: z.object({ credentials: z.array(JsonObject) }).describe('ready for dcql_query of a presentation configuration'),
  })
  .meta({ id: 'ResolvedSchemaMetadata' });
export type ResolvedSchemaMetadata = z.infer<typeof ResolvedSchemaMetadataSchema>;
