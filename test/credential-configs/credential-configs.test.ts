import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIELD_TYPES } from '../../src/credential-configs/schemas.js';
import { claimsSchema, defaultClaims, validateClaims } from '../../src/credential-configs/service.js';
import { createdBody, expectFieldErrors, problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let acme: string;
let globex: string;

const PATH = '/api/issuer/credentials';

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  globex = (await svc.tenant('globex')).token;
  const setup: [string, string, string, Record<string, unknown>][] = [
    [acme, '/api/key-chain', 'signer', { usageType: 'attestation', type: 'standalone' }],
    [acme, '/api/issuer/attribute-providers', 'crm', { name: 'CRM', url: 'https://crm.example.com/claims', auth: { type: 'none' } }],
    [acme, '/api/issuer/webhook-endpoints', 'hooks', { name: 'Hooks', url: 'https://hooks.example.com/', auth: { type: 'none' } }],
    [globex, '/api/issuer/attribute-providers', 'globex-crm', { name: 'CRM', url: 'https://globex.example.com/', auth: { type: 'none' } }],
  ];
  for (const [token, path, id, body] of setup) {
    const reply = await svc.raw('POST', path, { token, body: { id, ...body } });
    if (reply.status !== 201) throw new Error(`${path}: ${reply.status} ${reply.text}`);
  }
});
afterAll(() => svc.stop());

const create = (token: string, body: unknown) => svc.raw('POST', PATH, { token, body });
const get = (token: string, id: string) => svc.call('GET', `${PATH}/${id}`, { token });
const patch = (token: string, id: string, body: unknown) => svc.raw('PATCH', `${PATH}/${id}`, { token, body });
const remove = (token: string, id: string) => svc.call('DELETE', `${PATH}/${id}`, { token });

async function created(token: string, body: Record<string, unknown>) {
  return createdBody(await create(token, body));
}

const row = (tenantId: string, id: string) =>
  svc.db.selectFrom('credential_configs').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();

/** Every field of the model, set. */
const PID = {
  id: 'pid',
  description: 'Person identification data',
  config: {
    format: 'dc+sd-jwt',
    display: [
      {
        name: 'PID',
        description: 'Personal ID',
        locale: 'en-US',
        background_color: '#12107c',
        text_color: '#FFFFFF',
        background_image: { uri: 'https://issuer.example.com/bg.png' },
        logo: { uri: 'https://issuer.example.com/logo.png', alt_text: 'issuer logo' },
      },
    ],
    scope: 'pid',
    keyAttestationsRequired: { key_storage: ['iso_18045_high'], user_authentication: ['iso_18045_moderate'] },
  },
  fields: [
    {
      path: ['given_name'],
      type: 'string',
      mandatory: true,
      disclosable: true,
      defaultValue: 'ERIKA',
      display: [{ locale: 'en-US', name: 'Given name', description: 'First name' }],
    },
    { path: ['birthdate'], type: 'date', mandatory: true, disclosable: true, defaultValue: '1964-08-12' },
    {
      path: ['address'],
      type: 'object',
      disclosable: true,
      children: [{ path: ['locality'], type: 'string', disclosable: true, defaultValue: 'KÖLN' }],
    },
    { path: ['nationalities'], type: 'array', children: [{ path: [null], type: 'string', constraints: { pattern: '^[A-Z]{2}$' } }] },
  ],
  vct: { name: 'PID', description: 'EU PID', display: [{ locale: 'en-US', name: 'PID' }], custom: 'kept as given' },
  iaeActions: [
    {
      type: 'redirect-to-web',
      url: 'https://issuer.example.com/consent',
      label: 'Consent',
      callbackKey: {
        kty: 'EC',
        crv: 'P-256',
        x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
        y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
      },
    },
  ],
  schemaMeta: { version: '1.0.0', attestationLoS: 'iso_18045_high', bindingType: 'key' },
  embeddedDisclosurePolicy: { policy: 'allow-list', values: ['https://verifier.example.com'] },
  attributeProviderId: 'crm',
  webhookEndpointId: 'hooks',
  keyBinding: false,
  keyChainId: 'signer',
  statusManagement: true,
  statusListSigner: 'issuer',
  sdJwtTrustFormat: 'federation',
  lifeTime: 86400,
};

