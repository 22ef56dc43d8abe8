import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createdBody, expectFieldErrors, problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let acme: string;
let globex: string;

const PATH = '/api/verifier/config';
const _PROBLEM = 'application/problem+json';
const SECRET = 'Bearer s3cret-presentation-hook';

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  globex = (await svc.tenant('globex')).token;
  const setup: [string, string, string, Record<string, unknown>][] = [
    [acme, '/api/key-chain', 'verifier-access', { usageType: 'access', type: 'standalone' }],
    [acme, '/api/key-chain', 'signer', { usageType: 'attestation', type: 'standalone' }],
    [
      acme,
      '/api/issuer/webhook-endpoints',
      'hooks',
      { name: 'Hooks', url: 'https://hooks.example.com/claims', auth: { type: 'header', header: { name: 'X-Api-Key', value: 'k1' } } },
    ],
    [
      globex,
      '/api/issuer/webhook-endpoints',
      'globex-hooks',
      { name: 'Hooks', url: 'https://globex.example.com/', auth: { type: 'none' } },
    ],
    [globex, '/api/key-chain', 'globex-access', { usageType: 'access', type: 'standalone' }],
  ];
  for (const [token, path, id, body] of setup) {
    const reply = await svc.raw('POST', path, { token, body: { id, ...body } });
    if (reply.status !== 201) throw new Error(`${path}: ${reply.status} ${reply.text}`);
  }
});
afterAll(() => svc.stop());

const save = (token: string, body: unknown) => svc.raw('POST', PATH, { token, body });
const get = (token: string, id: string) => svc.call('GET', `${PATH}/${id}`, { token });
const patch = (token: string, id: string, body: unknown) => svc.raw('PATCH', `${PATH}/${id}`, { token, body });
const remove = (token: string, id: string) => svc.call('DELETE', `${PATH}/${id}`, { token });

async function created(token: string, body: Record<string, unknown>) {
  return createdBody(await save(token, body));
}

const row = (tenantId: string, id: string) =>
  svc.db.selectFrom('presentation_configs').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();

const PID_QUERY = {
  credentials: [
    {
      id: 'pid',
      format: 'dc+sd-jwt',
      meta: { vct_values: ['urn:eudi:pid:1'] },
      claims: [
        { id: 'given', path: ['given_name'] },
        { id: 'family', path: ['family_name'] },
        { path: ['address', 'locality'], values: ['KÖLN'] },
      ],
      claim_sets: [['given', 'family'], ['given']],
    },
    {
      id: 'mdl',
      format: 'mso_mdoc',
      meta: { doctype_value: 'org.iso.18013.5.1.mDL' },
      claims: [{ path: ['org.iso.18013.5.1', 'family_name'], intent_to_retain: false }],
    },
  ],
  credential_sets: [{ options: [['pid'], ['mdl']], purpose: 'identification' }],
};

/** Every field of the model, set. */
const FULL = {
  id: 'full',
  description: 'Identify the customer',
  lifeTime: 600,
  dcql_query: PID_QUERY,
  transaction_data: [
    { type: 'payment', credential_ids: ['pid'], transaction_data_hashes_alg: ['sha-256'], amount: '42.00 EUR' },
    { type: 'qes', credential_ids: ['pid', 'mdl'] },
  ],
  registration_cert: { purpose: [{ locale: 'en', name: 'KYC' }], privacy_policy: 'https://rp.example.com/privacy' },
  webhookEndpointId: 'hooks',
  webhook: null,
  attached: [{ format: 'registration_cert', data: { jwt: 'eyJ...' }, credential_ids: ['pid'] }],
  redirectUri: 'https://rp.example.com/done/{sessionId}?step=1',
  accessKeyChainId: 'verifier-access',
};

const MINIMAL = { id: 'minimal', dcql_query: { credentials: [{ id: 'mdl', format: 'mso_mdoc' }] } };

const DEFAULTS = {
  description: null,
  lifeTime: 300,
  transaction_data: [],
  registration_cert: null,
  registrationCertCache: null,
  webhookEndpointId: null,
  webhook: null,
  attached: null,
  redirectUri: null,
  accessKeyChainId: null,
};

const stamps = { createdAt: expect.any(String), updatedAt: expect.any(String) };

