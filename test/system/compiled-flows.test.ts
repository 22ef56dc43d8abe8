// The compiled service (dist/, what `npm start` and the image run) through whole flows over HTTP: the
// rest of the suite runs the TypeScript, and the bundle differs from it in what matters here (code
// split into chunks loaded on first use, packages replaced by stand-ins until their first use,
// CommonJS packages inside an ES module). SD-JWT VC issuance with claims from an attribute source
// over https, its presentation with the status list checked, and revocation; mdoc issuance and
// presentation; on the database the suite runs on.
import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { MDL_ADULT_QUERY, MDL_DOC_TYPE, MDL_NAMESPACE, mdl, PID_VCT } from '../support/fixtures.js';
import { type RequestOptions, request } from '../support/http.js';
import { presentMdoc } from '../support/mdoc-wallet.js';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import { run, type Started, stop } from '../support/process.js';
import { ALL_TENANT_ROLES, freePort, ROOT_ID } from '../support/service.js';
import { holderKey, issueCredential, receiveCredentials } from '../support/wallet.js';

x509.cryptoProvider.set(crypto); // the global Web Crypto (node:crypto webcrypto)

const PID = {
  id: 'pid',
  config: { format: 'dc+sd-jwt' },
  vct: PID_VCT,
  statusManagement: true,
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true },
    { path: ['family_name'], type: 'string' },
  ],
};
const PID_QUERY = {
  credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: [PID_VCT] }, claims: [{ path: ['given_name'] }] }],
};
const DOC_TYPE = MDL_DOC_TYPE;
const NS = MDL_NAMESPACE;
const MDL = mdl(['family_name', 'age_over_18']);
const MDL_QUERY = MDL_ADULT_QUERY;

let database: TestDatabase;
let started: Started;
let base: string;
let registry: HttpsEndpoint;
let token: string;
const rootSecret = randomBytes(24).toString('base64url');
const call = (method: string, path: string, options?: RequestOptions) => request(base, method, path, options);

beforeAll(async () => {
  registry = await httpsEndpoint({ claims: { given_name: 'Erika', family_name: 'Mustermann' } });
  database = await freshDatabase();
  const port = await freePort();
  started = await run({
    ...database.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    MASTER_SECRET: randomBytes(32).toString('base64url'),
    AUTH_CLIENT_ID: ROOT_ID,
    AUTH_CLIENT_SECRET: rootSecret,
    // The attribute source's certificate is signed by this test's own authority.
    NODE_EXTRA_CA_CERTS: registry.caFile,
  });
  base = `http://127.0.0.1:${started.port}`;
  token = await tenantToken();
});
afterAll(async () => {
  await stop(started);
  await database.drop();
  await registry.close();
});