const MDL = {
  id: 'mdl',
  config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
  fields: [
    { path: ['given_name'], type: 'string', namespace: 'org.iso.18013.5.1', mandatory: true },
    { path: ['resident_city'], type: 'string', namespace: 'org.iso.18013.5.1.aamva', defaultValue: 'KÖLN' },
  ],
};

const DEFAULTS = {
  description: null,
  vct: null,
  iaeActions: null,
  schemaMeta: null,
  embeddedDisclosurePolicy: null,
  attributeProviderId: null,
  webhookEndpointId: null,
  keyBinding: true,
  keyChainId: null,
  statusManagement: false,
  statusListSigner: 'statusList',
  sdJwtTrustFormat: 'x5c',
  lifeTime: null,
};

const stamps = { createdAt: expect.any(String), updatedAt: expect.any(String) };

describe('create, read, list', () => {
  it('creates an SD-JWT VC configuration with every field and returns it as stored', async () => {
    const before = Date.now();
    const reply = await create(acme, PID);
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toEqual({ ...PID, tenantId: 'acme', ...stamps });
    expect(reply.body.updatedAt).toBe(reply.body.createdAt);
    expect(Date.parse(reply.body.createdAt)).toBeGreaterThanOrEqual(before - 1000);

    expect((await get(acme, 'pid')).body).toEqual(reply.body);
    const stored = await row('acme', 'pid');
    const { id: _id, ...document } = PID;
    expect(JSON.parse(stored?.document as string)).toEqual(document);
    expect(stored).toMatchObject({ key_chain_id: 'signer', attribute_provider_id: 'crm', webhook_endpoint_id: 'hooks' });
  });

  it('creates an mdoc configuration and fills in the defaults', async () => {
    const body = await created(acme, MDL);
    // The scope defaults to the id (HAIP 1.0 section 4.1: every configuration has one).
    expect(body).toEqual({ ...MDL, config: { ...MDL.config, scope: 'mdl' }, ...DEFAULTS, tenantId: 'acme', ...stamps });
    expect(await row('acme', 'mdl')).toMatchObject({
      key_chain_id: null,
      attribute_provider_id: null,
      webhook_endpoint_id: null,
      scope: 'mdl',
    });
  });

  it("lists the tenant's configurations in creation order", async () => {
    const reply = await svc.call('GET', PATH, { token: acme });
    expect(reply.status).toBe(200);
    const ids = reply.body.map((c: { id: string }) => c.id);
    expect(ids.indexOf('pid')).toBeLessThan(ids.indexOf('mdl'));
    expect(reply.body.find((c: { id: string }) => c.id === 'mdl')).toEqual((await get(acme, 'mdl')).body);
  });

  it('refuses a duplicate id in the tenant, and accepts the same id in another tenant', async () => {
    const duplicate = await create(acme, { ...MDL, description: 'again' });
    expect(duplicate.status).toBe(409);
    expect(problemOf(duplicate).detail).toBe("credential configuration 'mdl' already exists");
    expect((await get(acme, 'mdl')).body.description).toBeNull();
    expect((await create(globex, MDL)).status).toBe(201);
  });

  it('answers 404 for unknown ids', async () => {
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { description: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const reply = await svc.call(method, `${PATH}/nope`, { token: acme, body });
      expect(reply.status, method).toBe(404);
      expect(problemOf(reply).detail).toBe("credential configuration 'nope' does not exist");
    }
  });
});