describe('create, read, list', () => {
  it('creates a configuration with every field and returns it as stored', async () => {
    const reply = await save(acme, FULL);
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toEqual({ ...FULL, tenantId: 'acme', registrationCertCache: null, ...stamps });
    expect(reply.body.updatedAt).toBe(reply.body.createdAt);
    expect((await get(acme, 'full')).body).toEqual(reply.body);

    const stored = await row('acme', 'full');
    expect(stored).toMatchObject({
      webhook_endpoint_id: 'hooks',
      access_key_chain_id: 'verifier-access',
      webhook: null,
      registration_cert_cache: null,
    });
    const { id: _id, webhookEndpointId: _w, webhook: _h, accessKeyChainId: _a, ...document } = FULL;
    expect(JSON.parse(stored?.document as string)).toEqual(document);
  });

  it('creates a minimal configuration and fills in the defaults', async () => {
    expect(await created(acme, MINIMAL)).toEqual({ ...MINIMAL, ...DEFAULTS, tenantId: 'acme', ...stamps });
  });

  it("lists the tenant's configurations in creation order", async () => {
    const reply = await svc.call('GET', PATH, { token: acme });
    expect(reply.status).toBe(200);
    const ids = reply.body.map((c: { id: string }) => c.id);
    expect(ids.indexOf('full')).toBeLessThan(ids.indexOf('minimal'));
    expect(reply.body.find((c: { id: string }) => c.id === 'full')).toEqual((await get(acme, 'full')).body);
  });

  it('answers 404 for unknown ids', async () => {
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { description: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const reply = await svc.call(method, `${PATH}/nope`, { token: acme, body });
      expect(reply.status, method).toBe(404);
      expect(problemOf(reply).detail).toBe("presentation configuration 'nope' does not exist");
    }
  });
});

describe('POST with an existing id', () => {
  it('replaces the configuration as a whole, answers 200 and keeps createdAt', async () => {
    const first = await created(acme, { ...MINIMAL, id: 'upsert', description: 'first', lifeTime: 60, redirectUri: 'https://a.example/' });
    const body = { id: 'upsert', dcql_query: PID_QUERY, transaction_data: [{ type: 'payment', credential_ids: ['mdl'] }] };
    const reply = await save(acme, body);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({ ...DEFAULTS, ...body, tenantId: 'acme', createdAt: first.createdAt, updatedAt: expect.any(String) });
    expect(Date.parse(reply.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(first.updatedAt));
    expect((await get(acme, 'upsert')).body).toEqual(reply.body);
    const ids = (await svc.call('GET', PATH, { token: acme })).body.map((c: { id: string }) => c.id);
    expect(ids.filter((id: string) => id === 'upsert')).toHaveLength(1);
  });

  it('checks the replacement like a creation, and changes nothing when it fails', async () => {
    const before = (await get(acme, 'upsert')).body;
    const reply = await save(acme, { id: 'upsert', dcql_query: { credentials: [] }, accessKeyChainId: 'missing' });
    expectFieldErrors(reply, ['body.dcql_query.credentials', 'body.accessKeyChainId']);
    expect((await get(acme, 'upsert')).body).toEqual(before);
  });

  it('documents both answers in the OpenAPI document', async () => {
    const doc = (await svc.raw('GET', '/api/openapi.json')).body;
    const post = doc.paths[PATH].post;
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(['200', '201']));
    expect(post.description).toContain('201 when created, 200 when replaced');
    expect(post.description).toContain('presentation:manage');
    expect(post.requestBody.content['application/json'].schema.required).toEqual(['id', 'dcql_query']);
    expect(doc.components.schemas.PresentationConfiguration.properties.webhook.deprecated).toBe(true);
  });
});

