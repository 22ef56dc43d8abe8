// Key chains over a QTSP's remote signing (Cloud Signature Consortium API v2.0), against a fake QTSP
// speaking CSC v2 (a QTSP cannot run here): svc names credentials the QTSP holds, takes the QTSP's
// certificate chain for them, and has the QTSP sign hashes. Credentials, mdocs and status lists made
// with those keys are verified independently (jose and @sd-jwt for SD-JWT VC, node:crypto over the
// raw COSE_Sign1), up to the QTSP's own CA.
import { randomBytes, verify, X509Certificate } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Decoder, Encoder } from 'cbor-x';
import { decodeProtectedHeader, importX509, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importEnvironment } from '../../src/config-files/environment.js';
import { readKmsFile } from '../../src/key-chains/providers/kms-file.js';
import { type CscFake, startCscFake } from '../support/csc-fake.js';
import { freshDatabase } from '../support/database.js';
import { MDL_NAMESPACE, mdl, PID } from '../support/fixtures.js';
import { kmsFiles, tenantInstance } from '../support/kms-files.js';
import { expectFieldErrors, problemOf } from '../support/problems.js';
import { verifySdJwtIndependently } from '../support/sd-jwt-check.js';
import { startFailure, startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

let qtsp: CscFake;
let svc: TestService;
let acme: string;
let other: string;
const files = kmsFiles();
/** The credentials the operator gives acme (KMS_PROVIDERS adopt): used by their own ids. */
const ACME_CREDENTIALS = ['acme-signer', 'acme-status', 'acme-explicit', 'acme-human', 'acme-next', 'acme-spare'];

function kmsFile(url: string, clientSecret: unknown = { env: 'TEST_CSC_SECRET' }) {
  const provider = {
    id: 'qtsp',
    type: 'csc',
    url,
    clientId: 'svc-client',
    clientSecret,
    adopt: [{ tenant: 'acme', keys: ACME_CREDENTIALS }],
  };
  return files.write({ providers: [provider] });
}

beforeAll(async () => {
  qtsp = await startCscFake();
  for (const id of ACME_CREDENTIALS)
    await qtsp.addCredential(id, id === 'acme-explicit' ? 'explicit' : id === 'acme-human' ? 'oauth2code' : 'implicit');
  svc = await startService({ KMS_PROVIDERS: kmsFile(qtsp.url), TEST_CSC_SECRET: qtsp.client.secret });
  acme = (await svc.tenant('acme')).token;
  other = (await svc.tenant('other')).token;
});
afterAll(async () => {
  await svc?.stop();
  await qtsp?.stop();
  files.remove();
});

/** A key chain over a QTSP credential: type imported, kmsProvider qtsp, the rest as given. */
function createChain(body: { id: string; usageType: 'attestation' | 'access' | 'statusList'; externalKeyId: string; default?: boolean }) {
  return svc.call('POST', '/api/key-chain', { token: acme, body: { type: 'imported', kmsProvider: 'qtsp', ...body } });
}

const leafOf = (id: string) => qtsp.credentials.get(id)?.leaf.der as string;
const pemBlocks = (pem: string) => pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];

/** The x5c leaf and issuing CA are the QTSP's, and its root signed the issuing CA. */
function expectQtspChain(x5c: string[], credentialId: string) {
  expect(x5c).toEqual([leafOf(credentialId), qtsp.issuingCa.der]);
  const issuing = new X509Certificate(Buffer.from(qtsp.issuingCa.der, 'base64'));
  expect(issuing.verify(new X509Certificate(qtsp.root.pem).publicKey)).toBe(true);
}