describe('validation', () => {
  const base = { id: 'v', config: { format: 'dc+sd-jwt' }, fields: [] };
  const mdocConfig = { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' };
  const cases: [string, Record<string, unknown>, string[]][] = [
    ['nothing', {}, ['body.id', 'body.config', 'body.fields']],
    ['an id with a space', { ...base, id: 'has space' }, ['body.id']],
    ['an id too long', { ...base, id: 'x'.repeat(65) }, ['body.id']],
    ['an unknown format', { ...base, config: { format: 'ldp_vc' } }, ['body.config.format']],
    ['mdoc without docType', { ...base, config: { format: 'mso_mdoc' } }, ['body.config.docType']],
    [
      'mdoc fields without namespace',
      {
        ...base,
        config: mdocConfig,
        fields: [
          { path: ['a'], type: 'string' },
          { path: ['b'], type: 'string', namespace: 'n' },
          { path: ['c'], type: 'string' },
        ],
      },
      ['body.fields.0.namespace', 'body.fields.2.namespace'],
    ],
    ['mdoc with a vct', { ...base, config: mdocConfig, vct: 'urn:x' }, ['body.vct']],
    ['docType on SD-JWT', { ...base, config: { format: 'dc+sd-jwt', docType: 'x' } }, ['body.config.docType']],
    ['a key chain that does not exist', { ...base, keyChainId: 'missing' }, ['body.keyChainId']],
    ['a key chain of another usage type', { ...base, keyChainId: 'default-access' }, ['body.keyChainId']],
    ['an attribute provider that does not exist', { ...base, attributeProviderId: 'missing' }, ['body.attributeProviderId']],
    ["another tenant's attribute provider", { ...base, attributeProviderId: 'globex-crm' }, ['body.attributeProviderId']],
    ['a webhook endpoint that does not exist', { ...base, webhookEndpointId: 'missing' }, ['body.webhookEndpointId']],
    [
      'three bad references at once',
      { ...base, keyChainId: 'missing', attributeProviderId: 'missing', webhookEndpointId: 'missing' },
      ['body.keyChainId', 'body.attributeProviderId', 'body.webhookEndpointId'],
    ],
    ['a zero lifetime', { ...base, lifeTime: 0 }, ['body.lifeTime']],
    ['a fractional lifetime', { ...base, lifeTime: 1.5 }, ['body.lifeTime']],
    ['an unknown trust format', { ...base, sdJwtTrustFormat: 'jwks' }, ['body.sdJwtTrustFormat']],
    ['an unknown policy', { ...base, embeddedDisclosurePolicy: { policy: 'anything' } }, ['body.embeddedDisclosurePolicy.policy']],
    ['a non-boolean keyBinding', { ...base, keyBinding: 'yes' }, ['body.keyBinding']],
    ['an empty path', { ...base, fields: [{ path: [], type: 'string' }] }, ['body.fields.0.path']],
    ['a negative index', { ...base, fields: [{ path: ['a', -1], type: 'string' }] }, ['body.fields.0.path.1']],
    ['an unknown field type', { ...base, fields: [{ path: ['a'], type: 'uuid' }] }, ['body.fields.0.type']],
    ['a field without type', { ...base, fields: [{ path: ['a'] }] }, ['body.fields.0.type']],
    [
      'an unknown constraint',
      { ...base, fields: [{ path: ['a'], type: 'string', constraints: { format: 'email' } }] },
      ['body.fields.0.constraints.format'],
    ],
    [
      'children of a string',
      { ...base, fields: [{ path: ['a'], type: 'string', children: [{ path: ['b'], type: 'string' }] }] },
      ['body.fields.0.children'],
    ],
    [
      'a default value of the wrong type, deep in children',
      { ...base, fields: [{ path: ['a'], type: 'object', children: [{ path: ['b'], type: 'integer', defaultValue: '7' }] }] },
      ['body.fields.0.children.0.defaultValue'],
    ],
    ['an unknown field', { ...base, unknown: 1 }, ['body.unknown']],
  ];

  it.each(cases)('answers 400 naming the field(s) for %s, and stores nothing', async (_name, body, fields) => {
    expectFieldErrors(await create(acme, body), fields);
    expect(await row('acme', 'v')).toBeUndefined();
  });

  it('names the field and the rule in the message', async () => {
    const reply = await create(acme, {
      ...base,
      config: { format: 'mso_mdoc' },
      keyChainId: 'default-access',
      fields: [{ path: ['a'], type: 'string' }],
    });
    expect(problemOf(reply).errors).toEqual([
      { field: 'body.config.docType', message: 'is required when config.format is mso_mdoc' },
      { field: 'body.fields.0.namespace', message: 'is required on every field when config.format is mso_mdoc' },
      {
        field: 'body.keyChainId',
        message: "key chain 'default-access' has usage type access; credentials are signed with attestation key chains",
      },
    ]);
    expect(problemOf(reply).detail).toContain('body.config.docType: is required when config.format is mso_mdoc');
  });

  const LEGACY_ERRORS = [
    { field: 'body.config.namespace', message: 'removed in version 5: use fields[].namespace' },
    { field: 'body.config.claimsByNamespace', message: 'removed in version 5: use fields[].namespace' },
    { field: 'body.config.claimsMetadata', message: 'removed in version 5: use fields[].display and fields[].mandatory' },
    { field: 'body.claims', message: 'removed in version 5: use fields[].defaultValue' },
    { field: 'body.disclosureFrame', message: 'removed in version 5: use fields[].disclosable' },
    { field: 'body.schema', message: 'removed in version 5: the JSON schema is derived from fields' },
  ];
  const legacy = {
    config: { format: 'mso_mdoc', docType: 'x', namespace: 'ns', claimsByNamespace: { ns: {} }, claimsMetadata: {} },
    claims: { given_name: 'ERIKA' },
    disclosureFrame: { _sd: ['given_name'] },
    schema: null,
  };

  it('refuses each version-4 key, naming its replacement', async () => {
    const reply = await create(acme, { ...base, ...legacy });
    expect(reply.status).toBe(400);
    expect(problemOf(reply).errors).toEqual(LEGACY_ERRORS);
    for (const [key, value] of Object.entries({ claims: {}, disclosureFrame: {}, schema: {} })) {
      const one = await create(acme, { ...base, [key]: value });
      expect(one.body.errors, key).toEqual(LEGACY_ERRORS.filter((e) => e.field === `body.${key}`));
    }
  });

  it('refuses the version-4 keys on PATCH too', async () => {
    const reply = await patch(acme, 'mdl', legacy);
    expect(reply.status).toBe(400);
    expect(problemOf(reply).errors).toEqual(LEGACY_ERRORS);
  });
});

describe('update', () => {
  const BODY = {
    id: 'patchable',
    description: 'first',
    config: { format: 'dc+sd-jwt', display: [{ name: 'Card' }], scope: 'card' },
    fields: [{ path: ['name'], type: 'string', mandatory: true }],
    vct: 'urn:example:card',
    attributeProviderId: 'crm',
    lifeTime: 60,
    sdJwtTrustFormat: 'federation',
  };
  let original: Record<string, unknown>;
  beforeAll(async () => {
    original = await created(acme, BODY);
  });

  it('replaces the top-level fields given, clears those set to null, keeps the rest', async () => {
    const reply = await patch(acme, 'patchable', { description: null, lifeTime: 3600, statusManagement: true, sdJwtTrustFormat: null });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({
      ...original,
      description: null,
      lifeTime: 3600,
      statusManagement: true,
      sdJwtTrustFormat: 'x5c',
      updatedAt: expect.any(String),
    });
    expect(reply.body.createdAt).toBe(original.createdAt);
    expect(Date.parse(reply.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(original.createdAt as string));
    expect((await get(acme, 'patchable')).body).toEqual(reply.body);
  });

  it('replaces config and fields as a whole', async () => {
    const fields = [{ path: ['title'], type: 'string', defaultValue: 'Dr.' }];
    const reply = await patch(acme, 'patchable', { config: { format: 'dc+sd-jwt', scope: 'card-2' }, fields });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.config).toEqual({ format: 'dc+sd-jwt', scope: 'card-2' });
    expect(reply.body.fields).toEqual(fields);
    expect(reply.body.vct).toBe('urn:example:card');
  });

  it('updates and clears references, keeping the columns in step', async () => {
    let reply = await patch(acme, 'patchable', { keyChainId: 'signer', webhookEndpointId: 'hooks', attributeProviderId: null });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ keyChainId: 'signer', webhookEndpointId: 'hooks', attributeProviderId: null });
    expect(await row('acme', 'patchable')).toMatchObject({
      key_chain_id: 'signer',
      webhook_endpoint_id: 'hooks',
      attribute_provider_id: null,
    });
    reply = await patch(acme, 'patchable', { keyChainId: null, webhookEndpointId: null });
    expect(reply.body).toMatchObject({ keyChainId: null, webhookEndpointId: null });
    expect(await row('acme', 'patchable')).toMatchObject({ key_chain_id: null, webhook_endpoint_id: null });
  });

  it('accepts the id only when it names the same configuration', async () => {
    expect((await patch(acme, 'patchable', { id: 'patchable', keyBinding: false })).body.keyBinding).toBe(false);
    const reply = await patch(acme, 'patchable', { id: 'renamed' });
    expectFieldErrors(reply, ['body.id']);
    expect((await get(acme, 'renamed')).status).toBe(404);
  });

  it('checks the configuration as it would be after the change, and changes nothing when it fails', async () => {
    const before = (await get(acme, 'patchable')).body;
    const reply = await patch(acme, 'patchable', { config: { format: 'mso_mdoc' }, keyChainId: 'missing' });
    expectFieldErrors(reply, ['body.config.docType', 'body.vct', 'body.fields.0.namespace', 'body.keyChainId']);
    expect((await get(acme, 'patchable')).body).toEqual(before);
  });

  it('switches format when everything that depends on it changes together', async () => {
    const reply = await patch(acme, 'patchable', {
      config: { format: 'mso_mdoc', docType: 'org.example.card' },
      vct: null,
      fields: [{ path: ['name'], type: 'string', namespace: 'org.example.card.1' }],
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ config: { format: 'mso_mdoc', docType: 'org.example.card' }, vct: null });
  });
});