describe('DCQL validation', () => {
  const query = (credentials: unknown, rest: Record<string, unknown> = {}) => ({ id: 'q', dcql_query: { credentials, ...rest } });
  const cases: [string, Record<string, unknown>, string[]][] = [
    ['no dcql_query', { id: 'q' }, ['body.dcql_query']],
    ['a dcql_query that is not an object', { id: 'q', dcql_query: 'credentials' }, ['body.dcql_query']],
    ['missing credentials', { id: 'q', dcql_query: {} }, ['body.dcql_query.credentials']],
    ['empty credentials', query([]), ['body.dcql_query.credentials']],
    ['an unknown format', query([{ id: 'a', format: 'foo' }]), ['body.dcql_query.credentials.0.format']],
    ['a format we do not verify', query([{ id: 'a', format: 'vc+sd-jwt' }]), ['body.dcql_query.credentials.0.format']],
    [
      'a W3C format, valid DCQL but not verified here (ldp_vc: Data Integrity)',
      query([
        { id: 'a', format: 'dc+sd-jwt' },
        { id: 'b', format: 'ldp_vc', meta: { type_values: [['VerifiableCredential']] } },
      ]),
      ['body.dcql_query.credentials.1.format'],
    ],
    [
      'an empty claims path',
      query([{ id: 'a', format: 'dc+sd-jwt', claims: [{ path: [] }] }]),
      ['body.dcql_query.credentials.0.claims.0.path'],
    ],
    [
      'a claims path segment of the wrong type',
      query([{ id: 'a', format: 'dc+sd-jwt', claims: [{ path: ['a', true] }] }]),
      ['body.dcql_query.credentials.0.claims.0.path.1'],
    ],
    [
      'an mdoc claims path of one segment',
      query([{ id: 'a', format: 'mso_mdoc', claims: [{ path: ['family_name'] }] }]),
      ['body.dcql_query.credentials.0.claims.0'],
    ],
    ['a credential query id with a space', query([{ id: 'a b', format: 'dc+sd-jwt' }]), ['body.dcql_query.credentials.0.id']],
    [
      'duplicate credential query ids',
      query([
        { id: 'a', format: 'dc+sd-jwt' },
        { id: 'b', format: 'mso_mdoc' },
        { id: 'a', format: 'mso_mdoc' },
      ]),
      ['body.dcql_query.credentials.2.id'],
    ],
    [
      'claim_sets naming an unknown claim',
      query([{ id: 'a', format: 'dc+sd-jwt', claims: [{ id: 'c', path: ['x'] }], claim_sets: [['c', 'z']] }]),
      ['body.dcql_query.credentials.0.claim_sets'],
    ],
    [
      'credential_sets naming an unknown credential query',
      query([{ id: 'a', format: 'dc+sd-jwt' }], { credential_sets: [{ options: [['a'], ['b']] }] }),
      ['body.dcql_query.credential_sets'],
    ],
    [
      'two bad credential queries at once',
      query([
        { id: 'a', format: 'foo' },
        { id: 'b', format: 'dc+sd-jwt', claims: [{ path: [] }] },
      ]),
      ['body.dcql_query.credentials.0.format', 'body.dcql_query.credentials.1.claims.0.path'],
    ],
  ];

  it.each(cases)('answers 400 naming the field for %s, and stores nothing', async (_name, body, fields) => {
    expectFieldErrors(await save(acme, body), fields);
    expect(await row('acme', 'q')).toBeUndefined();
  });

  it("says what is wrong, in the library's words where it has them", async () => {
    const errorsOf = async (credentials: unknown, rest?: Record<string, unknown>) =>
      (await save(acme, query(credentials, rest))).body.errors;
    expect(await errorsOf([{ id: 'a', format: 'foo' }])).toEqual([
      {
        field: 'body.dcql_query.credentials.0.format',
        message: expect.stringMatching(/^Invalid type: Expected .*"dc\+sd-jwt".* but received "foo"$/),
      },
    ]);
    expect(await errorsOf([{ id: 'a', format: 'vc+sd-jwt' }])).toEqual([
      {
        field: 'body.dcql_query.credentials.0.format',
        message: "'vc+sd-jwt' is not verified here; supported formats: dc+sd-jwt, mso_mdoc, jwt_vc_json",
      },
    ]);
    expect(
      await errorsOf([
        { id: 'a', format: 'dc+sd-jwt' },
        { id: 'a', format: 'mso_mdoc' },
      ]),
    ).toEqual([{ field: 'body.dcql_query.credentials.1.id', message: 'Duplicate credential query ids found: a' }]);
    expect(await errorsOf([{ id: 'a', format: 'dc+sd-jwt' }], { credential_sets: [{ options: [['b']] }] })).toEqual([
      { field: 'body.dcql_query.credential_sets', message: "Credential set contains undefined credential id 'b'" },
    ]);
    expect(await errorsOf([{ id: 'a', format: 'dc+sd-jwt', claims: [{ id: 'c', path: ['x'] }], claim_sets: [['z']] }])).toEqual([
      { field: 'body.dcql_query.credentials.0.claim_sets', message: 'names ids that no claim of the query has: z' },
    ]);
    const [mdoc] = await errorsOf([{ id: 'a', format: 'mso_mdoc', claims: [{ path: ['family_name'] }] }]);
    expect(mdoc.message).toContain('path.1: Invalid type: Expected string but received undefined');
    const missing = await errorsOf(undefined);
    expect(missing).toEqual([
      { field: 'body.dcql_query.credentials', message: 'Invalid key: Expected "credentials" but received undefined' },
    ]);
  });

  it('checks the query on PATCH, as it would be after the change', async () => {
    const before = (await get(acme, 'full')).body;
    const reply = await patch(acme, 'full', { dcql_query: { credentials: [{ id: 'mdl', format: 'mso_mdoc' }] } });
    // The stored transaction data and attachment name the credential query 'pid', which the new query lacks.
    expectFieldErrors(reply, [
      'body.transaction_data.0.credential_ids.0',
      'body.transaction_data.1.credential_ids.0',
      'body.attached.0.credential_ids.0',
    ]);
    expect(reply.body.errors[0].message).toBe("'pid' is not the id of a credential query in dcql_query");
    expect((await get(acme, 'full')).body).toEqual(before);
  });
});