/** The issuer signature of an mdoc (IssuerSigned as OpenID4VCI sends it), checked by hand with the leaf of its x5chain. */
function verifyMdocIssuerAuth(credential: string) {
  const options = { mapsAsObjects: false, useRecords: false, tagUint8Array: false };
  const issuerSigned = new Decoder(options).decode(Buffer.from(credential, 'base64url')) as Map<string, unknown>;
  const issuerAuth = issuerSigned.get('issuerAuth') as [Uint8Array, Map<number, Uint8Array | Uint8Array[]>, Uint8Array, Uint8Array];
  const [protectedHeader, unprotected, payload, signature] = issuerAuth;
  const x5chain = unprotected.get(33) as Uint8Array | Uint8Array[];
  const chain = (Array.isArray(x5chain) ? x5chain : [x5chain]).map((der) => Buffer.from(der).toString('base64'));
  const toBeSigned = new Encoder(options).encode(['Signature1', protectedHeader, new Uint8Array(), payload]);
  const leaf = new X509Certificate(Buffer.from(chain[0] as string, 'base64'));
  expect(verify('sha256', toBeSigned, { key: leaf.publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
  return chain;
}

describe('a key chain over a QTSP credential', () => {
  let chain: any;
  beforeAll(async () => {
    const reply = await createChain({ id: 'qtsp-attestation', usageType: 'attestation', externalKeyId: 'acme-signer' });
    expect(reply.status, reply.text).toBe(201);
    chain = reply.body;
  });

  it('is listed as a provider that makes no keys', async () => {
    const providers = (await svc.call('GET', '/api/key-chain/providers', { token: acme })).body as any[];
    expect(providers.find((p) => p.id === 'qtsp')).toEqual({
      id: 'qtsp',
      type: 'csc',
      default: false,
      capabilities: { generate: false, import: false, algorithms: ['ES256', 'ES384', 'ES512'], decrypt: false },
    });
  });

  it("takes the QTSP's key and certificate chain, and keeps only the credential and its public key", async () => {
    expect(chain).toMatchObject({ type: 'imported', kmsProvider: 'qtsp', externalKeyId: 'acme-signer', rotationEnabled: false });
    const leaf = new X509Certificate(Buffer.from(leafOf('acme-signer'), 'base64'));
    expect(leaf.publicKey.export({ format: 'jwk' })).toMatchObject({ x: chain.activeJwk.x, y: chain.activeJwk.y });
    expect(pemBlocks(chain.activeCertificate).map((pem) => new X509Certificate(pem).raw.toString('base64'))).toEqual([
      leafOf('acme-signer'),
      qtsp.issuingCa.der,
    ]);
    expect(new X509Certificate(chain.rootCertificate).raw.toString('base64')).toBe(qtsp.root.der);
    const row = await svc.db.selectFrom('key_chains').selectAll().where('id', '=', 'qtsp-attestation').executeTakeFirstOrThrow();
    const stored = JSON.parse(row.active_jwk);
    expect(stored.ref).toBe('implicit:acme-signer');
    expect(Object.keys(stored.jwk).sort()).toEqual(['crv', 'kty', 'x', 'y']);
    expect(qtsp.requests).toEqual(expect.arrayContaining(['POST /oauth2/token', 'POST /csc/v2/info', 'POST /csc/v2/credentials/info']));
  });

  it('issues SD-JWT VCs and mdocs signed by the QTSP, their x5c the QTSP chain', async () => {
    const pid = { ...PID, id: 'pid-qtsp', keyChainId: 'qtsp-attestation' };
    expect((await svc.call('POST', '/api/issuer/credentials', { token: acme, body: pid })).status).toBe(201);
    const signedBefore = qtsp.requests.filter((r) => r === 'POST /csc/v2/signatures/signHash').length;
    const sdJwt = await issueCredential(svc, acme, 'pid-qtsp', { given_name: 'Erika', family_name: 'Mustermann' });
    const { header, claims } = await verifySdJwtIndependently(sdJwt.credential, qtsp.issuingCa.pem);
    expect(claims.family_name).toBe('Mustermann');
    expect(header.alg).toBe('ES256');
    expectQtspChain(header.x5c as string[], 'acme-signer');
    expect(qtsp.requests.filter((r) => r === 'POST /csc/v2/signatures/signHash').length).toBeGreaterThan(signedBefore);

    const mdoc = { ...mdl(['given_name', 'family_name']), id: 'mdl-qtsp', keyChainId: 'qtsp-attestation' };
    const configured = await svc.call('POST', '/api/issuer/credentials', { token: acme, body: mdoc });
    expect(configured.status, configured.text).toBe(201);
    const issued = await issueCredential(svc, acme, 'mdl-qtsp', { [MDL_NAMESPACE]: { given_name: 'Erika', family_name: 'Mustermann' } });
    expect(verifyMdocIssuerAuth(issued.credential)[0]).toBe(leafOf('acme-signer'));
  });

  it('signs status lists: the status of a credential verifies up to the QTSP chain of the status list key chain', async () => {
    const created = await createChain({ id: 'qtsp-status', usageType: 'statusList', externalKeyId: 'acme-status', default: true });
    expect(created.status, created.text).toBe(201);
    const badge = { ...PID, id: 'badge-qtsp', vct: 'urn:test:badge', keyChainId: 'qtsp-attestation', statusManagement: true };
    const configured = await svc.call('POST', '/api/issuer/credentials', { token: acme, body: badge });
    expect(configured.status, configured.text).toBe(201);
    const issued = await issueCredential(svc, acme, 'badge-qtsp', { given_name: 'Ada', family_name: 'Lovelace' });
    const { payload } = await verifySdJwtIndependently(issued.credential, qtsp.issuingCa.pem, { statusListRoot: qtsp.issuingCa.pem });
    const token = await (await fetch(payload.status.status_list.uri, { headers: { accept: 'application/statuslist+jwt' } })).text();
    const header = decodeProtectedHeader(token);
    expectQtspChain(header.x5c as string[], 'acme-status');
    const leaf = new X509Certificate(Buffer.from(leafOf('acme-status'), 'base64'));
    await jwtVerify(token, await importX509(leaf.toString(), 'ES256'), { typ: 'statuslist+jwt' });
  });

  it('is not visible to another tenant', async () => {
    expect((await svc.call('GET', '/api/key-chain/qtsp-attestation', { token: other })).status).toBe(404);
  });
});

describe('a credential that needs explicit authorization', () => {
  it('is signed with a SAD asked for each signature, and a SAD signs once', async () => {
    const created = await createChain({ id: 'qtsp-explicit', usageType: 'access', externalKeyId: 'acme-explicit' });
    expect(created.status, created.text).toBe(201);
    const signer = await svc.running.services.signing.signer('acme', { keyChainId: 'qtsp-explicit', usageType: 'access' });
    const leaf = new X509Certificate(Buffer.from(signer.x5c[0] as string, 'base64'));
    const authorizedBefore = qtsp.requests.filter((r) => r === 'POST /csc/v2/credentials/authorize').length;
    for (const data of ['first', 'second']) {
      const signature = await signer.sign(Buffer.from(data));
      expect(verify('sha256', Buffer.from(data), { key: leaf.publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
    }
    expect(qtsp.requests.filter((r) => r === 'POST /csc/v2/credentials/authorize').length).toBe(authorizedBefore + 2);
    expect(qtsp.sads.size).toBe(0);

    // The fake holds SADs to one use, as a QTSP does.
    const token = await tokenOf();
    const hashes = [randomBytes(32).toString('base64')];
    const request = { credentialID: 'acme-explicit', hashes, hashAlgorithmOID: '2.16.840.1.101.3.4.2.1' };
    const { SAD } = await cscCall(token, 'credentials/authorize', { ...request, numSignatures: 1 });
    const sign = { ...request, SAD, signAlgo: '1.2.840.10045.4.3.2' };
    expect((await cscReply(token, 'signatures/signHash', sign)).status).toBe(200);
    expect((await cscReply(token, 'signatures/signHash', sign)).status).toBe(400);
  });

  it('refuses a credential that needs a person to authorize (oauth2code), naming externalKeyId', async () => {
    const reply = await createChain({ id: 'qtsp-human', usageType: 'access', externalKeyId: 'acme-human' });
    expectFieldErrors(reply, ['body.externalKeyId']);
    expect(problemOf(reply).errors?.[0]?.message).toMatch(/oauth2code/);
  });
});

async function tokenOf() {
  const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: qtsp.client.id, client_secret: qtsp.client.secret });
  const reply = await fetch(`${qtsp.url}/oauth2/token`, { method: 'POST', body });
  return ((await reply.json()) as { access_token: string }).access_token;
}
const cscReply = (token: string, method: string, body: unknown) =>
  fetch(`${qtsp.url}/csc/v2/${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const cscCall = async (token: string, method: string, body: unknown) => (await (await cscReply(token, method, body)).json()) as any;

describe('a credential of one tenant', () => {
  it("is not another tenant's: its name is looked up in the other tenant's namespace, where the QTSP has none", async () => {
    const reply = await svc.call('POST', '/api/key-chain', {
      token: other,
      body: { id: 'taken', usageType: 'attestation', type: 'imported', kmsProvider: 'qtsp', externalKeyId: 'acme-signer' },
    });
    expectFieldErrors(reply, ['body.externalKeyId']);
    const namespaced = `svc.other.${await tenantInstance(svc.db, 'other')}.acme-signer`;
    expect(problemOf(reply).errors?.[0]?.message).toBe(`key provider 'qtsp' has no credential '${namespaced}' for this tenant`);
    expect((await svc.call('GET', '/api/key-chain/taken', { token: other })).status).toBe(404);
  });
});

describe('settings a QTSP credential does not take', () => {
  it('names the field: a type other than imported, automatic rotation, no externalKeyId; imported on db', async () => {
    const body = { usageType: 'access', kmsProvider: 'qtsp', externalKeyId: 'acme-spare' } as const;
    expectFieldErrors(await svc.call('POST', '/api/key-chain', { token: acme, body: { ...body, type: 'internalChain' } }), ['body.type']);
    expectFieldErrors(
      await svc.call('POST', '/api/key-chain', { token: acme, body: { ...body, type: 'imported', rotationEnabled: true } }),
      ['body.rotationEnabled'],
    );
    expectFieldErrors(
      await svc.call('POST', '/api/key-chain', { token: acme, body: { usageType: 'access', type: 'imported', kmsProvider: 'qtsp' } }),
      ['body.externalKeyId'],
    );
    expectFieldErrors(await svc.call('POST', '/api/key-chain', { token: acme, body: { usageType: 'access', type: 'imported' } }), [
      'body.type',
    ]);
  });

  it('refuses rotation, by hand or scheduled, with a 400 saying how such a chain is renewed', async () => {
    const rotate = await svc.call('POST', '/api/key-chain/qtsp-attestation/rotate', { token: acme });
    expect(rotate.status).toBe(400);
    expect(problemOf(rotate).detail).toMatch(/PATCH externalKeyId/);
    const patch = await svc.call('PATCH', '/api/key-chain/qtsp-attestation', { token: acme, body: { rotationEnabled: true } });
    expectFieldErrors(patch, ['body.rotationEnabled']);
  });
});

describe('pointing a key chain at another credential', () => {
  it('makes that credential the active key with its certificates; the one it replaces stays published', async () => {
    const before = (await createChain({ id: 'qtsp-access', usageType: 'access', externalKeyId: 'acme-spare' })).body;
    const reply = await svc.call('PATCH', '/api/key-chain/qtsp-access', { token: acme, body: { externalKeyId: 'acme-next' } });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ externalKeyId: 'acme-next', previousJwk: { kid: before.activeJwk.kid } });
    expect(reply.body.activeJwk.kid).not.toBe(before.activeJwk.kid);
    const signer = await svc.running.services.signing.signer('acme', { keyChainId: 'qtsp-access', usageType: 'access' });
    expect(signer.x5c).toEqual([leafOf('acme-next'), qtsp.issuingCa.der]);
    const leaf = new X509Certificate(Buffer.from(leafOf('acme-next'), 'base64'));
    expect(
      verify('sha256', Buffer.from('next'), { key: leaf.publicKey, dsaEncoding: 'ieee-p1363' }, await signer.sign(Buffer.from('next'))),
    ).toBe(true);
  });

  it('is what a configuration file naming another credential for the chain does', async () => {
    const folder = join(files.dir, 'config');
    mkdirSync(join(folder, 'acme', 'key-chains'), { recursive: true });
    const file = { usageType: 'access', type: 'imported', kmsProvider: 'qtsp', externalKeyId: 'acme-spare' };
    writeFileSync(join(folder, 'acme', 'tenant.json'), JSON.stringify({ name: 'Tenant acme' }));
    writeFileSync(join(folder, 'acme', 'key-chains', 'qtsp-access.json'), JSON.stringify(file));
    await svc.running.services.configFiles.importFolder(folder, importEnvironment({}));
    const chain = (await svc.call('GET', '/api/key-chain/qtsp-access', { token: acme })).body;
    expect(chain.externalKeyId).toBe('acme-spare');
    const leaf = new X509Certificate(Buffer.from(leafOf('acme-spare'), 'base64'));
    expect(leaf.publicKey.export({ format: 'jwk' })).toMatchObject({ x: chain.activeJwk.x, y: chain.activeJwk.y });
  });

  it('names externalKeyId for a credential the QTSP does not have, and for a chain whose provider rotates', async () => {
    const unknown = await svc.call('PATCH', '/api/key-chain/qtsp-access', { token: acme, body: { externalKeyId: 'nobody' } });
    expectFieldErrors(unknown, ['body.externalKeyId']);
    const dbChain = await svc.call('PATCH', '/api/key-chain/default-access', { token: acme, body: { externalKeyId: 'acme-next' } });
    expectFieldErrors(dbChain, ['body.externalKeyId']);
  });
});

describe('a QTSP that is down', () => {
  it('fails signatures with a 503 naming the provider, never another key, and /health/ready says so', async () => {
    qtsp.failWith = 503;
    try {
      const signer = await svc.running.services.signing.signer('acme', { keyChainId: 'qtsp-attestation', usageType: 'attestation' });
      await expect(signer.sign(Buffer.from('x'))).rejects.toMatchObject({ status: 503, extra: { provider: 'qtsp' } });
      const ready = await svc.call('GET', '/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.checks?.['keyProvider:qtsp']).toBe('cannot sign');
      const created = await createChain({ id: 'while-down', usageType: 'access', externalKeyId: 'acme-spare' });
      expect(created.status).toBe(503);
      expect(problemOf(created).detail).toMatch(/^key provider 'qtsp' could not/);
    } finally {
      qtsp.failWith = undefined;
    }
    expect((await svc.call('GET', '/health/ready')).body.checks?.['keyProvider:qtsp']).toBe('ok');
  });
});

describe('start-up', () => {
  it('refuses an entry without url, and a csc provider as the default, naming the field', () => {
    const noUrl = files.write({ providers: [{ id: 'qtsp', type: 'csc', clientId: 'c', clientSecret: 's' }] });
    expect(() => readKmsFile(noUrl)).toThrow(`KMS_PROVIDERS ${noUrl}: provider 'qtsp': providers.0.url:`);
    const asDefault = files.write({
      defaultProvider: 'qtsp',
      providers: [{ id: 'qtsp', type: 'csc', url: 'https://qtsp.example', clientId: 'c', clientSecret: 's' }],
    });
    expect(() => readKmsFile(asDefault)).toThrow(/defaultProvider: 'qtsp' is a csc provider, which makes no keys/);
  });

  it('stops naming the provider when the QTSP refuses the client (78) or cannot be reached (69)', async () => {
    const database = await freshDatabase();
    try {
      const env = {
        NODE_ENV: 'test',
        PORT: '0',
        LOG_LEVEL: 'silent',
        MASTER_SECRET: randomBytes(32).toString('base64url'),
        ...database.env,
      };
      const refused = await startFailure({ ...env, KMS_PROVIDERS: kmsFile(qtsp.url, 'wrong-secret') });
      expect(refused.exitCode).toBe(78);
      expect(refused.message).toMatch(/provider 'qtsp' \(csc\): CSC service at http:\/\/127\.0\.0\.1:\d+ refuses the client credentials/);
      const gone = await startCscFake();
      await gone.stop();
      const unreachable = await startFailure({ ...env, KMS_PROVIDERS: kmsFile(gone.url, 'x') });
      expect(unreachable.exitCode).toBe(69);
      expect(unreachable.message).toMatch(/provider 'qtsp' \(csc\): CSC service at .+ is unreachable/);
    } finally {
      await database.drop();
    }
  });
});
