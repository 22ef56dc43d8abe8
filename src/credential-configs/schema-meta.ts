// The schemaMeta of a credential configuration: the input for publishing its schema metadata (EUDI
// TS11 catalogue of attestations; experimental) at the registrar, which schema-metadata/ sends. The
// enumerations are those of registrar-api.md.
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
