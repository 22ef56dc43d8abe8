// Publishing schema metadata at the tenant's registrar: an id reserved, the payload signed with the
// tenant's access certificate chain (checked here with jose, independently of the service), the
// record passed on; new versions, the catalog's reads, deprecation, category and tags; the payload
// the service would sign for a credential configuration; and nothing reaching the registrar when
// the input is wrong, the caller lacks the role, or the data is another tenant's.
import { X509Certificate } from 'node:crypto';
import { decodeProtectedHeader, importX509, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, fieldsOf, problemOf } from '../support/problems.js';
import { type RegistrarFake, startRegistrarFake } from '../support/registrar-fake.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let registrar: RegistrarFake;
let token: string;
const ACCOUNT = { username: 'rp-operator', password: 'registrar password', clientId: 'swagger' };

const PID = {
  id: 'pid',
  vct: 'urn:eudi:pid:1',
  config: { format: 'dc+sd-jwt' },
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true },
    { path: ['family_name'], type: 'string', mandatory: true },
    { path: ['address'], type: 'object', children: [{ path: ['locality'], type: 'string' }] },
    { path: ['age_over_18'], type: 'boolean' },
  ],
};
const MDL = {
  id: 'mdl',
  config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
  fields: [
    { path: ['given_name'], type: 'string', namespace: 'org.iso.18013.5.1', mandatory: true },
    { path: ['resident_city'], type: 'string', namespace: 'org.iso.18013.5.1.aamva' },
  ],
};
const CONFIG = {
  version: '1.0.0',
  nameHint: 'pid',
  rulebookURI: 'https://rulebooks.example.com/pid/1.0.0.md',
  rulebookIntegrity: 'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=',
  attestationLoS: 'iso_18045_high',
  bindingType: 'key',
  trustedAuthorities: [{ value: 'https://trust.example.com/lote.json', isLoTE: true }],
  category: 'identity',
  tags: ['pid', 'eudi'],
};

async function registrarFor(tenantToken: string, registrarUrl = registrar.url) {
  const reply = await svc.call('POST', '/api/registrar/config', {
    token: tenantToken,
    body: { registrarUrl, oidcUrl: registrar.oidcUrl, clientId: ACCOUNT.clientId, username: ACCOUNT.username, password: ACCOUNT.password },
  });
  expect(reply.status, reply.text).toBe(200);
}

async function configure(tenantToken: string, configuration: object) {
  const reply = await svc.raw('POST', '/api/issuer/credentials', { token: tenantToken, body: configuration });
  expect(reply.status, reply.text).toBe(201);
}

beforeAll(async () => {
  svc = await startService();
  registrar = await startRegistrarFake(ACCOUNT);
  token = (await svc.tenant('publisher', ['registrar:manage', 'issuance:manage', 'presentation:manage', 'clients:manage'])).token;
  await registrarFor(token);
  await configure(token, PID);
  await configure(token, MDL);
});
afterAll(async () => {
  await svc.stop();
  await registrar.stop();
});

let published: any;

