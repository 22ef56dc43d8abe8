// The verifier's import of schema metadata: a signed JWT (published by the service, or signed here
// by an author of our own) is verified and turned into a DCQL query that a presentation
// configuration accepts; from a URL the document is fetched under the outbound policy. Forged,
// malformed or expired input is a 400 naming the field, with the reason.
import 'reflect-metadata';
import { createHash, webcrypto } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as x509 from '@peculiar/x509';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, fieldsOf } from '../support/problems.js';
import { type RegistrarFake, startRegistrarFake } from '../support/registrar-fake.js';
import { startService, type TestService } from '../support/service.js';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

let svc: TestService;
let registrar: RegistrarFake;
let token: string;
let documents: Server;
let documentsUrl: string;
/** What the document server answers, by path. */
const served = new Map<string, unknown>();
const ACCOUNT = { username: 'rp-operator', password: 'registrar password', clientId: 'swagger' };
const META = { version: '1.0.0', attestationLoS: 'iso_18045_high', bindingType: 'key' };
const RESOLVE_JWT = '/api/verifier/config/schema-metadata/resolve-jwt';
const RESOLVE = '/api/verifier/config/schema-metadata/resolve';

const AUTHOR_SCHEMA = {
  type: 'object',
  required: ['member_id'],
  properties: {
    member_id: { type: 'string' },
    tier: { type: 'string' },
    household: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
  },
};

/** A schema author of our own: a P-256 key and a self-signed certificate valid in the window given. */
async function author(validFrom = -60_000, validTo = 3_600_000) {
  const keys = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '0a',
    name: 'CN=Schema Author, O=Author, C=DE',
    notBefore: new Date(Date.now() + validFrom),
    notAfter: new Date(Date.now() + validTo),
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
  });
  const x5c = [Buffer.from(certificate.rawData).toString('base64')];
  return (payload: Record<string, unknown>, typ = 'attestation-schema+jwt') => {
    const jwt = new SignJWT(payload).setProtectedHeader({ alg: 'ES256', typ, x5c });
    return (payload.iat === undefined ? jwt.setIssuedAt() : jwt).sign(keys.privateKey);
  };
}

const authorPayload = (schema: Record<string, unknown>) => ({
  id: 'https://catalog.example.com/schema-metadata/loyalty',
  ...META,
  schemaURIs: [{ formatIdentifier: 'dc+sd-jwt', meta: { vct: 'urn:example:loyalty' }, ...schema }],
  trustedAuthorities: [],
});

