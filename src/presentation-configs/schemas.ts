// The presentation configuration as the API accepts and returns it: what a verifier asks wallets for
// (a DCQL query) and how a request made from it behaves. The zod schemas here are the validation,
// the TypeScript types and the OpenAPI document at once; what needs the DCQL library is in checks.ts.
import type { DcqlQuery } from 'dcql';
import { z } from 'zod';
import { FORMAT_IDS } from '../formats/index.js';
import { type AuthInput, AuthInputSchema, type AuthView, AuthViewSchema } from '../http-endpoints/schemas.js';
import { webUrl } from '../platform/http/web-urls.js';

/** The credential formats this service verifies; a DCQL credential query must ask for one of them. */
export const SUPPORTED_FORMATS = FORMAT_IDS;
/** Seconds a request created from a configuration stays valid, unless the configuration says otherwise. */
export const DEFAULT_LIFETIME = 300;
const MAX_LIFETIME = 31_536_000;
/** Replaced by the session id in redirectUri. */
export const SESSION_PLACEHOLDER = '{sessionId}';

const Id = z.string().regex(/^[A-Za-z0-9._~-]{1,64}$/, 'must be 1-64 URL-safe characters');
const Reference = z.string().min(1).max(256);
const CredentialIds = z.array(z.string().min(1).max(256)).min(1).max(100).describe('ids of credential queries in dcql_query');

const DcqlQuerySchema = z
  .record(z.string(), z.unknown())
  .describe(
    'OpenID4VP 1.0 DCQL query, checked with the dcql library (an invalid query is answered 400 naming its offending part, e.g. ' +
      `body.dcql_query.credentials.0.format); every credential query asks for one of: ${SUPPORTED_FORMATS.join(', ')}. ` +
      'No id, claim id or claim path segment is __proto__, constructor or prototype. Stored as given, and sent in the request object unchanged. ' +
      'trusted_authorities of a credential query (section 6.1.1.1) are enforced on what is presented: `aki` (a certificate of the ' +
      "issuer's x5c or x5chain has one of the base64url AuthorityKeyIdentifiers), `etsi_tl` (a certificate of that chain is listed, or " +
      'issued by one listed, in the trusted list at the URL: ETSI TS 119 612 XML or a TS 119 602 LoTE, fetched through the outbound ' +
      'client) or `openid_federation` (the issuer resolves to that trust anchor); a credential that matches none is rejected',
  )
  .meta({
    id: 'DcqlQuery',
    examples: [
      {
        credentials: [
          {
            id: 'pid',
            format: 'dc+sd-jwt',
            meta: { vct_values: ['urn:eudi:pid:1'] },
            trusted_authorities: [{ type: 'aki', values: ['s9tIpPmhxdiuNkHMEWNpYim8S8Y'] }],
            claims: [{ path: ['given_name'] }, { path: ['age_over_18'], values: [true] }],
          },
        ],
      },
    ],
  });

const TransactionDataSchema = z
  .looseObject({
    type: z.string().min(1).max(256).describe('the transaction data type'),
    credential_ids: CredentialIds.describe('ids of the credential queries in dcql_query that this transaction data is bound to'),
  })
  .describe('OpenID4VP transaction data; further members (transaction_data_hashes_alg, type-specific ones) are kept as given')
  .meta({ id: 'TransactionData' });

const AttachmentSchema = z
  .strictObject({
    format: z.string().min(1).max(256).describe('format of the attestation in data, e.g. registration_cert'),
    data: z.record(z.string(), z.unknown()),
    credential_ids: CredentialIds.optional().describe('ids of credential queries in dcql_query it applies to; absent: all'),
  })
  .describe('an attestation about the verifier sent along with the request (OpenID4VP verifier_info)')
  .meta({ id: 'Attachment' });

const CompactJwt = z
  .string()
  .max(16_384)
  .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'must be a compact JWT');