describe('publish', () => {
  it('reserves an id, signs the payload with the access certificate chain, submits it and links the credential configuration', async () => {
    const reply = await svc.raw('POST', '/api/schema-metadata/publish', { token, body: { config: CONFIG, credentialConfigId: 'pid' } });
    expect(reply.status, reply.text).toBe(201);
    published = reply.body;
    expect(registrar.schemaMetadata.nameHints).toEqual(['pid']);
    const [reservedId] = registrar.schemaMetadata.reservations.keys();
    expect(published).toMatchObject({
      id: reservedId,
      version: '1.0.0',
      attestationLoS: 'iso_18045_high',
      bindingType: 'key',
      supportedFormats: ['dc+sd-jwt'],
      category: 'identity',
      tags: ['pid', 'eudi'],
      deprecated: false,
    });

    // The JWT the registrar received, checked with jose alone.
    const [jwt] = registrar.schemaMetadata.submitted as [string];
    const header = decodeProtectedHeader(jwt);
    expect(header).toMatchObject({ typ: 'attestation-schema+jwt', alg: 'ES256' });
    const access = (await svc.call('GET', '/api/key-chain/default-access', { token })).body;
    const leafDer = new X509Certificate(access.activeCertificate).raw.toString('base64');
    expect(header.x5c?.[0]).toBe(leafDer);
    const key = await importX509(`-----BEGIN CERTIFICATE-----\n${header.x5c?.[0]}\n-----END CERTIFICATE-----`, 'ES256');
    const { payload } = await jwtVerify(jwt, key, { typ: 'attestation-schema+jwt' });
    expect(Math.abs((payload.iat as number) - Date.now() / 1000)).toBeLessThan(60);
    expect(payload).toEqual({
      id: `${registrar.url}/schema-metadata/${reservedId}`,
      version: '1.0.0',
      rulebookURI: CONFIG.rulebookURI,
      rulebookIntegrity: CONFIG.rulebookIntegrity,
      attestationLoS: 'iso_18045_high',
      bindingType: 'key',
      schemaURIs: [
        {
          formatIdentifier: 'dc+sd-jwt',
          meta: { vct: 'urn:eudi:pid:1' },
          schemaContent: expect.objectContaining({
            type: 'object',
            required: ['given_name', 'family_name'],
            properties: expect.objectContaining({ given_name: { type: 'string' }, age_over_18: { type: 'boolean' } }),
          }),
        },
      ],
      trustedAuthorities: [{ frameworkType: 'etsi_tl', value: 'https://trust.example.com/lote.json', isLoTE: true }],
      iat: expect.any(Number),
    });

    // The credential configuration now names the attestation id.
    const pid = (await svc.call('GET', '/api/issuer/credentials/pid', { token })).body;
    expect(pid.schemaMeta).toEqual({ ...CONFIG, id: payload.id });
  });

  it('publishes a new version by the short id or the reserved URL; the registrar refuses a version it has (409)', async () => {
    const next = await svc.raw('POST', '/api/schema-metadata/publish-version', {
      token,
      body: { config: { ...CONFIG, id: published.id, version: '1.1.0', category: undefined, tags: undefined }, credentialConfigId: 'pid' },
    });
    expect(next.status, next.text).toBe(201);
    expect(next.body).toMatchObject({ id: published.id, version: '1.1.0' });
    const url = `${registrar.url}/schema-metadata/${published.id}`;
    expect(decodeProtectedHeader(next.body.signedJwt).typ).toBe('attestation-schema+jwt');
    const alias = await svc.raw('POST', '/api/schema-metadata/sign-version', {
      token,
      body: { config: { ...CONFIG, id: url, version: '2.0.0' }, credentialConfigId: 'pid' },
    });
    expect(alias.status, alias.text).toBe(201);
    expect((await svc.call('GET', '/api/issuer/credentials/pid', { token })).body.schemaMeta).toMatchObject({ id: url, version: '2.0.0' });
    const duplicate = await svc.raw('POST', '/api/schema-metadata/publish-version', {
      token,
      body: { config: { ...CONFIG, id: url, version: '1.1.0' }, credentialConfigId: 'pid' },
    });
    expectProblem(duplicate, 409);
    expect(problemOf(duplicate).detail).toContain('already exists');
    const unknown = await svc.raw('POST', '/api/schema-metadata/publish-version', {
      token,
      body: { config: { ...CONFIG, id: 'no-such-id' }, credentialConfigId: 'pid' },
    });
    expectProblem(unknown, 404);
  });

  it('publishes an mdoc configuration with its doctype, and with explicit schema URIs through the deprecated alias', async () => {
    const mdoc = await svc.call('POST', '/api/schema-metadata/publish', {
      token,
      body: { config: { version: '1.0.0', attestationLoS: 'iso_18045_moderate', bindingType: 'key' }, credentialConfigId: 'mdl' },
    });
    expect(mdoc.status, mdoc.text).toBe(201);
    expect(mdoc.body.supportedFormats).toEqual(['mso_mdoc']);
    expect(mdoc.body.schemaURIs[0]).toMatchObject({
      formatIdentifier: 'mso_mdoc',
      meta: { doctype_value: 'org.iso.18013.5.1.mDL' },
      schemaContent: { properties: { 'org.iso.18013.5.1': { properties: { given_name: { type: 'string' } } } } },
    });
    const explicit = await svc.call('POST', '/api/schema-metadata/sign', {
      token,
      body: {
        config: {
          version: '0.1.0',
          attestationLoS: 'iso_18045_basic',
          bindingType: 'none',
          schemaURIs: [
            { formatIdentifier: 'dc+sd-jwt', uri: 'https://schemas.example.com/loyalty.json', meta: { vct: 'urn:example:loyalty' } },
          ],
        },
      },
    });
    expect(explicit.status, explicit.text).toBe(201);
    expect(explicit.body.schemaURIs[0]).toMatchObject({
      uri: 'https://schemas.example.com/loyalty.json',
      meta: { vct: 'urn:example:loyalty' },
    });
  });

  it('checks the input before calling the registrar, naming the fields', async () => {
    const before = { submitted: registrar.schemaMetadata.submitted.length, reserved: registrar.schemaMetadata.reservations.size };
    const cases: [object, string[]][] = [
      [{ config: { ...CONFIG, id: 'x' }, credentialConfigId: 'pid' }, ['body.config.id']],
      [{ config: CONFIG }, ['body.config.schemaURIs']],
      [{ config: CONFIG, credentialConfigId: 'nope' }, ['body.credentialConfigId']],
      [
        { config: { ...CONFIG, version: '1.0', attestationLoS: 'high', extra: 1 } },
        ['body.config.extra', 'body.config.version', 'body.config.attestationLoS'],
      ],
      [
        { config: { ...CONFIG, schemaURIs: [{ formatIdentifier: 'mso_mdoc', uri: 'https://s.example.com/x.json' }] } },
        ['body.config.schemaURIs.0.meta'],
      ],
      [{ config: { ...CONFIG, schemaURIs: [{ formatIdentifier: 'dc+sd-jwt', meta: { vct: 'x' } }] } }, ['body.config.schemaURIs.0.uri']],
      [{ config: { ...CONFIG, tags: ['unknown'] }, credentialConfigId: 'pid' }, ['body.config.tags.0']],
      [{}, ['body.config']],
    ];
    for (const [body, fields] of cases) {
      const reply = await svc.raw('POST', '/api/schema-metadata/publish', { token, body });
      expectProblem(reply, 400);
      expect(fieldsOf(reply).sort(), JSON.stringify(body)).toEqual(fields.sort());
    }
    expect(registrar.schemaMetadata.submitted.length).toBe(before.submitted);
    expect(registrar.schemaMetadata.reservations.size).toBe(before.reserved);
  });
});

