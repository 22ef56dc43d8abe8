// The forms of the main resources: which fields of a request body each shows, and how. Each names
// the operation whose body it fills (method and path of the OpenAPI document), and a test checks
// every field against that operation's request schema (the field exists, its options are among the
// schema's enum values), so a form cannot drift from the API. Fields a form does not show stay in the
// body as they are, and the JSON of the whole body is one click away.
// Plain data, no DOM: the check runs in Node.

export type FieldKind =
  | { kind: 'text' }
  | { kind: 'textarea' }
  /** Write-only text (a password): typed, never shown back. */
  | { kind: 'password' }
  /**
   * A whole number; min and max as the schema has them (a test checks they match). `unset`: what an
   * empty input means, shown as its placeholder; given, emptying it writes null (back to the default).
   */
  | { kind: 'integer'; min?: number; max?: number; unset?: string }
  /** `unset`: what leaving it unchecked means when the value is absent (keyBinding: default true). */
  | { kind: 'checkbox'; unset?: boolean }
  /**
   * `unset`: the label of the empty choice. Given, choosing it writes null (the API's "back to the
   * default"); absent, it removes the property.
   */
  | { kind: 'select'; options: readonly (string | number)[]; unset?: string }
  /** Checkboxes, one per option; the value is the list of those checked. */
  | { kind: 'multi'; options: readonly string[]; grantable?: boolean }
  /** A list of ids, typed separated by commas. */
  | { kind: 'list' }
  /** One id of those the page lists at run time (the tenant's configurations), as a select. */
  | { kind: 'id' }
  /** Ids of those the page lists at run time, as checkboxes; the value is the list of those checked. */
  | { kind: 'ids' }
  /** A nested value edited as JSON inside the form. */
  | { kind: 'json' }
  /**
   * A list of objects, one row of `fields` per item (their paths inside the item), with add, remove
   * and reorder; a new row starts as `empty`.
   */
  | { kind: 'objects'; item: string; fields: FormField[]; empty: Record<string, unknown> };

export type FormField = FieldKind & {
  /** The property's path in the body (`auth.type`: property type of property auth). */
  path: string;
  label: string;
  hint?: string;
  /** Shown only where it applies: when the body's value at `path` is `is` (a per-format field). */
  when?: { path: string; is: unknown };
};

export interface FormSpec {
  /** The operation whose request body the form fills. */
  operation: { method: 'post' | 'put' | 'patch'; path: string };
  fields: FormField[];
}

export const ROLE_OPTIONS = [
  'issuance:manage',
  'issuance:offer',
  'presentation:manage',
  'presentation:request',
  'clients:manage',
  'users:manage',
  'registrar:manage',
  'tenants:manage',
] as const;
const TENANT_ROLE_OPTIONS = ROLE_OPTIONS.filter((r) => r !== 'tenants:manage');
const USAGE_TYPES = ['attestation', 'access', 'statusList', 'trustList', 'encrypt'] as const;