describe('trusted authorities of type openid_federation', () => {
  const federationQuery = {
    credentials: [
      { id: 'mdl', format: 'mso_mdoc' },
      {
        id: 'pid',
        format: 'dc+sd-jwt',
        trusted_authorities: [
          { type: 'aki', values: ['s9tIpPmhxdiuNkHMEWNpYim8S8Y'] },
          { type: 'openid_federation', values: ['https://anchor.example.eu'] },
        ],
      },
    ],
  };
  const federation = { role: 'leaf', trustAnchors: [{ entityId: 'https://anchor.example.eu' }] };
  const issuerSettings = (token: string, body: Record<string, unknown>) => svc.raw('PUT', '/api/issuer/config', { token, body });

  it('are refused, naming the authority, while the tenant has no federation settings; nothing is stored', async () => {
    const reply = await save(globex, { id: 'federated', dcql_query: federationQuery });
    expectFieldErrors(reply, ['body.dcql_query.credentials.1.trusted_authorities.1.type']);
    expect(reply.body.errors[0].message).toMatch(
      /the tenant's federation settings, and it has none: set federation .*PUT \/api\/trust-config/,
    );
    expect((await get(globex, 'federated')).status).toBe(404);
    // A PATCH that would add them is refused likewise, and leaves the configuration as it was.
    await created(globex, { id: 'plain', dcql_query: MINIMAL.dcql_query });
    expectFieldErrors(await patch(globex, 'plain', { dcql_query: federationQuery }), [
      'body.dcql_query.credentials.1.trusted_authorities.1.type',
    ]);
    expect((await get(globex, 'plain')).body.dcql_query).toEqual(MINIMAL.dcql_query);
  });

  it("are accepted once the tenant has federation settings, and another tenant's settings do not count", async () => {
    expect((await issuerSettings(acme, { federation })).status).toBe(200);
    await created(acme, { id: 'federated', dcql_query: federationQuery });
    expectFieldErrors(await save(globex, { id: 'federated', dcql_query: federationQuery }), [
      'body.dcql_query.credentials.1.trusted_authorities.1.type',
    ]);
    expect((await issuerSettings(acme, { federation: null })).status).toBe(200);
  });
});

