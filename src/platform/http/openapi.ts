// What the OpenAPI document says beyond the routes' own schemas: how to authenticate (the explorer's
// "Authorize" takes a client id and secret), what each tag is for, and the problem answers each
// management operation can give. The error answers are added to the document only, never to the
// routes' response schemas, so that documenting them cannot change how an error is serialised.

type Operation = {
  security?: Record<string, string[]>[];
  parameters?: { in: string }[];
  requestBody?: unknown;
  responses?: Record<string, unknown>;
};
type Document = { paths?: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, unknown> } };

export const SECURITY_SCHEMES = {
  oauth2: {
    type: 'oauth2',
    description: 'client credentials of a client of the service: the explorer fetches the token itself',
    flows: { clientCredentials: { tokenUrl: '/api/oauth2/token', scopes: {} } },
  },
  bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'an access token from POST /api/oauth2/token' },
  queryToken: { type: 'apiKey', in: 'query', name: 'token', description: 'an access token, for event streams' },
  walletAccessToken: {
    type: 'http',
    scheme: 'bearer',
    description: "a wallet's access token from the tenant's token endpoint, when it was issued without DPoP",
  },
  walletDpop: {
    type: 'http',
    scheme: 'DPoP',
    description: "a wallet's DPoP-bound access token (RFC 9449), with a DPoP proof in the DPoP header",
  },
} as const;

/** The security of a management operation: a token fetched by the explorer, or one pasted in. */
export const MANAGEMENT_SECURITY: Record<string, string[]>[] = [{ oauth2: [] }, { bearer: [] }];
/** The security of a wallet endpoint that takes the access token of the tenant's token endpoint. */
export const WALLET_SECURITY: Record<string, string[]>[] = [{ walletDpop: [] }, { walletAccessToken: [] }];

export const TAGS = [
  { name: 'service', description: 'Health, readiness, version and what a front end needs to know.' },
  { name: 'auth', description: 'Access tokens for the management API (OAuth 2.0 client credentials).' },
  { name: 'tenants', description: 'Tenants, each with its own clients, keys, configurations and sessions (role tenants:manage).' },
  { name: 'clients', description: 'Machine clients of a tenant or of the service; a secret is shown once, on create and rotate.' },
  { name: 'users', description: 'People of a tenant, with roles; a temporary password is shown once.' },
  { name: 'audit', description: "What changed in the caller's tenant, who changed it, and when." },
  { name: 'key chains', description: 'Signing keys with their certificate chains: create, import, rotate, make default.' },
  { name: 'public keys', description: 'Public keys, certificate chains and revocation lists, as relying parties fetch them.' },
  { name: 'attribute providers', description: 'Endpoints of the tenant that supply the claims of credentials at issuance.' },
  { name: 'webhook endpoints', description: 'Endpoints of the tenant that hear of issuance and presentation events.' },
  {
    name: 'webhook deliveries',
    description: 'Every webhook event and its delivery (at least once, signed as Standard Webhooks): state, attempts, retry.',
  },
  { name: 'credential configurations', description: 'What the tenant issues: format, fields (claims, disclosure, display) and settings.' },
  { name: 'presentation configurations', description: 'What the tenant asks wallets for: a DCQL query, transaction data, redirects.' },
  { name: 'trust lists', description: 'Lists of trusted entities (ETSI TS 119 602 LoTE), published signed.' },
  {
    name: 'trust',
    description: "A tenant's trust settings: the OpenID Federation block (also the federation field of the issuer settings).",
  },
  {
    name: 'federation',
    description:
      'OpenID Federation intermediates and trust anchors: the subordinates a tenant vouches for, and its fetch, list and resolve endpoints.',
  },
  { name: 'issuance', description: 'Issuer settings and credential offers for wallets (OpenID4VCI).' },
  { name: 'verification', description: 'Presentation requests for wallets (OpenID4VP with DCQL, the Digital Credentials API).' },
  {
    name: 'conformance',
    description: 'Where a tenant stands against a conformance profile (OpenID4VC HAIP 1.0), requirement by requirement.',
  },
  { name: 'sessions', description: 'Issuance and presentation sessions: state, claims, events (SSE), revocation, retention.' },
  { name: 'status lists', description: 'Token Status Lists of issued credentials: settings, lists and their tokens.' },
  { name: 'caches', description: 'Caches of status list tokens, and how to clear them.' },
  {
    name: 'registrar',
    description: "A tenant's link to an external registrar (role registrar:manage); its secrets are write-only and stored encrypted.",
  },
  {
    name: 'schema metadata',
    description:
      "Signed schema metadata (TS11 catalogue, experimental) at the tenant's registrar: publish, versions, deprecation, catalog reads.",
  },
  { name: 'configuration files', description: "A tenant's configuration in the layout CONFIG_IMPORT reads." },
  { name: 'wallet: OpenID4VCI', description: 'What wallets call to obtain credentials (OpenID4VCI 1.0); OAuth error shapes.' },
  { name: 'wallet: OpenID4VP', description: 'What wallets call to present credentials (OpenID4VP 1.0); OAuth error shapes.' },
  {
    name: 'wallet: ISO 18013-7',
    description:
      "Where the integrator's page posts a wallet's ISO/IEC 18013-7 Annex C answer (org-iso-mdoc over the Digital Credentials API).",
  },
];

const PROBLEM = {
  type: 'object',
  description: 'RFC 9457 problem details',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: { type: 'string', example: 'about:blank' },
    title: { type: 'string', example: 'Bad Request' },
    status: { type: 'integer', example: 400 },
    detail: { type: 'string', example: 'body.fields.0.path: Required' },
    instance: { type: 'string', description: 'the path of the request' },
    requestId: { type: 'string', description: 'the request id, also in the X-Request-Id header and the logs' },
    errors: {
      type: 'array',
      description: 'with 400: every offending field',
      items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } },
    },
  },
};

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

/**
 * Adds the problem answers of every management operation: 400 where it takes input, 401 and 403
 * where it needs a token, 404 where it names a resource, 409 where it changes something.
 */
export function documentProblems<T extends object>(input: T): T {
  const doc = input as Document;
  doc.components ??= {};
  doc.components.schemas = { ...doc.components.schemas, Problem: PROBLEM };
  for (const [path, operations] of Object.entries(doc.paths ?? {})) {
    if (!path.startsWith('/api/')) continue;
    for (const [method, operation] of Object.entries(operations)) {
      operation.responses ??= {};
      const responses: Record<string, unknown> = operation.responses;
      const add = (status: number, description: string) => {
        responses[status] ??= problem(description);
      };
      // Public operations (the token endpoint) answer in their own protocol's error shape.
      if (!operation.security?.length) continue;
      const takesInput = operation.requestBody !== undefined || (operation.parameters?.length ?? 0) > 0;
      if (takesInput) add(400, 'invalid input: every offending field is named in errors');
      add(401, 'no access token, or one that is invalid, expired or whose client is gone');
      add(403, 'the client lacks every role the operation accepts, or works outside a tenant');
      if (operation.parameters?.some((parameter) => parameter.in === 'path')) add(404, "no such resource in the caller's tenant");
      if (['post', 'put', 'patch', 'delete'].includes(method)) {
        add(409, 'the change conflicts with the current state (an id in use, a resource still referred to)');
      }
    }
  }
  return input;
}