const text = (path: string, label: string, hint?: string): FormField => ({ kind: 'text', path, label, hint });
const description: FormField = { kind: 'textarea', path: 'description', label: 'Description' };
/** What a client's create and update forms share. */
const clientFields: FormField[] = [
  { kind: 'multi', path: 'roles', label: 'Roles', options: ROLE_OPTIONS, grantable: true },
  description,
  { kind: 'list', path: 'allowedIssuanceConfigs', label: 'Allowed credential configurations', hint: 'ids, comma-separated; empty: all' },
  {
    kind: 'list',
    path: 'allowedPresentationConfigs',
    label: 'Allowed presentation configurations',
    hint: 'ids, comma-separated; empty: all',
  },
];
const registrarFields: FormField[] = [
  text('registrarUrl', 'Registrar URL', 'base URL of the registrar API'),
  text('oidcUrl', 'Identity provider URL', 'issuer URL of the realm the registrar login uses'),
  text('clientId', 'Client id (at the identity provider)'),
  text('username', 'User name'),
  { kind: 'password', path: 'password', label: 'Password', hint: 'write-only: never shown again' },
  { kind: 'password', path: 'clientSecret', label: 'Client secret', hint: 'write-only; only for a confidential client' },
  { kind: 'json', path: 'registrationCertificateDefaults', label: 'Registration certificate defaults' },
];
const SCHEMA_CATEGORIES = ['identity', 'health', 'finance', 'education', 'mobility', 'employment', 'other'] as const;
const SCHEMA_TAGS = [
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
// Where a published version's schema comes from when its config names no schema URIs.
const schemaSourceField = text(
  'credentialConfigId',
  'Credential configuration',
  'its fields give the schema when there are no schema URIs',
);
const schemaMetaFields: FormField[] = [
  text('config.version', 'Version', 'semantic version, e.g. 1.0.0'),
  {
    kind: 'select',
    path: 'config.attestationLoS',
    label: 'Level of security',
    options: ['iso_18045_high', 'iso_18045_moderate', 'iso_18045_enhanced-basic', 'iso_18045_basic'],
  },
  { kind: 'select', path: 'config.bindingType', label: 'Binding', options: ['claim', 'key', 'biometric', 'none'] },
  text('config.rulebookURI', 'Rulebook URL'),
  { kind: 'select', path: 'config.category', label: 'Category', options: SCHEMA_CATEGORIES },
  { kind: 'multi', path: 'config.tags', label: 'Tags', options: SCHEMA_TAGS },
  { kind: 'json', path: 'config.schemaURIs', label: 'Schemas per format' },
];
const SD_JWT = { path: 'config.format', is: 'dc+sd-jwt' };
const MDOC = { path: 'config.format', is: 'mso_mdoc' };

/** The form of a change: the create form's fields but those a change cannot set, for the operation that changes. */
const change = (create: FormSpec, operation: FormSpec['operation'], fixed: string[]): FormSpec => ({
  operation,
  fields: create.fields.filter((f) => !fixed.includes(f.path)),
});

const CREATE = {
  tenantCreate: {
    operation: { method: 'post', path: '/api/tenant' },
    fields: [
      text('id', 'Id', 'letters, digits, - and _; part of every URL of the tenant'),
      text('name', 'Name'),
      description,
      { kind: 'multi', path: 'roles', label: "Roles of the tenant's admin client", options: TENANT_ROLE_OPTIONS },
    ],
  },
  tenantUpdate: { operation: { method: 'patch', path: '/api/tenant/{id}' }, fields: [text('name', 'Name'), description] },
  clientCreate: {
    operation: { method: 'post', path: '/api/client' },
    fields: [text('clientId', 'Client id', 'unique across the service'), ...clientFields],
  },
  clientUpdate: {
    operation: { method: 'patch', path: '/api/client/{id}' },
    fields: clientFields,
  },
  userCreate: {
    operation: { method: 'post', path: '/api/user' },
    fields: [
      text('username', 'User name'),
      text('email', 'Email'),
      { kind: 'multi', path: 'roles', label: 'Roles', options: TENANT_ROLE_OPTIONS, grantable: true },
      { kind: 'checkbox', path: 'enabled', label: 'Enabled' },
    ],
  },
  userUpdate: {
    operation: { method: 'patch', path: '/api/user/{id}' },
    fields: [
      text('email', 'Email'),
      { kind: 'multi', path: 'roles', label: 'Roles', options: TENANT_ROLE_OPTIONS, grantable: true },
      { kind: 'checkbox', path: 'enabled', label: 'Enabled' },
    ],
  },
  keyChainCreate: {
    operation: { method: 'post', path: '/api/key-chain' },
    fields: [
      text('id', 'Id'),
      { kind: 'select', path: 'usageType', label: 'Usage', options: USAGE_TYPES },
      {
        kind: 'select',
        path: 'type',
        label: 'Chain type',
        options: ['internalChain', 'standalone'],
        hint: 'internalChain: a root CA of the tenant signs the key; standalone: self-signed, which HAIP 1.0 forbids where wallets see the certificate',
      },
      description,
      { kind: 'checkbox', path: 'rotationEnabled', label: 'Rotate automatically' },
      { kind: 'integer', path: 'rotationIntervalDays', label: 'Rotation interval (days)' },
      { kind: 'integer', path: 'certValidityDays', label: 'Certificate validity (days)' },
    ],
  },
  keyChainImport: {
    operation: { method: 'post', path: '/api/key-chain/import' },
    fields: [
      text('id', 'Id'),
      { kind: 'select', path: 'usageType', label: 'Usage', options: USAGE_TYPES },
      { kind: 'json', path: 'privateJwk', label: 'Private key (JWK)' },
      { kind: 'textarea', path: 'certificateChain', label: 'Certificate chain (PEM, leaf first; empty: a self-signed one is made)' },
      description,
    ],
  },
  keyChainUpdate: {
    operation: { method: 'patch', path: '/api/key-chain/{id}' },
    fields: [
      description,
      { kind: 'checkbox', path: 'rotationEnabled', label: 'Rotate automatically' },
      { kind: 'integer', path: 'rotationIntervalDays', label: 'Rotation interval (days)' },
      { kind: 'integer', path: 'certValidityDays', label: 'Certificate validity (days)' },
    ],
  },
  credentialConfig: {
    operation: { method: 'post', path: '/api/issuer/credentials' },
    fields: [
      text('id', 'Id'),
      { kind: 'select', path: 'config.format', label: 'Format', options: ['dc+sd-jwt', 'mso_mdoc'] },
      {
        ...text('vct', 'Type (vct)', 'a type URI, or a type metadata document the service hosts (JSON, from the JSON view)'),
        when: SD_JWT,
      },
      { ...text('config.docType', 'Document type (docType)', 'required for mso_mdoc'), when: MDOC },
      text('config.scope', 'Scope', 'the OAuth scope wallets ask for it by; empty: the id'),
      description,
      {
        kind: 'objects',
        path: 'config.display',
        label: 'Display (how wallets show it)',
        item: 'Display',
        empty: { name: '', locale: 'en' },
        fields: [
          text('name', 'Name'),
          text('locale', 'Locale', 'BCP 47, e.g. en'),
          text('description', 'Description'),
          text('logo.uri', 'Logo URI'),
          text('logo.alt_text', 'Logo text'),
          text('background_color', 'Background colour', 'CSS colour, e.g. #12107c'),
          text('text_color', 'Text colour'),
        ],
      },
      { kind: 'id', path: 'keyChainId', label: 'Signing key chain', hint: "an attestation key chain; not set: the tenant's default" },
      { kind: 'checkbox', path: 'statusManagement', label: 'Revocable (status list entry per credential)' },
      {
        kind: 'select',
        path: 'statusListSigner',
        label: 'Status list signer',
        options: ['statusList', 'issuer'],
        hint: 'statusList: a status-list key chain (default); issuer: the key that signs the credentials',
      },
      { kind: 'checkbox', path: 'keyBinding', label: "Bound to the wallet's key", unset: true },
      {
        kind: 'select',
        path: 'sdJwtTrustFormat',
        label: 'Trust format',
        options: ['x5c', 'federation'],
        hint: 'x5c (default): the certificate chain; federation: the iss claim',
        when: SD_JWT,
      },
      { kind: 'integer', path: 'lifeTime', label: 'Lifetime (seconds)', min: 1, hint: 'empty: no expiry' },
      { kind: 'id', path: 'attributeProviderId', label: 'Attribute provider', hint: 'supplies the claims' },
      { kind: 'id', path: 'webhookEndpointId', label: 'Webhook endpoint', hint: 'receives notifications' },
    ],
  },
  presentationConfig: {
    operation: { method: 'post', path: '/api/verifier/config' },
    fields: [text('id', 'Id'), description, { kind: 'json', path: 'dcql_query', label: 'DCQL query' }],
  },
  httpEndpoint: {
    operation: { method: 'post', path: '/api/issuer/attribute-providers' },
    fields: [
      text('id', 'Id'),
      text('name', 'Name'),
      text('url', 'URL'),
      description,
      { kind: 'select', path: 'auth.type', label: 'Authentication', options: ['none', 'header'] },
    ],
  },
  statusList: {
    operation: { method: 'post', path: '/api/status-lists' },
    fields: [
      { kind: 'select', path: 'bits', label: 'Bits per entry', options: [1, 2, 4, 8], hint: '2 or more to suspend as well as revoke' },
      text('credentialConfigurationId', 'Credential configuration', 'empty: shared by all'),
      text('keyChainId', 'Key chain', "empty: the tenant's default statusList key chain"),
    ],
  },
  trustList: {
    operation: { method: 'post', path: '/api/trust-list' },
    fields: [text('id', 'Id'), description, text('keyChainId', 'Signing key chain'), { kind: 'json', path: 'entities', label: 'Entities' }],
  },
  registrarConfig: {
    operation: { method: 'post', path: '/api/registrar/config' },
    fields: registrarFields,
  },
  accessCertificate: {
    operation: { method: 'post', path: '/api/registrar/access-certificate' },
    fields: [text('keyChainId', 'Key chain', "a key chain of usage access; empty: the tenant's default access key chain")],
  },
  schemaMetadataPublish: {
    operation: { method: 'post', path: '/api/schema-metadata/publish' },
    fields: [text('config.nameHint', 'Name hint', 'the id the registrar reserves is based on it'), ...schemaMetaFields, schemaSourceField],
  },
  schemaMetadataPublishVersion: {
    operation: { method: 'post', path: '/api/schema-metadata/publish-version' },
    fields: [text('config.id', 'Attestation id', 'of the published schema metadata'), ...schemaMetaFields, schemaSourceField],
  },
  schemaMetadataDeprecation: {
    operation: { method: 'patch', path: '/api/schema-metadata/{id}/versions/{version}/deprecation' },
    fields: [
      { kind: 'checkbox', path: 'deprecated', label: 'Deprecated' },
      text('message', 'Message'),
      text('supersededByVersion', 'Superseded by version'),
    ],
  },
  schemaMetadataClassification: {
    operation: { method: 'patch', path: '/api/schema-metadata/{id}/versions/{version}' },
    fields: [
      { kind: 'select', path: 'category', label: 'Category', options: SCHEMA_CATEGORIES },
      { kind: 'multi', path: 'tags', label: 'Tags', options: SCHEMA_TAGS },
    ],
  },
  schemaMetadataResolveUrl: {
    operation: { method: 'post', path: '/api/verifier/config/schema-metadata/resolve' },
    fields: [text('schemaMetadataUrl', 'Schema metadata URL', 'the JSON there must hold signedJwt')],
  },
  schemaMetadataResolveJwt: {
    operation: { method: 'post', path: '/api/verifier/config/schema-metadata/resolve-jwt' },
    fields: [{ kind: 'textarea', path: 'signedJwt', label: 'Signed schema metadata (JWT)' }],
  },
  issuerMetadataResolve: {
    operation: { method: 'post', path: '/api/verifier/config/issuer-metadata/resolve' },
    fields: [text('credentialIssuer', 'Credential issuer', 'its identifier (URL)')],
  },
} satisfies Record<string, FormSpec>;

export const FORMS = {
  ...CREATE,
  credentialConfigUpdate: change(CREATE.credentialConfig, { method: 'patch', path: '/api/issuer/credentials/{id}' }, ['id']),
  presentationConfigUpdate: change(CREATE.presentationConfig, { method: 'patch', path: '/api/verifier/config/{id}' }, ['id']),
  httpEndpointUpdate: change(CREATE.httpEndpoint, { method: 'patch', path: '/api/issuer/attribute-providers/{id}' }, ['id']),
  webhookEndpoint: { ...CREATE.httpEndpoint, operation: { method: 'post', path: '/api/issuer/webhook-endpoints' } } as FormSpec,
  webhookEndpointUpdate: change(CREATE.httpEndpoint, { method: 'patch', path: '/api/issuer/webhook-endpoints/{id}' }, ['id']),
  statusListUpdate: change(CREATE.statusList, { method: 'patch', path: '/api/status-lists/{listId}' }, ['bits']),
  trustListUpdate: change(CREATE.trustList, { method: 'put', path: '/api/trust-list/{id}' }, ['id']),
  registrarConfigUpdate: change(CREATE.registrarConfig, { method: 'patch', path: '/api/registrar/config' }, []),
};

const WEBHOOK_HINT =
  'JSON: {"url": "https://…", "auth": {"type": "none"}} (auth may also be {"type": "header", "header": {"name", "value"}})';

/** The forms of the flows (offers, presentation requests, deferred issuance), on the pages of their own. */
export const FLOW_FORMS = {
  issuanceOffer: {
    operation: { method: 'post', path: '/api/issuer/offer' },
    fields: [
      { kind: 'ids', path: 'credentialConfigurationIds', label: 'Credential configurations' },
      {
        kind: 'select',
        path: 'flow',
        label: 'Flow',
        options: ['pre_authorized_code', 'authorization_code'],
        hint: 'pre_authorized_code: the wallet redeems the offer at once; authorization_code: the wallet has the user authorize first',
      },
      {
        kind: 'select',
        path: 'response_type',
        label: 'Delivery',
        options: ['uri', 'dc-api'],
        hint: 'uri: a link and QR code for a wallet; dc-api: also the request for the browser Digital Credentials API',
      },
      {
        kind: 'json',
        path: 'credentialClaims',
        label: 'Claims per configuration',
        hint: 'each: {"type": "inline", "claims": {…}}, {"type": "attributeProvider", "attributeProviderId": …} or {"type": "webhook", "webhook": {"url": …}}; none: the configuration\'s attribute provider or default values',
      },
      text('tx_code', 'Transaction code', 'pre-authorized flow, optional: the wallet asks its user for it; deliver it separately'),
      text('tx_code_description', 'Transaction code description'),
      text('authorization_server', 'Authorization server', "empty: the issuer's first enabled one"),
      text('webhookEndpointId', 'Webhook endpoint', "id of a webhook endpoint told about this offer; empty: the configuration's"),
    ],
  },
  presentationRequest: {
    operation: { method: 'post', path: '/api/verifier/offer' },
    fields: [
      { kind: 'id', path: 'requestId', label: 'Presentation configuration' },
      {
        kind: 'select',
        path: 'response_type',
        label: 'Delivery',
        options: ['uri', 'dc-api', 'iso-18013-7'],
        hint: 'uri: a link and QR code for a wallet; dc-api: OpenID4VP over the Digital Credentials API; iso-18013-7: Annex C (mso_mdoc only)',
      },
      text(
        'expected_origin',
        'Expected origin',
        'dc-api and iso-18013-7: required, the origin of the page calling the Digital Credentials API',
      ),
      {
        kind: 'select',
        path: 'clientIdPrefix',
        label: 'Client id prefix',
        options: ['x509_hash', 'x509_san_dns'],
        hint: 'not set: x509_hash',
      },
      {
        kind: 'select',
        path: 'responseMode',
        label: 'Response mode',
        options: ['direct_post.jwt', 'direct_post'],
        hint: 'not set: direct_post.jwt (encrypted)',
      },
      {
        kind: 'select',
        path: 'requestUriMethod',
        label: 'Request URI method',
        options: ['get', 'post'],
        hint: 'post: the wallet may post its capabilities to fetch the request',
      },
      text(
        'redirectUri',
        'Redirect URI',
        "where the wallet sends its user afterwards; {sessionId} is replaced; empty: the configuration's",
      ),
      { kind: 'json', path: 'transaction_data', label: 'Transaction data', hint: "a JSON array; empty: the configuration's" },
      {
        kind: 'json',
        path: 'webhook',
        label: 'Webhook',
        hint: `where the verified claims go; empty: the configuration's. ${WEBHOOK_HINT}`,
      },
    ],
  },
  deferredCompletion: {
    operation: { method: 'post', path: '/api/issuer/deferred/{transactionId}/complete' },
    fields: [{ kind: 'json', path: 'claims', label: 'Claims', hint: 'the claims of the credential, a JSON object' }],
  },
} satisfies Record<string, FormSpec>;

const seconds = (path: string, label: string, min: number, max: number, hint?: string): FormField => ({
  kind: 'integer',
  path,
  label,
  min,
  max,
  hint,
});
const check = (path: string, label: string, hint?: string): FormField => ({ kind: 'checkbox', path, label, hint });
/** How a nullable setting shows that the service's configuration (environment) decides. */
const GLOBAL_DEFAULT = 'use the global default';

/** The settings of a tenant (one object each, GET and PUT), as forms. */
export const SETTINGS_FORMS = {
  issuerSettings: {
    operation: { method: 'put', path: '/api/issuer/config' },
    fields: [
      {
        kind: 'select',
        path: 'profile',
        label: 'Conformance profile',
        options: ['none', 'haip-1.0'],
        hint: 'haip-1.0 holds the tenant to OpenID4VC HAIP 1.0: wallet attestation and DPoP required, and every change that breaks it refused',
      },
      {
        kind: 'objects',
        path: 'display',
        label: 'Issuer display',
        item: 'Display',
        empty: { name: '', locale: 'en' },
        fields: [
          text('name', 'Name'),
          text('locale', 'Locale', 'BCP 47, e.g. en'),
          text('logo.uri', 'Logo URI'),
          text('logo.alt_text', 'Logo text'),
        ],
      },
      { kind: 'integer', path: 'batchSize', label: 'Batch size', min: 1, max: 100, hint: 'most credentials in one credential request' },
      {
        kind: 'integer',
        path: 'txCodeMaxAttempts',
        label: 'Transaction code attempts',
        min: 1,
        max: 20,
        hint: 'before an offer is locked',
      },
      seconds('nonceLifetimeSeconds', 'Nonce lifetime (seconds)', 30, 3600),
      seconds('accessTokenLifetimeSeconds', 'Access token lifetime (seconds)', 60, 86400),
      seconds('refreshTokenLifetimeSeconds', 'Refresh token lifetime (seconds)', 0, 2_592_000, '0 issues none'),
      seconds('offerLifetimeSeconds', 'Offer lifetime (seconds)', 60, 2_592_000),
      check('dpopRequired', 'DPoP required'),
      check('dpopNonceRequired', 'DPoP nonce required'),
      check('walletAttestationRequired', 'Wallet attestation required'),
      check('walletAttestationChallengeRequired', 'Wallet attestation challenge required'),
      check('credentialEncryptionRequired', 'Credential encryption required'),
      check('builtinAuthorizationServerEnabled', 'Built-in authorization server enabled'),
      {
        kind: 'objects',
        path: 'authorizationServers',
        label: 'External authorization servers',
        item: 'Authorization server',
        empty: { issuer: '', enabled: true },
        fields: [text('issuer', 'Issuer URL'), check('enabled', 'Enabled')],
      },
      { kind: 'json', path: 'walletProviders', label: 'Wallet providers', hint: '[{"name": …, "certificates": [PEM, …]}]' },
      { kind: 'json', path: 'rateLimits', label: 'Rate limits', hint: 'per class (authorization, token, …): {"perAddress", "perTenant"}' },
    ],
  },
  statusListSettings: {
    operation: { method: 'put', path: '/api/status-list-config' },
    fields: [
      { kind: 'integer', path: 'capacity', label: 'Capacity (entries of a new list)', min: 100, unset: GLOBAL_DEFAULT },
      { kind: 'select', path: 'bits', label: 'Bits per entry', options: [1, 2, 4, 8], unset: GLOBAL_DEFAULT },
      { kind: 'integer', path: 'ttl', label: 'Token lifetime (seconds)', min: 60, unset: GLOBAL_DEFAULT },
      check('immediateUpdate', 'Update the token at once on each change'),
      check('enableAggregation', 'Aggregation URI in the tokens'),
    ],
  },
  sessionSettings: {
    operation: { method: 'put', path: '/api/session-config' },
    fields: [
      {
        kind: 'integer',
        path: 'ttlSeconds',
        label: 'Retention (seconds)',
        min: 60,
        unset: GLOBAL_DEFAULT,
        hint: 'sessions are cleaned up this long after creation',
      },
      {
        kind: 'select',
        path: 'cleanupMode',
        label: 'Clean-up mode',
        options: ['full', 'anonymize'],
        unset: GLOBAL_DEFAULT,
        hint: 'full deletes the session with its logs; anonymize keeps metadata, removes personal data',
      },
    ],
  },
  trustSettings: {
    operation: { method: 'put', path: '/api/trust-config' },
    fields: [
      {
        kind: 'select',
        path: 'federation.role',
        label: 'Federation role',
        options: ['leaf'],
        hint: 'not set: the tenant takes no part in OpenID Federation (set federation to null in the JSON view to leave)',
      },
      {
        kind: 'select',
        path: 'federation.mode',
        label: 'Trust mode',
        options: ['hybrid', 'federation-only', 'lote-only'],
        hint: 'hybrid: federation first, the LoTE trust lists when an entity does not resolve',
      },
      text('federation.entityId', 'Entity id', 'default: the credential issuer identifier'),
      { kind: 'list', path: 'federation.authorityHints', label: 'Authority hints', hint: 'entity ids, comma-separated' },
      {
        kind: 'objects',
        path: 'federation.trustAnchors',
        label: 'Trust anchors',
        item: 'Trust anchor',
        empty: { entityId: '' },
        fields: [
          text('entityId', 'Entity id'),
          text('entityConfigurationUri', 'Entity configuration URI', 'default {entityId}/.well-known/openid-federation'),
        ],
      },
      seconds('federation.cacheTtlSeconds', 'Trust cache (seconds)', 0, 86_400),
    ],
  },
} satisfies Record<string, FormSpec>;