describe('other fields', () => {
  const base = { id: 'v', dcql_query: { credentials: [{ id: 'pid', format: 'dc+sd-jwt' }] } };
  const cases: [string, Record<string, unknown>, string[]][] = [
    ['nothing', {}, ['body.id', 'body.dcql_query']],
    ['an id with a space', { ...base, id: 'has space' }, ['body.id']],
    ['a zero lifetime', { ...base, lifeTime: 0 }, ['body.lifeTime']],
    ['a fractional lifetime', { ...base, lifeTime: 1.5 }, ['body.lifeTime']],
    ['transaction data without type', { ...base, transaction_data: [{ credential_ids: ['pid'] }] }, ['body.transaction_data.0.type']],
    [
      'transaction data without credential ids',
      { ...base, transaction_data: [{ type: 'payment', credential_ids: [] }] },
      ['body.transaction_data.0.credential_ids'],
    ],
    [
      'transaction data naming an unknown credential query',
      { ...base, transaction_data: [{ type: 'payment', credential_ids: ['pid', 'mdl'] }] },
      ['body.transaction_data.0.credential_ids.1'],
    ],
    [
      'an attachment naming an unknown credential query',
      { ...base, attached: [{ format: 'registration_cert', data: {}, credential_ids: ['x'] }] },
      ['body.attached.0.credential_ids.0'],
    ],
    ['an attachment without data', { ...base, attached: [{ format: 'registration_cert' }] }, ['body.attached.0.data']],
    ['a registration_cert that is not an object', { ...base, registration_cert: 'x' }, ['body.registration_cert']],
    ['a relative redirectUri', { ...base, redirectUri: '/done/{sessionId}' }, ['body.redirectUri']],
    ['a redirectUri that is not http', { ...base, redirectUri: 'ftp://rp.example.com/{sessionId}' }, ['body.redirectUri']],
    ['a redirectUri with another placeholder', { ...base, redirectUri: 'https://rp.example.com/{state}' }, ['body.redirectUri']],
    ['a redirectUri that is a placeholder only', { ...base, redirectUri: '{sessionId}' }, ['body.redirectUri']],
    ['a webhook endpoint that does not exist', { ...base, webhookEndpointId: 'missing' }, ['body.webhookEndpointId']],
    ["another tenant's webhook endpoint", { ...base, webhookEndpointId: 'globex-hooks' }, ['body.webhookEndpointId']],
    ['a key chain that does not exist', { ...base, accessKeyChainId: 'missing' }, ['body.accessKeyChainId']],
    ["another tenant's key chain", { ...base, accessKeyChainId: 'globex-access' }, ['body.accessKeyChainId']],
    ['a key chain of another usage type', { ...base, accessKeyChainId: 'signer' }, ['body.accessKeyChainId']],
    ['a webhook and a webhook endpoint', { ...base, webhookEndpointId: 'hooks', webhook: { url: 'https://x.example/' } }, ['body.webhook']],
    ['a webhook URL that is not http', { ...base, webhook: { url: 'mailto:a@example.com' } }, ['body.webhook.url']],
    ['a webhook URL with credentials', { ...base, webhook: { url: 'https://u:p@x.example/' } }, ['body.webhook.url']],
    [
      'an unknown webhook auth type',
      { ...base, webhook: { url: 'https://x.example/', auth: { type: 'basic' } } },
      ['body.webhook.auth.type'],
    ],
    ['an unknown field', { ...base, unknown: 1 }, ['body.unknown']],
  ];

  it.each(cases)('answers 400 naming the field(s) for %s, and stores nothing', async (_name, body, fields) => {
    expectFieldErrors(await save(acme, body), fields);
    expect(await row('acme', 'v')).toBeUndefined();
  });

  it('names the rule in the message', async () => {
    const reply = await save(acme, { ...base, accessKeyChainId: 'signer', redirectUri: 'https://rp.example.com/{state}' });
    expect(problemOf(reply).errors).toEqual([
      { field: 'body.redirectUri', message: 'only the placeholder {sessionId} is replaced; {state} is not' },
    ]);
    const references = await save(acme, { ...base, accessKeyChainId: 'signer', webhookEndpointId: 'missing' });
    expect(problemOf(references).errors).toEqual([
      {
        field: 'body.accessKeyChainId',
        message: "key chain 'signer' has usage type attestation; requests are signed with access key chains",
      },
      { field: 'body.webhookEndpointId', message: "webhook endpoint 'missing' does not exist" },
    ]);
  });

  it('accepts redirect URIs with the placeholder anywhere a URL allows it', async () => {
    for (const redirectUri of [
      'https://rp.example.com/done',
      'http://localhost:3000/cb?session={sessionId}',
      'https://{sessionId}.rp.example.com/',
    ]) {
      const reply = await save(acme, { ...base, id: 'redirects', redirectUri });
      expect(reply.status, `${redirectUri}: ${reply.text}`).toBeLessThan(300);
      expect(reply.body.redirectUri).toBe(redirectUri);
    }
  });
});