beforeAll(async () => {
  svc = await startService();
  registrar = await startRegistrarFake(ACCOUNT);
  token = (await svc.tenant('verifier', ['registrar:manage', 'issuance:manage', 'presentation:manage', 'clients:manage'])).token;
  const config = await svc.call('POST', '/api/registrar/config', {
    token,
    body: { registrarUrl: registrar.url, oidcUrl: registrar.oidcUrl, ...ACCOUNT },
  });
  expect(config.status, config.text).toBe(200);
  documents = createServer((req, res) => {
    const body = served.get(req.url ?? '');
    if (body === undefined) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
  await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
  documentsUrl = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await svc.stop();
  await registrar.stop();
  await new Promise((resolve) => documents.close(resolve));
});

async function publishFor(configuration: object): Promise<any> {
  const created = await svc.raw('POST', '/api/issuer/credentials', { token, body: configuration });
  expect(created.status, created.text).toBe(201);
  const reply = await svc.raw('POST', '/api/schema-metadata/publish', {
    token,
    body: { config: META, credentialConfigId: (configuration as { id: string }).id },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

let pid: any;

describe('resolve-jwt', () => {
  it('verifies published SD-JWT VC metadata and builds a DCQL query a presentation configuration accepts', async () => {
    pid = await publishFor({
      id: 'pid',
      vct: 'urn:eudi:pid:1',
      config: { format: 'dc+sd-jwt' },
      fields: [
        { path: ['given_name'], type: 'string', mandatory: true },
        { path: ['address'], type: 'object', children: [{ path: ['locality'], type: 'string' }] },
        { path: ['nationalities'], type: 'array', children: [{ path: [null], type: 'string' }] },
      ],
    });
    const reply = await svc.call('POST', RESOLVE_JWT, { token, body: { signedJwt: pid.signedJwt } });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({
      id: `${registrar.url}/schema-metadata/${pid.id}`,
      version: '1.0.0',
      attestationLoS: 'iso_18045_high',
      bindingType: 'key',
      supportedFormats: ['dc+sd-jwt'],
      signer: { subject: expect.stringContaining('CN='), trusted: null },
      credentials: [
        {
          format: 'dc+sd-jwt',
          vct: 'urn:eudi:pid:1',
          claims: [
            { path: ['given_name'], mandatory: true },
            { path: ['address', 'locality'], mandatory: false },
            { path: ['nationalities'], mandatory: false },
          ],
        },
      ],
    });
    expect(reply.body.dcql_query).toEqual({
      credentials: [
        {
          id: 'dc_sd_jwt',
          format: 'dc+sd-jwt',
          meta: { vct_values: ['urn:eudi:pid:1'] },
          claims: [{ path: ['given_name'] }, { path: ['address', 'locality'] }, { path: ['nationalities'] }],
        },
      ],
    });
    const saved = await svc.call('POST', '/api/verifier/config', { token, body: { id: 'pid-import', dcql_query: reply.body.dcql_query } });
    expect(saved.status, saved.text).toBe(201);
  });

  it('builds mdoc queries with [namespace, element] paths', async () => {
    const mdl = await publishFor({
      id: 'mdl',
      config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
      fields: [
        { path: ['given_name'], type: 'string', namespace: 'org.iso.18013.5.1', mandatory: true },
        { path: ['resident_city'], type: 'string', namespace: 'org.iso.18013.5.1.aamva' },
      ],
    });
    const reply = await svc.call('POST', RESOLVE_JWT, { token, body: { signedJwt: mdl.signedJwt } });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.dcql_query.credentials).toEqual([
      {
        id: 'mso_mdoc',
        format: 'mso_mdoc',
        meta: { doctype_value: 'org.iso.18013.5.1.mDL' },
        claims: [{ path: ['org.iso.18013.5.1', 'given_name'] }, { path: ['org.iso.18013.5.1.aamva', 'resident_city'] }],
      },
    ]);
    const saved = await svc.call('POST', '/api/verifier/config', { token, body: { id: 'mdl-import', dcql_query: reply.body.dcql_query } });
    expect(saved.status, saved.text).toBe(201);
  });

  it("tells whether the signer chains to the tenant's trust lists", async () => {
    const list = await svc.call('POST', '/api/trust-list', {
      token,
      body: { entities: [{ type: 'internal', keyChainId: 'default-access' }] },
    });
    expect(list.status, list.text).toBe(201);
    const trusted = await svc.call('POST', RESOLVE_JWT, { token, body: { signedJwt: pid.signedJwt } });
    expect(trusted.body.signer.trusted).toBe(true);
    const sign = await author();
    const foreign = await svc.call('POST', RESOLVE_JWT, {
      token,
      body: { signedJwt: await sign(authorPayload({ schemaContent: AUTHOR_SCHEMA })) },
    });
    expect(foreign.status, foreign.text).toBe(200);
    expect(foreign.body.signer).toMatchObject({ subject: 'CN=Schema Author, O=Author, C=DE', trusted: false });
  });

  it('refuses forged, malformed, mistyped and expired JWTs, naming body.signedJwt with the reason', async () => {
    const [header, payload, signature] = pid.signedJwt.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, version: '9.9.9' })).toString('base64url')}.${signature}`;
    const sign = await author();
    const expired = await author(-7_200_000, -3_600_000);
    const cases: [string, string][] = [
      [tampered, 'the signature does not verify with the x5c leaf'],
      ['not-a-jwt', 'is not a compact JWS'],
      ['a.b.c', 'is not a compact JWS: its header is not base64url-encoded JSON'],
      [await sign(authorPayload({ schemaContent: AUTHOR_SCHEMA }), 'JWT'), 'typ must be attestation-schema+jwt, not JWT'],
      [await expired(authorPayload({ schemaContent: AUTHOR_SCHEMA })), 'x5c[0] is not valid at'],
      [await sign({ ...authorPayload({ schemaContent: AUTHOR_SCHEMA }), schemaURIs: [] }), 'payload schemaURIs'],
      [await sign(authorPayload({ meta: {}, schemaContent: AUTHOR_SCHEMA })), 'schemaURIs.0: meta names no vct'],
      [await sign({ ...authorPayload({ schemaContent: AUTHOR_SCHEMA }), iat: 1e15 }), 'payload iat'],
    ];
    for (const [signedJwt, reason] of cases) {
      const reply = await svc.raw('POST', RESOLVE_JWT, { token, body: { signedJwt } });
      expectProblem(reply, 400);
      expect(fieldsOf(reply)).toEqual(['body.signedJwt']);
      expect(reply.body.errors[0].message, signedJwt).toContain(reason);
    }
  });

  it('needs presentation:manage', async () => {
    const issuer = await svc.client(token, 'issuer-only', ['issuance:manage', 'registrar:manage']);
    expectProblem(await svc.call('POST', RESOLVE_JWT, { token: issuer, body: { signedJwt: pid.signedJwt } }), 403);
    expectProblem(await svc.call('POST', RESOLVE, { token: issuer, body: { schemaMetadataUrl: documentsUrl } }), 403);
  });
});

describe('resolve from a URL', () => {
  it("reads the registrar's record of published metadata", async () => {
    const reply = await svc.raw('POST', RESOLVE, { token, body: { schemaMetadataUrl: `${registrar.url}/schema-metadata/${pid.id}` } });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.dcql_query.credentials[0].meta).toEqual({ vct_values: ['urn:eudi:pid:1'] });
  });

  it('fetches a schema named by uri and checks its integrity', async () => {
    const schemaText = JSON.stringify(AUTHOR_SCHEMA);
    const integrity = `sha256-${createHash('sha256').update(schemaText).digest('base64')}`;
    served.set('/loyalty.schema.json', schemaText);
    const sign = await author();
    served.set('/loyalty', { signedJwt: await sign(authorPayload({ uri: `${documentsUrl}/loyalty.schema.json`, integrity })) });
    const reply = await svc.raw('POST', RESOLVE, { token, body: { schemaMetadataUrl: `${documentsUrl}/loyalty` } });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.dcql_query.credentials).toEqual([
      {
        id: 'dc_sd_jwt',
        format: 'dc+sd-jwt',
        meta: { vct_values: ['urn:example:loyalty'] },
        claims: [{ path: ['member_id'] }, { path: ['tier'] }, { path: ['household', null, 'name'] }],
      },
    ]);
    expect(reply.body.credentials[0].claims[0]).toEqual({ path: ['member_id'], mandatory: true });
    const saved = await svc.call('POST', '/api/verifier/config', { token, body: { id: 'loyalty', dcql_query: reply.body.dcql_query } });
    expect(saved.status, saved.text).toBe(201);

    served.set('/tampered', {
      signedJwt: await sign(authorPayload({ uri: `${documentsUrl}/loyalty.schema.json`, integrity: 'sha256-AAAA' })),
    });
    const mismatch = await svc.raw('POST', RESOLVE, { token, body: { schemaMetadataUrl: `${documentsUrl}/tampered` } });
    expectProblem(mismatch, 400);
    expect(mismatch.body.errors[0]).toEqual({
      field: 'body.schemaMetadataUrl',
      message: 'its signedJwt: schemaURIs.0.uri: the document does not match its integrity sha256-AAAA',
    });
  });

  it('refuses an address the outbound policy refuses, a missing document and one without signedJwt', async () => {
    served.set('/empty', { hello: 'world' });
    const cases: [string, string][] = [
      ['http://169.254.169.254/latest/meta-data', 'refused: 169.254.169.254'],
      [`${documentsUrl}/missing`, 'answered HTTP 404'],
      [`${documentsUrl}/empty`, 'holds no signedJwt'],
    ];
    for (const [schemaMetadataUrl, reason] of cases) {
      const reply = await svc.raw('POST', RESOLVE, { token, body: { schemaMetadataUrl } });
      expectProblem(reply, 400);
      expect(fieldsOf(reply)).toEqual(['body.schemaMetadataUrl']);
      expect(reply.body.errors[0].message).toContain(reason);
    }
    const invalid = await svc.call('POST', RESOLVE, { token, body: { schemaMetadataUrl: 'file:///etc/passwd' } });
    expectProblem(invalid, 400);
    expect(fieldsOf(invalid)).toEqual(['body.schemaMetadataUrl']);
  });
});