describe('delete', () => {
  it('deletes, then the configuration is gone', async () => {
    await created(acme, { id: 'short-lived', config: { format: 'dc+sd-jwt' }, fields: [] });
    const reply = await remove(acme, 'short-lived');
    expect(reply.status).toBe(204);
    expect(reply.text).toBe('');
    expect((await get(acme, 'short-lived')).status).toBe(404);
    expect(await row('acme', 'short-lived')).toBeUndefined();
    expect((await remove(acme, 'short-lived')).status).toBe(404);
  });
});

describe('tenant isolation', () => {
  it("hides another tenant's configuration and leaves it unchanged", async () => {
    await created(acme, { id: 'acme-only', description: 'mine', config: { format: 'dc+sd-jwt' }, fields: [] });
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
    expect(theirs).not.toContain('pid');
    expect((await get(acme, 'acme-only')).body.description).toBe('mine');
  });

  it('keeps same-named configurations of two tenants apart', async () => {
    const acmeMdl = (await get(acme, 'mdl')).body;
    const globexMdl = (await get(globex, 'mdl')).body;
    expect(acmeMdl.tenantId).toBe('acme');
    expect(globexMdl.tenantId).toBe('globex');
    await patch(globex, 'mdl', { description: 'globex' });
    expect((await get(acme, 'mdl')).body.description).toBeNull();
  });
});

