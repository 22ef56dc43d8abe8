// Schema metadata (EUDI TS11 catalogue of attestations; the specification is experimental): what a
// tenant submits for publication (SchemaMetaConfig), the registrar's records as we pass them on, and
// the bodies of the verifier's resolve endpoints. The enumerations are those of registrar-api.md.
// This module imports nothing of the other features: credential configurations embed SchemaMetaConfig.
import { z } from 'zod';
import { webUrl } from '../platform/http/web-urls.js';

export const SCHEMA_FORMATS = ['dc+sd-jwt', 'mso_mdoc'] as const;
export type SchemaFormat = (typeof SCHEMA_FORMATS)[number];
export const ATTESTATION_LOS = ['iso_18045_high', 'iso_18045_moderate', 'iso_18045_enhanced-basic', 'iso_18045_basic'] as const;
export const BINDING_TYPES = ['claim', 'key', 'biometric', 'none'] as const;
export const CATEGORIES = ['identity', 'health', 'finance', 'education', 'mobility', 'employment', 'other'] as const;
export const TAGS = [
  'pid',
  'eudi',
  'kyc',
  'aml',
  'age-verification',
  'residency',
  'membership',
  'education',
  'employment',
  'mobility',
] as const;
/** The JWS type of signed schema metadata. */
export const SCHEMA_METADATA_JWT_TYPE = 'attestation-schema+jwt';

// Semantic Versioning 2.0.0, as the registrar keys versions by it.
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;
export const SemVer = z.string().max(64).regex(SEMVER, 'must be a semantic version such as 1.0.0');
const Sri = z
  .string()
  .max(200)
  .regex(/^sha(256|384|512)-[A-Za-z0-9+/]+={0,2}$/, 'must be a subresource integrity hash such as sha256-<base64>');
/** A catalog id: the registrar's short id, or the reserved URL whose last path segment it is. */
export const AttestationId = z.string().min(1).max(2048);
const JsonObject = z.record(z.string(), z.unknown());

const SchemaUriInput = z
  .strictObject({
    formatIdentifier: z.enum(SCHEMA_FORMATS),
    uri: webUrl().optional().describe('where the JSON Schema of the claims is published'),
    schemaContent: JsonObject.optional().describe('the JSON Schema inline, instead of uri'),
    integrity: Sri.optional().describe('subresource integrity of the document at uri'),
    meta: JsonObject.optional().describe(
      'dc+sd-jwt: {vct}; mso_mdoc: {doctype_value}. Absent: taken from the credential configuration named by credentialConfigId',
    ),
  })
  .refine((entry) => entry.uri !== undefined || entry.schemaContent !== undefined, {
    message: 'needs uri or schemaContent',
    path: ['uri'],
  })
  .meta({ id: 'SchemaMetaSchemaUri' });

const TrustedAuthorityInput = z
  .strictObject({
    frameworkType: z.literal('etsi_tl').optional().describe('default etsi_tl'),
    value: webUrl().describe('URL of the trust list (ETSI TS 119 602 list of trusted entities)'),
    isLoTE: z.boolean().optional(),
    verificationMethod: JsonObject.optional().describe('how the list is verified, e.g. {type: JsonWebKey2020, publicKeyJwk}'),
  })
  .meta({ id: 'SchemaMetaTrustedAuthority' });

export const SchemaMetaConfigSchema = z
  .strictObject({
    id: AttestationId.optional().describe(
      'the attestation id in the catalog (the reserved URL): set by publish; required to publish a new version',
    ),
    version: SemVer.describe('semantic version of this schema metadata'),
    nameHint: z.string().min(1).max(100).optional().describe('suggestion for the id the registrar reserves'),
    rulebookURI: webUrl().optional().describe('URL of the attestation rulebook'),
    rulebookIntegrity: Sri.optional().describe('subresource integrity of the rulebook; sent as given'),
    attestationLoS: z.enum(ATTESTATION_LOS),
    bindingType: z.enum(BINDING_TYPES),
    schemaURIs: z
      .array(SchemaUriInput)
      .min(1)
      .max(10)
      .optional()
      .describe("per format, the claims' JSON Schema; absent: derived from the fields of the credential configuration (inline)"),
    trustedAuthorities: z.array(TrustedAuthorityInput).max(50).optional().describe('default none ([])'),
    category: z.enum(CATEGORIES).optional().describe('catalog attribute, set at the registrar after publication; not signed'),
    tags: z.array(z.enum(TAGS)).max(TAGS.length).optional().describe('catalog attributes, set after publication; not signed'),
  })
  .describe('input for schema metadata publication (TS11, experimental)')
  .meta({ id: 'SchemaMetaConfig' });
export type SchemaMetaConfig = z.infer<typeof SchemaMetaConfigSchema>;

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