/** What the registrar's POST /registration-certificates takes beside rpId and credentials, which the service sets. */
const RegistrationCertBody = z
  .looseObject({
    privacy_policy: z
      .url({ protocol: /^https?$/ })
      .max(2000)
      .optional()
      .describe("URL of the relying party's privacy policy"),
    support_uri: z.string().min(1).max(500).optional().describe('e-mail address, phone number or URL'),
    purpose: z
      .array(z.strictObject({ lang: z.string().min(1).max(10), content: z.string().min(1).max(500) }))
      .min(1)
      .max(20)
      .optional()
      .describe('intended use; default: the description of the configuration, in English'),
    intermediary: z.string().min(1).max(200).optional(),
  })
  .describe(
    "merged over the registrar configuration's registrationCertificateDefaults; privacy_policy and support_uri are required after merging. " +
      'rpId and credentials are set by the service (credentials: one {format, meta, claims: [{path}]} per credential query of dcql_query); ' +
      'other members are passed on to the registrar',
  );

const RegistrationCertRequestSchema = z
  .looseObject({
    jwt: CompactJwt.optional().describe(
      'a registration certificate obtained elsewhere, sent as given (no registrar call); it must not be expired, and its credentials ' +
        'claim must register every credential query of dcql_query (format, meta, claim paths), or a wallet would refuse the request',
    ),
    id: z.string().min(1).max(256).optional().describe("an active registration certificate of the tenant's relying party at the registrar"),
    body: RegistrationCertBody.optional(),
  })
  .describe(
    'Tried in order: jwt; id (when the registrar lists no active certificate of that id, body is used if given); body (also when none of ' +
      'the three is given: the defaults alone). The certificate obtained is cached in registrationCertCache until it expires or the request ' +
      'or dcql_query changes. Other members are stored as given and not used',
  )
  .meta({ id: 'RegistrationCertificateRequest' });

/** Where the wallet sends the user; one definition for configurations and the offers that override them. */
export const RedirectUri = webUrl({ placeholder: SESSION_PLACEHOLDER }).describe(
  `where the wallet sends the user after a successful presentation (same-device flow): https (http outside production); ${SESSION_PLACEHOLDER} is replaced by the session id. ` +
    'The wallet adds a single-use response_code; the result of the session is then released only by POST /api/verifier/result with it',
);

const WebhookUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
  .max(2048)
  .refine((url) => !/^[a-z]+:\/\/[^/?#]*@/i.test(url), 'must not carry credentials; put them in auth');

const WebhookConfigInput = z
  .strictObject({
    url: WebhookUrl,
    auth: AuthInputSchema.optional().describe(
      'default none. A header value of **** (as answered) keeps the stored value of the same header',
    ),
  })
  .describe('deprecated: use webhookEndpointId. Receives the claims of a completed presentation; the auth is stored encrypted');

export const WebhookConfigSchema = z
  .object({ url: z.string(), auth: AuthViewSchema })
  .describe('deprecated inline webhook; a header value is always answered as ****')
  .meta({ id: 'WebhookConfig' });

const Settings = {
  description: z.string().max(1000).nullable().optional(),
  lifeTime: z
    .number()
    .int()
    .positive()
    .max(MAX_LIFETIME)
    .nullable()
    .optional()
    .describe(`seconds a request created from the configuration stays valid; default ${DEFAULT_LIFETIME} (null resets to it)`),
  transaction_data: z
    .array(TransactionDataSchema)
    .max(50)
    .optional()
    .describe('sent with every request made from the configuration; default none ([])'),
  registration_cert: RegistrationCertRequestSchema.nullable()
    .optional()
    .describe('a registration certificate to send with every request (verifier_info); changing it clears registrationCertCache'),
  registrationCertCache: z.unknown().optional().describe('read-only: server managed; a value given here is ignored'),
  webhookEndpointId: Reference.nullable().optional().describe('a webhook endpoint of the tenant that receives the claims'),
  webhook: WebhookConfigInput.nullable().optional().meta({ deprecated: true }),
  attached: z.array(AttachmentSchema).max(20).nullable().optional(),
  redirectUri: RedirectUri.nullable().optional(),
  accessKeyChainId: Reference.nullable()
    .optional()
    .describe("an access key chain of the tenant that signs the requests; absent or null: the tenant's default access key chain"),
};

export const SaveBody = z.strictObject({ id: Id, dcql_query: DcqlQuerySchema, ...Settings }).meta({
  examples: [
    {
      id: 'adult',
      dcql_query: {
        credentials: [
          {
            id: 'pid',
            format: 'dc+sd-jwt',
            meta: { vct_values: ['urn:eudi:pid:1'] },
            claims: [{ path: ['given_name'] }, { path: ['age_over_18'], values: [true] }],
          },
        ],
      },
    },
  ],
});

export const UpdateBody = z.strictObject({
  id: Id.optional().describe('accepted only when equal to the id in the path'),
  dcql_query: DcqlQuerySchema.optional().describe('replaces the stored query as a whole'),
  ...Settings,
});

const RegistrationCertCacheSchema = z
  .looseObject({
    jwt: z.string(),
    id: z.string().nullable().optional().describe("the registrar's id of the certificate"),
    issuedAt: z.string().nullable().optional(),
    expiresAt: z.string().nullable().optional().describe('from the exp claim; the certificate is obtained again shortly before'),
    obtainedAt: z.string().optional(),
    fingerprint: z
      .string()
      .optional()
      .describe('of registration_cert and dcql_query as the certificate was obtained for; after a change it is obtained again'),
  })
  .meta({ id: 'RegistrationCertificateCache' });

export const PresentationConfigurationSchema = z
  .object({
    id: z.string(),
    tenantId: z.string(),
    description: z.string().nullable(),
    lifeTime: z.number().describe('seconds a request created from the configuration stays valid'),
    dcql_query: DcqlQuerySchema,
    transaction_data: z.array(TransactionDataSchema),
    registration_cert: RegistrationCertRequestSchema.nullable(),
    registrationCertCache: RegistrationCertCacheSchema.nullable().describe(
      'read-only: the registration certificate obtained from the registrar; null until there is one',
    ),
    webhookEndpointId: z.string().nullable(),
    webhook: WebhookConfigSchema.nullable().meta({ deprecated: true }),
    attached: z.array(AttachmentSchema).nullable(),
    redirectUri: z.string().nullable(),
    accessKeyChainId: z.string().nullable().describe("null: the tenant's default access key chain"),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'PresentationConfiguration' });

const WebhookSigningSecret = z
  .string()
  .describe(
    'the Standard Webhooks signing secret (whsec_ and base64) of the inline webhook: shown this once, never again; verify the webhook-signature header with it',
  );

/** A write's answer: webhookSigningSecret only when the write gave the inline webhook a new secret. */
export const SavedPresentationConfigurationSchema = PresentationConfigurationSchema.extend({
  webhookSigningSecret: WebhookSigningSecret.optional().describe(
    'present when this write gave the inline `webhook` a new signing secret (a new webhook, or a new URL); shown this once, never in GET or the list',
  ),
}).meta({ id: 'SavedPresentationConfiguration' });

export const RotatedWebhookSigningSecretSchema = z
  .object({ webhookSigningSecret: WebhookSigningSecret })
  .meta({ id: 'RotatedPresentationWebhookSecret' });

export type TransactionData = z.infer<typeof TransactionDataSchema>;
export type RegistrationCertRequest = z.infer<typeof RegistrationCertRequestSchema>;
/** What the registrar feature writes into registrationCertCache. */
export interface RegistrationCertCache {
  jwt: string;
  id: string | null;
  issuedAt: string | null;
  expiresAt: string | null;
  obtainedAt: string;
  fingerprint: string;
}
export type SavePresentationConfiguration = z.infer<typeof SaveBody>;
export type UpdatePresentationConfiguration = z.infer<typeof UpdateBody>;
/** The deprecated inline webhook as stored (sealed), with its secret. */
export interface WebhookConfig {
  url: string;
  auth: AuthInput;
}
export type PresentationConfiguration = Omit<z.infer<typeof PresentationConfigurationSchema>, 'dcql_query' | 'webhook'> & {
  /** Valid for the dcql library (DcqlQuery.parse accepts it), with supported formats only. */
  dcql_query: DcqlQuery.Input;
  webhook: { url: string; auth: AuthView } | null;
};
/** What presentation_configs.document holds: the settings without id, references, webhook and timestamps. */
export type PresentationDocument = Pick<
  PresentationConfiguration,
  'description' | 'lifeTime' | 'dcql_query' | 'transaction_data' | 'registration_cert' | 'attached' | 'redirectUri'
>;