describe('key chains in use', () => {
  it('refuses to delete a key chain a configuration signs with, until it no longer does', async () => {
    expect(
      (await svc.call('POST', '/api/key-chain', { token: acme, body: { id: 'in-use', usageType: 'attestation', type: 'standalone' } }))
        .status,
    ).toBe(201);
    await created(acme, { id: 'kc-user', config: { format: 'dc+sd-jwt' }, fields: [], keyChainId: 'in-use' });
    const refused = await svc.call('DELETE', '/api/key-chain/in-use', { token: acme });
    expect(refused.status).toBe(409);
    expect(problemOf(refused).detail).toBe("key chain 'in-use' is in use: credential configuration 'kc-user'");
    expect((await svc.call('GET', '/api/key-chain/in-use', { token: acme })).status).toBe(200);

    expect((await patch(acme, 'kc-user', { keyChainId: null })).status).toBe(200);
    expect((await svc.call('DELETE', '/api/key-chain/in-use', { token: acme })).status).toBe(204);
  });
});

describe('the claims model of a stored configuration', () => {
  it('gives the issuance feature the typed configuration, its schema, defaults and validation', async () => {
    const { credentialConfigs } = svc.running.services;
    const config = await credentialConfigs.get('acme', 'pid');
    expect(config).toMatchObject({ id: 'pid', tenantId: 'acme', keyChainId: 'signer' });
    expect((await credentialConfigs.list('acme')).map((c) => c.id)).toContain('pid');
    await expect(credentialConfigs.get('globex', 'pid')).rejects.toMatchObject({ status: 404 });

    const defaults = defaultClaims(config);
    expect(defaults).toEqual({ given_name: 'ERIKA', birthdate: '1964-08-12', address: { locality: 'KÖLN' } });
    expect(validateClaims(config, defaults)).toEqual([]);
    expect(validateClaims(config, { ...defaults, nationalities: ['de'], given_name: undefined })).toEqual([
      { path: ['given_name'], message: 'is required' },
      { path: ['nationalities', 0], message: 'must match ^[A-Z]{2}$' },
    ]);
    const schema = claimsSchema(config);
    expect(schema).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      required: ['given_name', 'birthdate'],
      properties: {
        given_name: { type: 'string', title: 'Given name', description: 'First name' },
        address: { type: 'object', properties: { locality: { type: 'string' } } },
        nationalities: { type: 'array', items: { type: 'string', pattern: '^[A-Z]{2}$' } },
      },
    });
    const mdl = await credentialConfigs.get('acme', 'mdl');
    expect(defaultClaims(mdl)).toEqual({ 'org.iso.18013.5.1.aamva': { resident_city: 'KÖLN' } });
  });
});