describe('catalog', () => {
  it('lists, filters, and reads versions, the JWT and the schemas', async () => {
    const all = await svc.call('GET', '/api/schema-metadata', { token });
    expect(all.status, all.text).toBe(200);
    expect(all.body.length).toBe(5);
    const one = await svc.call(
      'GET',
      `/api/schema-metadata?attestationId=${encodeURIComponent(`${registrar.url}/schema-metadata/${published.id}`)}&version=1.1.0`,
      {
        token,
      },
    );
    expect(one.body.map((r) => [r.id, r.version])).toEqual([[published.id, '1.1.0']]);
    const versions = await svc.call('GET', `/api/schema-metadata/${published.id}/versions`, { token });
    expect(versions.body.map((r) => r.version)).toEqual(['2.0.0', '1.1.0', '1.0.0']);
    const jwt = await svc.call('GET', `/api/schema-metadata/${published.id}/versions/1.0.0/jwt`, { token });
    expect(jwt.status).toBe(200);
    expect(jwt.headers.get('content-type')).toContain('application/jwt');
    expect(jwt.text).toBe(published.signedJwt);
    const schema = await svc.call('GET', `/api/schema-metadata/${published.id}/versions/1.0.0/schemas/dc+sd-jwt`, { token });
    expect(schema.status, schema.text).toBe(200);
    expect(schema.body).toEqual(published.schemaURIs[0].schemaContent);
    expectProblem(await svc.call('GET', `/api/schema-metadata/${published.id}/versions/1.0.0/schemas/mso_mdoc`, { token }), 404);
    expectProblem(await svc.call('GET', '/api/schema-metadata/unknown/versions', { token }), 404);
    expectProblem(await svc.call('GET', `/api/schema-metadata/${published.id}/versions/9.9.9/jwt`, { token }), 404);
    const badVersion = await svc.call('GET', `/api/schema-metadata/${published.id}/versions/latest/jwt`, { token });
    expectProblem(badVersion, 400);
    expect(fieldsOf(badVersion)).toEqual(['params.version']);
  });

  it('answers the vocabularies', async () => {
    const reply = await svc.call('GET', '/api/schema-metadata/vocabularies', { token });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.version).toBe('2026-05-07');
    expect(reply.body.tags.map((t) => t.code)).toContain('age-verification');
  });

  it('lists what the tenant published as mine', async () => {
    registrar.catalog = [{ id: 'foreign', version: '1.0.0' }];
    const mine = await svc.call('GET', '/api/schema-metadata/mine', { token });
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body).toHaveLength(5);
    expect(mine.body.every((r) => r.id !== 'foreign')).toBe(true);
    registrar.catalog = [];
  });

  it('deprecates a version, and passes the refusal of a non-uploader on', async () => {
    const reply = await svc.call('PATCH', `/api/schema-metadata/${published.id}/versions/1.0.0/deprecation`, {
      token,
      body: { deprecated: true, message: 'use 2.0.0', supersededByVersion: '2.0.0' },
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ deprecated: true, deprecationMessage: 'use 2.0.0', supersededByVersion: '2.0.0' });
    const owner = registrar.schemaMetadata.owners.get(published.id) as { account: string };
    owner.account = 'another-relying-party';
    const refused = await svc.call('PATCH', `/api/schema-metadata/${published.id}/versions/1.0.0/deprecation`, {
      token,
      body: { deprecated: false },
    });
    expectProblem(refused, 502);
    expect(problemOf(refused).detail).toContain('403: only the uploader may change this schema metadata');
    owner.account = ACCOUNT.username;
    const invalid = await svc.raw('PATCH', `/api/schema-metadata/${published.id}/versions/1.0.0/deprecation`, {
      token,
      body: { message: 'x' },
    });
    expectProblem(invalid, 400);
    expect(fieldsOf(invalid)).toEqual(['body.deprecated']);
  });

  it('sets category and tags', async () => {
    const reply = await svc.call('PATCH', `/api/schema-metadata/${published.id}/versions/1.1.0`, {
      token,
      body: { category: 'finance', tags: ['kyc'] },
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ version: '1.1.0', category: 'finance', tags: ['kyc'] });
    const invalid = await svc.raw('PATCH', `/api/schema-metadata/${published.id}/versions/1.1.0`, { token, body: { category: 'sports' } });
    expectProblem(invalid, 400);
    expect(fieldsOf(invalid)).toEqual(['body.category']);
  });

  it('leaves its changes in the audit log', async () => {
    const log = await svc.raw('GET', '/api/admin/audit-logs?limit=500', { token });
    expect(log.status, log.text).toBe(200);
    const actions = log.body.map((entry: { actionType: string }) => entry.actionType);
    expect(actions).toEqual(
      expect.arrayContaining(['schema_metadata.published', 'schema_metadata.deprecation_changed', 'schema_metadata.classified']),
    );
    // Newest first: the last entry is the first publication.
    const entry = log.body.filter((e: { actionType: string }) => e.actionType === 'schema_metadata.published').at(-1);
    expect(entry.after).toMatchObject({ id: published.id, version: '1.0.0', credentialConfigId: 'pid' });
  });
});