describe('update', () => {
  let original: Record<string, unknown>;
  beforeAll(async () => {
    original = await created(acme, { ...FULL, id: 'patchable', webhookEndpointId: null });
  });

  it('replaces the fields given, clears or resets those set to null, keeps the rest', async () => {
    const reply = await patch(acme, 'patchable', { description: null, lifeTime: null, redirectUri: null, attached: null });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({
      ...original,
      description: null,
      lifeTime: 300,
      redirectUri: null,
      attached: null,
      updatedAt: expect.any(String),
    });
    expect(reply.body.createdAt).toBe(original.createdAt);
    expect((await get(acme, 'patchable')).body).toEqual(reply.body);
  });

  it('replaces dcql_query and transaction_data as a whole', async () => {
    const dcql_query = { credentials: [{ id: 'only', format: 'dc+sd-jwt', claims: [{ path: ['age_over_18'], values: [true] }] }] };
    const transaction_data = [{ type: 'payment', credential_ids: ['only'] }];
    const reply = await patch(acme, 'patchable', { dcql_query, transaction_data });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ dcql_query, transaction_data, lifeTime: 300, accessKeyChainId: 'verifier-access' });
  });

  it('updates and clears references, keeping the columns in step', async () => {
    let reply = await patch(acme, 'patchable', { webhookEndpointId: 'hooks', accessKeyChainId: null });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ webhookEndpointId: 'hooks', accessKeyChainId: null });
    expect(await row('acme', 'patchable')).toMatchObject({ webhook_endpoint_id: 'hooks', access_key_chain_id: null });
    reply = await patch(acme, 'patchable', { webhookEndpointId: null, accessKeyChainId: 'verifier-access' });
    expect(reply.body).toMatchObject({ webhookEndpointId: null, accessKeyChainId: 'verifier-access' });
    expect(await row('acme', 'patchable')).toMatchObject({ webhook_endpoint_id: null, access_key_chain_id: 'verifier-access' });
  });

  it('accepts the id only when it names the same configuration', async () => {
    expect((await patch(acme, 'patchable', { id: 'patchable', lifeTime: 30 })).body.lifeTime).toBe(30);
    expectFieldErrors(await patch(acme, 'patchable', { id: 'renamed' }), ['body.id']);
    expect((await get(acme, 'renamed')).status).toBe(404);
  });
});

describe('registrationCertCache', () => {
  const setCache = (id: string, cache: unknown) =>
    svc.db
      .updateTable('presentation_configs')
      .set({ registration_cert_cache: JSON.stringify(cache) })
      .where('tenant_id', '=', 'acme')
      .where('id', '=', id)
      .execute();

  it('ignores a value given on create, replace and PATCH', async () => {
    const body = { ...MINIMAL, id: 'cached', registration_cert: { purpose: 'kyc' }, registrationCertCache: { jwt: 'forged' } };
    expect((await created(acme, body)).registrationCertCache).toBeNull();
    expect((await row('acme', 'cached'))?.registration_cert_cache).toBeNull();

    // As the registrar feature fills it.
    await setCache('cached', { jwt: 'from-registrar' });
    expect((await get(acme, 'cached')).body.registrationCertCache).toEqual({ jwt: 'from-registrar' });
    for (const reply of [
      await patch(acme, 'cached', { registrationCertCache: null, description: 'x' }),
      await patch(acme, 'cached', { registrationCertCache: { jwt: 'forged' } }),
      await save(acme, body),
    ]) {
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body.registrationCertCache).toEqual({ jwt: 'from-registrar' });
    }
  });

  it('is cleared when the registration certificate request changes', async () => {
    const reply = await patch(acme, 'cached', { registration_cert: { purpose: 'age verification' } });
    expect(reply.body.registrationCertCache).toBeNull();
    expect((await row('acme', 'cached'))?.registration_cert_cache).toBeNull();
  });
});