describe('hosted type metadata', () => {
  it('serves the type metadata of a format that has it, and 404 for a format without type metadata or an unknown configuration', async () => {
    const hosted = await svc.raw('GET', '/issuers/acme/types/pid');
    expect(hosted.status, hosted.text).toBe(200);
    expect(hosted.body).toEqual({ ...PID.vct, vct: `${svc.url}/issuers/acme/types/pid`, display: PID.config.display });
    // An mdoc names its type by docType: there is no type metadata to host.
    expect((await svc.raw('GET', '/issuers/acme/types/mdl')).status).toBe(404);
    expect((await svc.raw('GET', '/issuers/acme/types/missing')).status).toBe(404);
  });
});

describe('audit', () => {
  it('records create, update and delete with before and after', async () => {
    const rid = `audit-${Date.now()}`;
    const headers = { 'x-request-id': rid };
    await svc.call('POST', PATH, { token: acme, headers, body: { id: 'audited', config: { format: 'dc+sd-jwt' }, fields: [] } });
    await svc.call('PATCH', `${PATH}/audited`, { token: acme, headers, body: { description: 'changed' } });
    await svc.call('DELETE', `${PATH}/audited`, { token: acme, headers });
    const entries = (await svc.raw('GET', '/api/admin/audit-logs?limit=500', { token: acme })).body.filter(
      (e: { requestId: string }) => e.requestId === rid,
    );
    expect(entries.map((e: { actionType: string }) => e.actionType).sort()).toEqual([
      'credential_config.created',
      'credential_config.deleted',
      'credential_config.updated',
    ]);
    const byAction = Object.fromEntries(entries.map((e: { actionType: string }) => [e.actionType, e]));
    expect(byAction['credential_config.created']).toMatchObject({
      tenantId: 'acme',
      before: null,
      after: { id: 'audited', config: { format: 'dc+sd-jwt' }, description: null },
    });
    expect(byAction['credential_config.updated'].changedFields).toEqual(expect.arrayContaining(['description']));
    expect(byAction['credential_config.updated']).toMatchObject({ before: { description: null }, after: { description: 'changed' } });
    expect(byAction['credential_config.deleted']).toMatchObject({ before: { id: 'audited', description: 'changed' }, after: null });
  });
});

describe('OpenAPI', () => {
  it('documents the field model and the removed version-4 keys', async () => {
    const doc = (await svc.raw('GET', '/api/openapi.json')).body;
    const post = doc.paths['/api/issuer/credentials'].post;
    expect(post.description).toContain('issuance:manage');
    const body = post.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['id', 'config', 'fields']);
    expect(body.properties.claims.description).toContain('use fields[].defaultValue');
    expect(body.properties.config.properties.claimsMetadata.description).toContain('fields[].display and fields[].mandatory');
    const field = doc.components.schemas.FieldDefinition;
    expect(field.properties.type.enum).toEqual([...FIELD_TYPES]);
    expect(field.properties.children.anyOf[0].items.$ref).toBe('#/components/schemas/FieldDefinition');
    expect(doc.components.schemas.CredentialConfiguration.required).toContain('fields');
  });
});