describe('the payload of a credential configuration', () => {
  it('is built from its schemaMeta and fields, with the attestation id once published', async () => {
    const reply = await svc.call('GET', '/api/issuer/credentials/pid/schema-metadata', { token });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({
      id: `${registrar.url}/schema-metadata/${published.id}`,
      version: '2.0.0',
      attestationLoS: 'iso_18045_high',
      schemaURIs: [
        { formatIdentifier: 'dc+sd-jwt', meta: { vct: 'urn:eudi:pid:1' }, schemaContent: published.schemaURIs[0].schemaContent },
      ],
    });
    const mdl = await svc.raw('GET', '/api/issuer/credentials/mdl/schema-metadata', { token });
    expect(mdl.body.schemaURIs[0].meta).toEqual({ doctype_value: 'org.iso.18013.5.1.mDL' });
  });

  it('needs a schemaMeta, and hosts the vct of a configuration without one', async () => {
    await configure(token, { ...PID, id: 'hosted', vct: undefined });
    expectProblem(await svc.call('GET', '/api/issuer/credentials/hosted/schema-metadata', { token }), 409);
    const patched = await svc.call('PATCH', '/api/issuer/credentials/hosted', {
      token,
      body: { schemaMeta: { version: '1.0.0', attestationLoS: 'iso_18045_basic', bindingType: 'claim' } },
    });
    expect(patched.status, patched.text).toBe(200);
    const reply = await svc.raw('GET', '/api/issuer/credentials/hosted/schema-metadata', { token });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.id).toBeUndefined();
    expect(reply.body.schemaURIs[0].meta).toEqual({ vct: `${svc.url}/issuers/publisher/types/hosted` });
    const wrong = await svc.raw('PATCH', '/api/issuer/credentials/hosted', { token, body: { schemaMeta: { version: 'one' } } });
    expectProblem(wrong, 400);
    expect(fieldsOf(wrong)).toEqual(expect.arrayContaining(['body.schemaMeta.version', 'body.schemaMeta.attestationLoS']));
    expectProblem(await svc.call('GET', '/api/issuer/credentials/missing/schema-metadata', { token }), 404);

    // A schemaMeta stored before it was checked (any object was kept then) is a 409, not a 500.
    const stored = svc.db.selectFrom('credential_configs').where('tenant_id', '=', 'publisher').where('id', '=', 'hosted');
    const { document } = await stored.select('document').executeTakeFirstOrThrow();
    await svc.db
      .updateTable('credential_configs')
      .set({ document: JSON.stringify({ ...JSON.parse(document), schemaMeta: { version: 1, schemaURIs: 'x' } }) })
      .where('tenant_id', '=', 'publisher')
      .where('id', '=', 'hosted')
      .execute();
    // Seen once this instance's copy of the configuration has expired (CONFIG_CACHE_MS).
    const legacyRead = () => svc.raw('GET', '/api/issuer/credentials/hosted/schema-metadata', { token });
    await expect.poll(async () => (await legacyRead()).status).toBe(409);
    const legacy = await legacyRead();
    expectProblem(legacy, 409);
    expect(problemOf(legacy).detail).toContain('schemaMeta.version');
  });
});