describe('webhooks', () => {
  const WEBHOOK = { url: 'https://rp.example.com/claims', auth: { type: 'header', header: { name: 'Authorization', value: SECRET } } };
  const MASKED = { url: WEBHOOK.url, auth: { type: 'header', header: { name: 'Authorization', value: '****' } } };

  it('stores the deprecated webhook encrypted and never answers its header value', async () => {
    const body = await created(acme, { ...MINIMAL, id: 'hooked', webhook: WEBHOOK });
    expect(body.webhook).toEqual(MASKED);
    expect((await get(acme, 'hooked')).body.webhook).toEqual(MASKED);
    const list = (await svc.call('GET', PATH, { token: acme })).text;
    expect(list).not.toContain(SECRET);

    const stored = await row('acme', 'hooked');
    expect(stored?.webhook).toMatch(/^v1\./);
    expect(stored?.webhook).not.toContain('s3cret');
    expect(stored?.document).not.toContain('s3cret');
    expect(stored?.document).not.toContain('rp.example.com/claims');
  });

  it('gives the verification feature the decrypted webhook', async () => {
    const services = svc.running.services;
    const config = await services.presentationConfigs.get('acme', 'hooked');
    expect(config.webhook).toEqual(MASKED);
    expect(await services.presentationConfigs.resolveWebhook('acme', config)).toEqual({
      url: WEBHOOK.url,
      headers: { Authorization: SECRET },
      signingSecrets: [expect.stringMatching(/^whsec_/)],
    });
    const minimal = await services.presentationConfigs.get('acme', 'minimal');
    expect(await services.presentationConfigs.resolveWebhook('acme', minimal)).toBeNull();
    const full = await services.presentationConfigs.get('acme', 'full');
    expect(await services.presentationConfigs.resolveWebhook('acme', full)).toEqual({
      url: 'https://hooks.example.com/claims',
      headers: { 'X-Api-Key': 'k1' },
      signingSecrets: [expect.stringMatching(/^whsec_/)],
    });
    await expect(services.presentationConfigs.get('globex', 'hooked')).rejects.toMatchObject({ status: 404 });
  });

  it('keeps the stored header value when **** is sent back, and replaces it when a new one is', async () => {
    const resolve = async () =>
      svc.running.services.presentationConfigs.resolveWebhook('acme', await svc.running.services.presentationConfigs.get('acme', 'hooked'));
    const roundTrip = await patch(acme, 'hooked', { webhook: { ...MASKED, url: 'https://rp.example.com/claims/v2' } });
    expect(roundTrip.status, roundTrip.text).toBe(200);
    expect(await resolve()).toMatchObject({ url: 'https://rp.example.com/claims/v2', headers: { Authorization: SECRET } });

    const renamed = await patch(acme, 'hooked', {
      webhook: { url: WEBHOOK.url, auth: { type: 'header', header: { name: 'X-Key', value: '****' } } },
    });
    expectFieldErrors(renamed, ['body.webhook.auth.header.value']);

    expect(
      (await patch(acme, 'hooked', { webhook: { url: WEBHOOK.url, auth: { type: 'header', header: { name: 'X-Key', value: 'new' } } } }))
        .status,
    ).toBe(200);
    expect(await resolve()).toMatchObject({ url: WEBHOOK.url, headers: { 'X-Key': 'new' } });

    const cleared = await patch(acme, 'hooked', { webhook: null });
    expect(cleared.body.webhook).toBeNull();
    expect((await row('acme', 'hooked'))?.webhook).toBeNull();
  });

  it('takes a webhook without auth as auth none', async () => {
    const body = await created(acme, { ...MINIMAL, id: 'open-hook', webhook: { url: 'https://rp.example.com/open' } });
    expect(body.webhook).toEqual({ url: 'https://rp.example.com/open', auth: { type: 'none' } });
    expect(await svc.running.services.presentationConfigs.resolveWebhook('acme', body)).toEqual({
      url: 'https://rp.example.com/open',
      headers: {},
      signingSecrets: [body.webhookSigningSecret],
    });
  });

  it('refuses **** when no header value is stored', async () => {
    expectFieldErrors(await save(acme, { ...MINIMAL, id: 'masked-new', webhook: MASKED }), ['body.webhook.auth.header.value']);
  });
});

describe('tenant isolation', () => {
  it("hides another tenant's configuration and leaves it unchanged", async () => {
    await created(acme, { ...MINIMAL, id: 'acme-only', description: 'mine' });
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { description: 'theirs' }],
      ['DELETE', undefined],
    ] as const) {
      const reply = await svc.call(method, `${PATH}/acme-only`, { token: globex, body });
      expect(reply.status, method).toBe(404);
    }
    const theirs = (await svc.call('GET', PATH, { token: globex })).body.map((c: { id: string }) => c.id);
    expect(theirs).not.toContain('acme-only');
    expect(theirs).not.toContain('full');
    expect((await get(acme, 'acme-only')).body.description).toBe('mine');
  });

  it("creates its own configuration when another tenant's has the same id", async () => {
    const reply = await save(globex, { ...MINIMAL, id: 'acme-only', description: 'globex' });
    expect(reply.status).toBe(201);
    expect(reply.body.tenantId).toBe('globex');
    expect((await get(acme, 'acme-only')).body.description).toBe('mine');
  });
});

describe('delete', () => {
  it('deletes, then the configuration is gone', async () => {
    await created(acme, { ...MINIMAL, id: 'short-lived' });
    const reply = await remove(acme, 'short-lived');
    expect(reply.status).toBe(204);
    expect(reply.text).toBe('');
    expect((await get(acme, 'short-lived')).status).toBe(404);
    expect(await row('acme', 'short-lived')).toBeUndefined();
    expect((await remove(acme, 'short-lived')).status).toBe(404);
  });
});

