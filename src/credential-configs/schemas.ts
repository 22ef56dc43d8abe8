// The credential configuration as the API accepts and returns it (field model of major version 5).
// The zod schemas here are the validation, the TypeScript types and the OpenAPI document at once.
import { z } from 'zod';
import { FORMAT_IDS, type FormatId } from '../formats/index.js';
import { webUrl } from '../platform/http/web-urls.js';
import { isPrototypeMemberName, PROTOTYPE_MEMBER_RULE } from '../platform/json.js';
import { SchemaMetaConfigSchema } from './schema-meta.js';

export const FORMATS = FORMAT_IDS;
export type CredentialFormat = FormatId;

/** Claim value types of a field, and how each is checked (see fields.ts). */
export const FIELD_TYPES = ['string', 'number', 'integer', 'boolean', 'date', 'datetime', 'image', 'object', 'array'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** Who signs the status lists that carry a configuration's credentials (docs/api/status-lists.md). */
export const StatusListSignerSchema = z.enum(['statusList', 'issuer']);
export type StatusListSigner = z.infer<typeof StatusListSignerSchema>;

const FIELD_TYPE_DOC = [
  'string, number, integer, boolean, object, array: the JSON types;',
  'date: a full date YYYY-MM-DD; datetime: an RFC 3339 date-time (both JSON strings);',
  'image: a JSON string holding a data: URL with base64 content (data:image/jpeg;base64,...)',
].join(' ');

/** A scope token (RFC 6749 section 3.3): one or more printable ASCII characters, never a space, " or \\. */
export const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

const Id = z.string().regex(/^[A-Za-z0-9._~-]{1,64}$/, 'must be 1-64 URL-safe characters');
const Reference = z.string().min(1).max(256);

/** A key that version 4 had: its presence is refused with the name of what replaced it. */
const removed = (replacement: string) => {
  const message = `removed in version 5: ${replacement}`;
  return z.never({ error: message }).optional().describe(`${message}. Requests carrying it are refused.`);
};

const PathSegment = z.union([
  z
    .string()
    .min(1)
    .max(256)
    // Claim names become member names of the issued claims and of the schema derived from the fields.
    .refine((key) => !isPrototypeMemberName(key), PROTOTYPE_MEMBER_RULE)
    .describe('an object key (not __proto__, constructor or prototype)'),
  z.number().int().min(0).describe('an array index'),
  z.null().describe('every element of an array'),
]);

const FieldDisplaySchema = z
  .strictObject({
    locale: z.string().min(1).max(35).optional().describe('BCP 47 language tag'),
    name: z.string().min(1).max(200),
    description: z.string().max(1000).optional(),
  })
  .meta({ id: 'FieldDisplay' });

const ConstraintsSchema = z
  .strictObject({
    minLength: z.number().int().min(0).optional().describe('string: minimum length in characters'),
    maxLength: z.number().int().min(0).optional().describe('string, image: maximum length in characters'),
    pattern: z
      .string()
      .min(1)
      .max(1000)
      .optional()
      .describe(
        'string, date, datetime: a regular expression, unanchored as in JSON Schema, matched in linear time (RE2 syntax; ' +
          'ECMAScript escapes such as \\uXXXX are accepted). Backreferences and lookaround are refused',
      ),
    minimum: z.number().optional().describe('number, integer'),
    maximum: z.number().optional().describe('number, integer'),
    exclusiveMinimum: z.number().optional().describe('number, integer'),
    exclusiveMaximum: z.number().optional().describe('number, integer'),
    minItems: z.number().int().min(0).optional().describe('array'),
    maxItems: z.number().int().min(0).optional().describe('array'),
    enum: z.array(z.unknown()).min(1).max(1000).optional().describe('every type but object, array and image: the allowed values'),
  })
  .describe('JSON Schema keywords that restrict the value; each applies to the types named in its description')
  .meta({ id: 'FieldConstraints' });

export interface FieldDefinition {
  path: (string | number | null)[];
  type: FieldType;
  defaultValue?: unknown;
  mandatory?: boolean;
  disclosable?: boolean;
  namespace?: string;
  display?: z.infer<typeof FieldDisplaySchema>[];
  constraints?: z.infer<typeof ConstraintsSchema>;
  children?: FieldDefinition[] | null;
}

export const FieldDefinitionSchema: z.ZodType<FieldDefinition> = z
  .strictObject({
    path: z
      .array(PathSegment)
      .min(1)
      .max(32)
      .describe(
        "claim path: strings are object keys, integers array indexes, null every element. A top-level field's path starts at the " +
          "credential's claims (for mso_mdoc: at the data element identifier inside its namespace); a child's path continues its parent's",
      ),
    type: z.enum(FIELD_TYPES).describe(FIELD_TYPE_DOC),
    defaultValue: z
      .unknown()
      .optional()
      .describe('issued when no other value is supplied; null means no default. Not allowed on a path containing null'),
    mandatory: z
      .boolean()
      .optional()
      .describe(
        'true: the claim is always issued where its parent field is (a top-level field: always), together with the objects its own path passes through; default optional',
      ),
    disclosable: z.boolean().optional().describe('SD-JWT VC: selectively disclosable (mdoc elements always are)'),
    namespace: z
      .string()
      .min(1)
      .max(256)
      .refine((name) => !isPrototypeMemberName(name), PROTOTYPE_MEMBER_RULE)
      .optional()
      .describe('mso_mdoc only, and required there on every top-level field; children inherit it'),
    display: z.array(FieldDisplaySchema).max(50).optional(),
    constraints: ConstraintsSchema.optional(),
    get children() {
      return z
        .array(FieldDefinitionSchema)
        .max(500)
        .nullable()
        .optional()
        .describe('nested fields of an object or array field; their paths are relative to this field');
    },
  })
  .meta({ id: 'FieldDefinition' });

const ImageSchema = z.strictObject({
  uri: webUrl({ max: 8192 }).describe('where wallets fetch the image: https (http outside production)'),
  alt_text: z.string().max(500).optional(),
});

const CredentialDisplaySchema = z
  .strictObject({
    name: z.string().min(1).max(200),
    description: z.string().max(1000).optional(),
    locale: z.string().min(1).max(35).optional(),
    background_color: z.string().max(64).optional(),
    text_color: z.string().max(64).optional(),
    background_image: ImageSchema.omit({ alt_text: true }).optional(),
    logo: ImageSchema.optional(),
  })
  .meta({ id: 'CredentialDisplay' });

const KeyAttestationsRequiredSchema = z
  .strictObject({
    key_storage: z.array(z.string().min(1)).optional().describe('accepted attack potential resistance values, e.g. iso_18045_high'),
    user_authentication: z.array(z.string().min(1)).optional(),
  })
  .describe('OpenID4VCI key_attestations_required: proofs must carry a key attestation; null: not required')
  .meta({ id: 'KeyAttestationsRequired' });

const CredentialConfigFields = {
  format: z
    .enum(FORMATS)
    .describe(
      "dc+sd-jwt: SD-JWT VC; mso_mdoc: ISO 18013-5 mdoc; jwt_vc_json: W3C VCDM 2.0 credential secured with JOSE (typ vc+jwt), the fields in credentialSubject, whose id is the holder's did:jwk or did:key",
    ),
  display: z.array(CredentialDisplaySchema).max(50).optional().describe('how wallets show the credential, per locale'),
  scope: z
    .string()
    .max(200)
    .regex(SCOPE_TOKEN, 'must be one OAuth scope token: printable ASCII without space, " or \\')
    .optional()
    .describe(
      'the OAuth scope value that requests this credential at the authorization server (OpenID4VCI 1.0 section 5.1.2; HAIP 1.0 ' +
        'section 4.1 asks for one on every configuration): default the configuration id; unique in the tenant. The issuer metadata ' +
        'always lists it, and a pushed authorization request naming it in scope asks for this configuration',
    ),
  docType: z.string().min(1).max(256).optional().describe('mso_mdoc only, and required there: the ISO mdoc document type'),
  vcIssuer: z
    .enum(['x5c', 'did:web'])
    .optional()
    .describe(
      "jwt_vc_json only: how the credential names its issuer. x5c (default): the credential issuer URL, the JWT header carrying the certificate chain; did:web: the tenant's did:web (did:web:{host}:issuers:{tenant}, its document at /issuers/{tenant}/did.json), the header's kid naming a key of that document",
    ),
  keyAttestationsRequired: KeyAttestationsRequiredSchema.nullable().optional(),
};

/** What the issuer metadata publishes for the configuration. */
export const CredentialConfigSchema = z.strictObject(CredentialConfigFields).meta({ id: 'CredentialConfig' });
const CredentialConfigInput = z.strictObject({
  ...CredentialConfigFields,
  namespace: removed('use fields[].namespace'),
  claimsByNamespace: removed('use fields[].namespace'),
  claimsMetadata: removed('use fields[].display and fields[].mandatory'),
});

const VctDocumentSchema = z
  .looseObject({
    name: z.string().optional(),
    description: z.string().optional(),
    display: z.array(z.record(z.string(), z.unknown())).optional(),
    extends: z.string().optional(),
    'extends#integrity': z.string().optional(),
    schema_uri: webUrl().optional().describe('where wallets fetch the JSON Schema: https (http outside production)'),
    'schema_uri#integrity': z.string().optional(),
  })
  .describe('SD-JWT VC type metadata that the service hosts for the configuration; further members are kept as given')
  .meta({ id: 'VctDocument' });

/** A public EC key as a JWK; a private member (d) is refused, so that a private key is never stored by mistake. */
const PublicEcJwkSchema = z
  .looseObject({
    kty: z.literal('EC'),
    crv: z.enum(['P-256', 'P-384', 'P-521']),
    x: z.string().min(1).max(200),
    y: z.string().min(1).max(200),
    d: z.undefined({ error: 'must be a public key: remove d' }).optional(),
  })
  .meta({ id: 'PublicEcJwk' });

const IaeLabel = z.string().min(1).max(200).optional().describe('a name for the step, shown in session logs');

const IaePresentationActionSchema = z
  .strictObject({
    type: z.literal('openid4vp-presentation'),
    presentationConfigId: Reference.describe(
      "a presentation configuration of the tenant: its DCQL query (dc+sd-jwt credentials), access key chain, registration certificate and transaction data make the OpenID4VP request; the presentation is verified like any other (issuer trust from the tenant's trust lists, status, key binding, DCQL)",
    ),
    responseMode: z
      .enum(['iae_post.jwt', 'iae_post'])
      .optional()
      .describe(
        'default iae_post.jwt: the wallet encrypts its response (ECDH-ES, A128GCM or A256GCM) to a key of the request, as HAIP asks of presentations; iae_post: plain, over TLS to the endpoint. At the authorization challenge endpoint these are sent as ia_post.jwt and ia_post',
      ),
    label: IaeLabel,
  })
  .describe(
    "the wallet presents credentials to the interactive authorization endpoint (interaction type openid4vp_presentation) or the authorization challenge endpoint (urn:openid:dcp:ia:openid4vp_presentation); the verified disclosed claims are laid over the credential's field defaults",
  )
  .meta({ id: 'IaePresentationAction' });

const IaeWebActionSchema = z
  .strictObject({
    type: z.literal('redirect-to-web'),
    url: webUrl().describe(
      "the integrator's page the user's browser is sent to, with query parameters web_session (single use), callback_uri and session (the issuance session id): https (http outside production)",
    ),
    callbackKey: PublicEcJwkSchema.describe(
      "the integrator's public key (EC P-256/P-384/P-521): the page ends the step by posting result=<JWS> to callback_uri, a JWS (typ iae-web-result+jwt, ES256/ES384/ES512) with aud = callback_uri, web_session, iat, exp (at most 10 minutes after iat) and optional claims (an object laid over the field defaults) or error",
    ),
    label: IaeLabel,
  })
  .describe(
    'the user completes a web page of the integrator (interaction type redirect_to_web); the step ends only with a result signed by callbackKey',
  )
  .meta({ id: 'IaeWebAction' });

export const IaeActionSchema = z
  .discriminatedUnion('type', [IaePresentationActionSchema, IaeWebActionSchema])
  .describe(
    'a step of interactive authorization (OpenID4VCI interactive authorization endpoint), run in order before the authorization code',
  )
  .meta({ id: 'IaeAction' });
export type IaeAction = z.infer<typeof IaeActionSchema>;

const policy = <P extends string>(name: P, doc: string) => z.looseObject({ policy: z.literal(name) }).describe(doc);
const EmbeddedDisclosurePolicySchema = z
  .discriminatedUnion('policy', [
    policy('none', 'no restriction'),
    policy('allow-list', 'only the verifiers listed (members kept as given)'),
    policy('root-of-trust', 'only verifiers under the trust anchors given (members kept as given)'),
    policy('attestation-based', 'only verifiers presenting the attestations given (members kept as given)'),
  ])
  .describe('which verifiers may receive the credential, for wallets to enforce; stored as given')
  .meta({ id: 'EmbeddedDisclosurePolicy' });

const Settings = {
  description: z.string().max(1000).nullable().optional(),
  vct: z
    .union([z.string().min(1).max(2048).describe('a type URI'), VctDocumentSchema])
    .nullable()
    .optional()
    .describe(
      "SD-JWT VC type: a URI, or a type metadata document the service hosts. jwt_vc_json: the credential type after VerifiableCredential (a URI; default the configuration's own URL), in credential_definition.type and DCQL type_values",
    ),
  iaeActions: z
    .array(IaeActionSchema)
    .max(20)
    .nullable()
    .optional()
    .describe(
      'steps of interactive authorization, in order: a wallet must complete them at the interactive authorization endpoint before it gets an authorization code for this configuration (the plain authorization endpoint refuses it); null: none',
    ),
  schemaMeta: SchemaMetaConfigSchema.nullable()
    .optional()
    .describe(
      'input for schema metadata publication (experimental); its id is set when POST /api/schema-metadata/publish names this configuration',
    ),
  embeddedDisclosurePolicy: EmbeddedDisclosurePolicySchema.nullable().optional(),
  attributeProviderId: Reference.nullable().optional().describe('an attribute provider of the tenant that supplies the claims'),
  webhookEndpointId: Reference.nullable().optional().describe('a webhook endpoint of the tenant that receives notifications'),
  keyBinding: z.boolean().optional().describe("default true: the credential is bound to the wallet's key"),
  keyChainId: Reference.nullable()
    .optional()
    .describe("an attestation key chain of the tenant that signs; absent or null: the tenant's default attestation key chain"),
  statusManagement: z.boolean().optional().describe('default false: true gives each credential an entry in a status list'),
  statusListSigner: StatusListSignerSchema.nullable()
    .optional()
    .describe(
      'which key signs the status lists of its credentials: statusList (default; null resets to it), a status-list key chain; issuer, the key chain that signs the credentials, for wallets that check a status list with the issuer key only',
    ),
  sdJwtTrustFormat: z
    .enum(['x5c', 'federation'])
    .nullable()
    .optional()
    .describe('default x5c (null resets to it): x5c carries the certificate chain, federation relies on the iss claim'),
  lifeTime: z.number().int().positive().nullable().optional().describe('validity of issued credentials in seconds; null: no expiry'),
};
const Removed = {
  claims: removed('use fields[].defaultValue'),
  disclosureFrame: removed('use fields[].disclosable'),
  schema: removed('the JSON schema is derived from fields'),
};

export const CreateBody = z
  .strictObject({
    id: Id,
    config: CredentialConfigInput,
    fields: z.array(FieldDefinitionSchema).max(500),
    ...Settings,
    ...Removed,
  })
  .meta({
    // The explorer would otherwise build its example from the schema, removed v4 members included.
    examples: [
      {
        id: 'pid',
        vct: 'urn:eudi:pid:1',
        config: { format: 'dc+sd-jwt', display: [{ name: 'Person ID', locale: 'en' }] },
        fields: [
          { path: ['given_name'], type: 'string', mandatory: true },
          { path: ['family_name'], type: 'string', mandatory: true },
          { path: ['birthdate'], type: 'date' },
          { path: ['age_over_18'], type: 'boolean' },
        ],
      },
    ],
  });

export const UpdateBody = z.strictObject({
  id: Id.optional().describe('accepted only when equal to the id in the path'),
  config: CredentialConfigInput.optional().describe('replaces the stored config as a whole'),
  fields: z.array(FieldDefinitionSchema).max(500).optional().describe('replaces the stored fields as a whole'),
  ...Settings,
  ...Removed,
});

export const CredentialConfigurationSchema = z
  .object({
    id: z.string(),
    tenantId: z.string(),
    description: z.string().nullable(),
    config: CredentialConfigSchema,
    fields: z.array(FieldDefinitionSchema),
    vct: z.union([z.string(), VctDocumentSchema]).nullable(),
    iaeActions: z.array(IaeActionSchema).nullable(),
    schemaMeta: z.record(z.string(), z.unknown()).nullable(),
    embeddedDisclosurePolicy: EmbeddedDisclosurePolicySchema.nullable(),
    attributeProviderId: z.string().nullable(),
    webhookEndpointId: z.string().nullable(),
    keyBinding: z.boolean(),
    keyChainId: z.string().nullable().describe("null: the tenant's default attestation key chain"),
    statusManagement: z.boolean(),
    statusListSigner: StatusListSignerSchema,
    sdJwtTrustFormat: z.enum(['x5c', 'federation']),
    lifeTime: z.number().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'CredentialConfiguration' });

export type CredentialConfig = z.infer<typeof CredentialConfigSchema>;
export type CredentialConfiguration = z.infer<typeof CredentialConfigurationSchema>;
export type CreateCredentialConfiguration = z.infer<typeof CreateBody>;
export type UpdateCredentialConfiguration = z.infer<typeof UpdateBody>;
/** What is stored in credential_configs.document: the configuration without id, tenant and timestamps. */
export type ConfigurationDocument = Omit<CredentialConfiguration, 'id' | 'tenantId' | 'createdAt' | 'updatedAt'>;