describe('the compiled service', () => {
  it('issues an SD-JWT VC with claims from an attribute source over https, verifies it with its status list, and rejects it once revoked', async () => {
    await create('/api/issuer/credentials', PID);
    await create('/api/issuer/attribute-providers', { id: 'registry', name: 'Registry', url: registry.url, auth: { type: 'none' } });
    await create('/api/trust-list', {
      id: 'issuers',
      entities: [
        { type: 'internal', keyChainId: 'default-attestation' },
        { type: 'internal', keyChainId: 'default-statusList', serviceType: 'revocation' },
      ],
    });
    await create('/api/verifier/config', { id: 'pid-check', dcql_query: PID_QUERY });

    const offer = await call('POST', '/api/issuer/offer', {
      token,
      body: {
        response_type: 'uri',
        flow: 'pre_authorized_code',
        credentialConfigurationIds: ['pid'],
        credentialClaims: { pid: { type: 'attributeProvider', attributeProviderId: 'registry' } },
      },
    });
    expect(offer.status, offer.text).toBe(201);
    const key = await holderKey();
    const { response } = await receiveCredentials(offer.body.uri, { keys: [key] });
    const [issued] = (response.credentialResponse.credentials ?? []) as { credential: string }[];
    const credential = issued?.credential ?? '';
    expect(registry.requests).toBe(1);
    expect(disclosed(credential)).toMatchObject({ given_name: 'Erika', family_name: 'Mustermann' });

    const present = async () => {
      const request = await call('POST', '/api/verifier/offer', { token, body: { response_type: 'uri', requestId: 'pid-check' } });
      expect(request.status, request.text).toBe(201);
      const resolved = await resolveRequest(request.body.uri);
      const reply = await submit(resolved, { pid: [await presentSdJwt(credential, key.privateJwk, resolved, ['given_name'])] });
      const session = await call('GET', `/api/session/${request.body.session}`, { token });
      return { status: reply.status, session: session.body as { status: string; errorReason?: string } };
    };
    const accepted = await present();
    expect(accepted).toEqual({ status: 200, session: expect.objectContaining({ status: 'completed' }) });
    expect(accepted.session.errorReason).toBeUndefined();
    // The status was checked: the verifier read the list once and keeps it.
    expect((await call('GET', '/api/cache/stats', { token })).body.fetchedStatusList).toMatchObject({ entries: 1, misses: 1 });

    const revoked = await call('POST', '/api/session/revoke', { token, body: { sessionId: offer.body.session, status: 1 } });
    expect(revoked.status, revoked.text).toBe(200);
    expect((await call('DELETE', '/api/cache/status-list', { token })).status).toBe(204);
    expect(await present()).toEqual({
      status: 400,
      session: expect.objectContaining({ status: 'failed', errorReason: 'status: revoked' }),
    });
  });

  it('issues an mdoc and verifies its presentation', async () => {
    await create('/api/issuer/credentials', MDL);
    await create('/api/trust-list', { id: 'mdoc-issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] });
    await create('/api/verifier/config', { id: 'mdl-check', dcql_query: MDL_QUERY });
    const issued = await issueCredential({ call }, token, 'mdl', { [NS]: { family_name: 'Mustermann', age_over_18: true } });

    const request = await call('POST', '/api/verifier/offer', { token, body: { response_type: 'uri', requestId: 'mdl-check' } });
    expect(request.status, request.text).toBe(201);
    const resolved = await resolveRequest(request.body.uri);
    const { vpToken } = await presentMdoc(resolved, {
      docType: DOC_TYPE,
      namespace: NS,
      elements: ['family_name', 'age_over_18'],
      holder: issued.holder,
      credential: issued.credential,
    });
    const reply = await submit(resolved, vpToken);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const session = await call('GET', `/api/session/${request.body.session}`, { token });
    expect(session.body).toMatchObject({ status: 'completed' });
  });
});

/** The claims an SD-JWT's disclosures carry ([salt, name, value] each, base64url JSON). */
function disclosed(credential: string): Record<string, unknown> {
  const disclosures = credential.split('~').slice(1, -1);
  return Object.fromEntries(disclosures.map((d) => JSON.parse(Buffer.from(d, 'base64url').toString()).slice(1)));
}

async function tenantToken(): Promise<string> {
  const rootToken = await tokenOf(ROOT_ID, rootSecret);
  const created = await call('POST', '/api/tenant', { token: rootToken, body: { id: 'acme', name: 'Acme', roles: ALL_TENANT_ROLES } });
  expect(created.status, created.text).toBe(201);
  return tokenOf(created.body.client.clientId, created.body.client.secret);
}

async function tokenOf(clientId: string, secret: string): Promise<string> {
  const reply = await call('POST', '/api/oauth2/token', {
    body: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.access_token;
}

async function create(path: string, body: unknown) {
  const reply = await call('POST', path, { token, body });
  expect(reply.status, reply.text).toBe(201);
}

interface HttpsEndpoint {
  url: string;
  /** The authority's certificate (PEM), for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  requests: number;
  close(): Promise<void>;
}

/** An https server on 127.0.0.1 answering every request with `answer`, its certificate from an authority of its own. */
async function httpsEndpoint(answer: unknown): Promise<HttpsEndpoint> {
  const { caPem, certificatePem, keyPem } = await certificateFor127001();
  const dir = mkdtempSync(join(tmpdir(), 'svc-https-'));
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, caPem);
  const endpoint = { url: '', caFile, requests: 0, close: async () => {} };
  const server: Server = createServer({ key: keyPem, cert: certificatePem }, (req, res) => {
    endpoint.requests++;
    req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint.url = `https://127.0.0.1:${(server.address() as { port: number }).port}/claims`;
  endpoint.close = async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  };
  return endpoint;
}

async function certificateFor127001() {
  const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const DAY_MS = 86_400_000;
  const validity = { notBefore: new Date(Date.now() - DAY_MS), notAfter: new Date(Date.now() + DAY_MS) };
  const caKeys = await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    name: 'CN=svc test authority',
    keys: caKeys,
    signingAlgorithm: EC,
    ...validity,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
  });
  const keys = await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']);
  const certificate = await x509.X509CertificateGenerator.create({
    subject: 'CN=127.0.0.1',
    issuer: ca.subject,
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: EC,
    ...validity,
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: '127.0.0.1' }])],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64');
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)?.join('\n')}\n-----END PRIVATE KEY-----\n`;
  return { caPem: ca.toString('pem'), certificatePem: certificate.toString('pem'), keyPem };
}