describe('references in use', () => {
  it('refuses to delete the access key chain a configuration signs with, until it no longer does', async () => {
    const kc = await svc.call('POST', '/api/key-chain', { token: acme, body: { id: 'in-use', usageType: 'access', type: 'standalone' } });
    expect(kc.status).toBe(201);
    await created(acme, { ...MINIMAL, id: 'kc-user', accessKeyChainId: 'in-use' });
    const refused = await svc.call('DELETE', '/api/key-chain/in-use', { token: acme });
    expect(refused.status).toBe(409);
    expect(problemOf(refused).detail).toBe("key chain 'in-use' is in use: presentation configuration 'kc-user'");
    expect((await svc.call('GET', '/api/key-chain/in-use', { token: acme })).status).toBe(200);

    expect((await patch(acme, 'kc-user', { accessKeyChainId: null })).status).toBe(200);
    expect((await svc.call('DELETE', '/api/key-chain/in-use', { token: acme })).status).toBe(204);
  });

  it('refuses to delete a webhook endpoint a configuration notifies, until it is deleted', async () => {
    const endpoint = { id: 'hook-in-use', name: 'Hook', url: 'https://hook.example.com/', auth: { type: 'none' } };
    expect((await svc.raw('POST', '/api/issuer/webhook-endpoints', { token: acme, body: endpoint })).status).toBe(201);
    await created(acme, { ...MINIMAL, id: 'hook-user', webhookEndpointId: 'hook-in-use' });
    const refused = await svc.call('DELETE', '/api/issuer/webhook-endpoints/hook-in-use', { token: acme });
    expect(refused.status).toBe(409);
    expect(problemOf(refused).detail).toBe("webhook endpoint 'hook-in-use' is in use: presentation configuration 'hook-user'");

    expect((await remove(acme, 'hook-user')).status).toBe(204);
    expect((await svc.call('DELETE', '/api/issuer/webhook-endpoints/hook-in-use', { token: acme })).status).toBe(204);
  });
});

describe('access', () => {
  it('needs presentation:manage', async () => {
    const admin = await svc.tenant('roles');
    const requester = await svc.client(admin.token, 'requester', ['presentation:request']);
    const manager = await svc.client(admin.token, 'manager', ['presentation:manage']);
    expect((await svc.call('GET', PATH, { token: requester })).status).toBe(403);
    expect((await save(requester, MINIMAL)).status).toBe(403);
    expect((await save(manager, MINIMAL)).status).toBe(201);
    expect((await svc.call('GET', PATH, { token: await svc.rootToken() })).status).toBe(403);
  });
});

describe('audit', () => {
  it('records create, update and delete with before and after, and no secret', async () => {
    const rid = `audit-${Date.now()}`;
    const headers = { 'x-request-id': rid };
    const webhook = { url: 'https://rp.example.com/audit', auth: { type: 'header', header: { name: 'X-Key', value: SECRET } } };
    await svc.raw('POST', PATH, { token: acme, headers, body: { ...MINIMAL, id: 'audited', webhook } });
    await svc.raw('POST', PATH, { token: acme, headers, body: { ...MINIMAL, id: 'audited', description: 'replaced', webhook } });
    await svc.call('PATCH', `${PATH}/audited`, { token: acme, headers, body: { description: 'changed' } });
    await svc.call('DELETE', `${PATH}/audited`, { token: acme, headers });
    const entries = (await svc.raw('GET', '/api/admin/audit-logs?limit=500', { token: acme })).body.filter(
      (e: { requestId: string }) => e.requestId === rid,
    );
    expect(entries.map((e: { actionType: string }) => e.actionType).sort()).toEqual([
      'presentation_config.created',
      'presentation_config.deleted',
      'presentation_config.updated',
      'presentation_config.updated',
    ]);
    const byAction = (action: string) => entries.filter((e: { actionType: string }) => e.actionType === action);
    const maskedHook = { url: webhook.url, auth: { type: 'header', header: { name: 'X-Key', value: '****' } } };
    expect(byAction('presentation_config.created')[0]).toMatchObject({
      tenantId: 'acme',
      before: null,
      after: { id: 'audited', dcql_query: MINIMAL.dcql_query, webhook: maskedHook },
    });
    const [patched, replaced] = byAction('presentation_config.updated');
    expect(replaced).toMatchObject({ before: { description: null }, after: { description: 'replaced', webhookAuthReplaced: true } });
    expect(patched.changedFields).toEqual(['description', 'updatedAt']);
    expect(patched).toMatchObject({ before: { description: 'replaced' }, after: { description: 'changed' } });
    expect(patched.after.webhookAuthReplaced).toBeUndefined();
    expect(byAction('presentation_config.deleted')[0]).toMatchObject({ before: { id: 'audited', description: 'changed' }, after: null });

    const stored = await svc.db.selectFrom('audit_log').select(['before', 'after']).where('request_id', '=', rid).execute();
    expect(JSON.stringify(stored)).not.toContain('s3cret');
  });
});