describe('the API document', () => {
  it('marks the sign aliases deprecated and lists the operations under their tag', async () => {
    const { paths } = (await svc.raw('GET', '/api/openapi.json')).body;
    expect(paths['/api/schema-metadata/sign'].post.deprecated).toBe(true);
    expect(paths['/api/schema-metadata/sign-version'].post.deprecated).toBe(true);
    expect(paths['/api/schema-metadata/publish'].post.deprecated).toBeFalsy();
    expect(paths['/api/schema-metadata/{id}/versions/{version}'].patch.tags).toEqual(['schema metadata']);
  });
});

describe('access and isolation', () => {
  it('needs registrar:manage to publish and change, registrar:manage or issuance:manage to read', async () => {
    const issuer = await svc.client(token, 'issuer-only', ['issuance:manage']);
    const verifier = await svc.client(token, 'verifier-only', ['presentation:manage']);
    const body = { config: CONFIG, credentialConfigId: 'pid' };
    expectProblem(await svc.raw('POST', '/api/schema-metadata/publish', { token: issuer, body }), 403);
    expectProblem(await svc.raw('POST', '/api/schema-metadata/sign', { token: issuer, body }), 403);
    expectProblem(await svc.call('GET', '/api/schema-metadata/mine', { token: issuer }), 403);
    expectProblem(
      await svc.call('PATCH', `/api/schema-metadata/${published.id}/versions/1.0.0/deprecation`, {
        token: issuer,
        body: { deprecated: true },
      }),
      403,
    );
    expect((await svc.call('GET', '/api/schema-metadata', { token: issuer })).status).toBe(200);
    expect((await svc.call('GET', '/api/issuer/credentials/pid/schema-metadata', { token: issuer })).status).toBe(200);
    expectProblem(await svc.call('GET', '/api/schema-metadata', { token: verifier }), 403);
    expectProblem(await svc.call('GET', '/api/issuer/credentials/pid/schema-metadata', { token: verifier }), 403);
  });

  it("keeps another tenant's publications and configurations out of sight", async () => {
    const other = (await svc.tenant('other-publisher', ['registrar:manage', 'issuance:manage'])).token;
    expectProblem(await svc.call('GET', '/api/schema-metadata/mine', { token: other }), 404);
    await registrarFor(other);
    expect((await svc.call('GET', '/api/schema-metadata/mine', { token: other })).body).toEqual([]);
    expectProblem(await svc.call('GET', '/api/issuer/credentials/pid/schema-metadata', { token: other }), 404);
    const linked = await svc.raw('POST', '/api/schema-metadata/publish', {
      token: other,
      body: { config: CONFIG, credentialConfigId: 'pid' },
    });
    expectProblem(linked, 400);
    expect(fieldsOf(linked)).toEqual(['body.credentialConfigId']);
  });

  it('answers 502 when the registrar cannot be reached, and stores nothing', async () => {
    const down = (await svc.tenant('registrar-down', ['registrar:manage', 'issuance:manage'])).token;
    await registrarFor(down, 'http://127.0.0.1:9');
    await configure(down, PID);
    const reply = await svc.raw('POST', '/api/schema-metadata/publish', {
      token: down,
      body: { config: CONFIG, credentialConfigId: 'pid' },
    });
    expectProblem(reply, 502);
    expect(problemOf(reply).detail).toContain('could not be reached');
    expect((await svc.call('GET', '/api/issuer/credentials/pid', { token: down })).body.schemaMeta).toBeNull();
    expectProblem(await svc.call('GET', '/api/schema-metadata/vocabularies', { token: down }), 502);
  });
});
