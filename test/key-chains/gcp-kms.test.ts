// Key chains in Google Cloud KMS, over its REST API through the outbound client, against a fake that
// speaks Cloud KMS's and Google's token endpoints' documented protocols (Google Cloud cannot run
// here). Two providers share the fake: one with a service account key (JWT bearer grant), one with
// the metadata server's service account. Credentials and certificates are verified independently.
import { randomBytes, verify, X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readKmsFile } from '../../src/key-chains/providers/kms-file.js';
import { freshDatabase } from '../support/database.js';
import { MDL_NAMESPACE, mdl, PID } from '../support/fixtures.js';
import { type GcpKmsFake, startGcpKmsFake } from '../support/gcp-kms-fake.js';
import { kmsFiles, tenantInstance } from '../support/kms-files.js';
import { verifyMdocIssuerAuth } from '../support/mdoc-check.js';
import { expectFieldErrors, problemOf } from '../support/problems.js';
import { verifySdJwtIndependently } from '../support/sd-jwt-check.js';
import { startFailure, startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

let gcp: GcpKmsFake;
let svc: TestService;
let acme: string;
let other: string;
/** acme's namespace as Cloud KMS spells it: svc_dacme_d<instance> (_ escapes: _d for '.', __ for _). */
let acmeKeys: string;
const files = kmsFiles();

const serviceAccountEntry = (endpoint: string, serviceAccountKey: unknown = { env: 'TEST_GCP_KEY' }) => ({
  id: 'gcp',
  type: 'gcp-kms',
  keyRing: gcp.keyRing,
  endpoint,
  serviceAccountKey,
});

beforeAll(async () => {
  gcp = await startGcpKmsFake();
  const metadata = { id: 'gcp-md', type: 'gcp-kms', keyRing: gcp.keyRing, endpoint: gcp.url, metadataServer: gcp.url };
  svc = await startService({
    KMS_PROVIDERS: files.write({ providers: [serviceAccountEntry(gcp.url), metadata] }),
    TEST_GCP_KEY: gcp.serviceAccountKey,
  });
  acme = (await svc.tenant('acme')).token;
  other = (await svc.tenant('other')).token;
  acmeKeys = `svc_dacme_d${await tenantInstance(svc.db, 'acme')}`;
});
afterAll(async () => {
  await svc?.stop();
  await gcp?.stop();
  files.remove();
});

describe('Google Cloud KMS', () => {
  let chain: any;
  beforeAll(async () => {
    const reply = await svc.call('POST', '/api/key-chain', {
      token: acme,
      body: {
        id: 'gcp-attestation',
        usageType: 'attestation',
        type: 'internalChain',
        kmsProvider: 'gcp',
        externalKeyId: 'acme-attestation',
      },
    });
    expect(reply.status, reply.text).toBe(201);
    chain = reply.body;
  });

  it('lists both providers with what they can do (no P-521 in Cloud KMS)', async () => {
    const providers = (await svc.call('GET', '/api/key-chain/providers', { token: acme })).body as any[];
    expect(providers.filter((p) => p.type === 'gcp-kms').map((p) => [p.id, p.capabilities])).toEqual(
      ['gcp', 'gcp-md'].map((id) => [id, { generate: true, import: false, algorithms: ['ES256', 'ES384'], decrypt: false }]),
    );
  });

  it("makes the keys in the key ring under the tenant's names, waits for their generation, and keeps only the pinned version", async () => {
    expect([...gcp.keys.keys()].sort()).toEqual([`${acmeKeys}_dacme-attestation`, `${acmeKeys}_dacme-attestation-root`]);
    const key = gcp.keys.get(`${acmeKeys}_dacme-attestation`);
    expect(key).toMatchObject({ algorithm: 'EC_SIGN_P256_SHA256', protectionLevel: 'SOFTWARE' });
    const row = await svc.db.selectFrom('key_chains').selectAll().where('id', '=', 'gcp-attestation').executeTakeFirstOrThrow();
    const active = JSON.parse(row.active_jwk);
    expect(active.ref).toBe(`${gcp.keyRing}/cryptoKeys/${acmeKeys}_dacme-attestation/cryptoKeyVersions/1`);
    expect(Object.keys(active.jwk).sort()).toEqual(['crv', 'kty', 'x', 'y']);
    const leaf = new X509Certificate(chain.activeCertificate);
    expect(leaf.verify(new X509Certificate(chain.rootCertificate).publicKey)).toBe(true);
  });

  it('issues SD-JWT VCs and mdocs signed by Cloud KMS that verify with the chain certificate', async () => {
    const pid = await svc.call('POST', '/api/issuer/credentials', { token: acme, body: { ...PID, keyChainId: 'gcp-attestation' } });
    expect(pid.status, pid.text).toBe(201);
    const sdJwt = await issueCredential(svc, acme, 'pid', { given_name: 'Erika', family_name: 'Mustermann' });
    const { claims } = await verifySdJwtIndependently(sdJwt.credential, chain.rootCertificate);
    expect(claims.given_name).toBe('Erika');

    const mdoc = { ...mdl(['given_name', 'family_name']), id: 'mdl-gcp', keyChainId: 'gcp-attestation' };
    expect((await svc.call('POST', '/api/issuer/credentials', { token: acme, body: mdoc })).status).toBe(201);
    const issued = await issueCredential(svc, acme, 'mdl-gcp', { [MDL_NAMESPACE]: { given_name: 'Erika', family_name: 'Mustermann' } });
    verifyMdocIssuerAuth(issued.credential, new X509Certificate(chain.rootCertificate));
    expect(gcp.requests).toContain(`POST /v1/${gcp.keyRing}/cryptoKeys/${acmeKeys}_dacme-attestation/cryptoKeyVersions/1:asymmetricSign`);
    // One JWT bearer grant served every call so far.
    expect(gcp.tokensIssued.serviceAccount).toBe(1);
  });

  it('signs with P-384 keys, and with the metadata server’s service account', async () => {
    const created = await svc.call('POST', '/api/key-chain', {
      token: acme,
      body: {
        id: 'gcp-md-access',
        usageType: 'access',
        type: 'standalone',
        algorithm: 'ES384',
        kmsProvider: 'gcp-md',
        externalKeyId: 'md_access',
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(gcp.keys.get(`${acmeKeys}_dmd__access`)?.algorithm).toBe('EC_SIGN_P384_SHA384');
    const signer = await svc.running.services.signing.signer('acme', { keyChainId: 'gcp-md-access', usageType: 'access' });
    const signature = await signer.sign(Buffer.from('signed data'));
    const certificate = new X509Certificate(created.body.activeCertificate);
    expect(verify('sha384', Buffer.from('signed data'), { key: certificate.publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
    expect(gcp.tokensIssued.metadata).toBe(1);
  });

  it('takes the crypto key another instance created between its look and its create', async () => {
    gcp.createdMeanwhile = true;
    try {
      const created = await svc.call('POST', '/api/key-chain', {
        token: acme,
        body: { usageType: 'access', type: 'standalone', kmsProvider: 'gcp', externalKeyId: 'raced' },
      });
      expect(created.status, created.text).toBe(201);
      expect(gcp.requests.filter((request) => request.endsWith(`cryptoKeys/${acmeKeys}_draced`))).toHaveLength(2);
    } finally {
      gcp.createdMeanwhile = undefined;
    }
  });

  it('refuses ES512, which Cloud KMS does not have, with a 400 naming algorithm', async () => {
    const reply = await svc.call('POST', '/api/key-chain', {
      token: acme,
      body: { usageType: 'access', type: 'standalone', algorithm: 'ES512', kmsProvider: 'gcp', externalKeyId: 'p521' },
    });
    expectFieldErrors(reply, ['body.algorithm']);
  });

  it('keeps signing with the version it certified when the key gets a new version, and rotates to a new crypto key', async () => {
    gcp.addVersion(`${acmeKeys}_dacme-attestation`);
    const signer = await svc.running.services.signing.signer('acme', { keyChainId: 'gcp-attestation', usageType: 'attestation' });
    const signature = await signer.sign(Buffer.from('pinned'));
    const certificate = new X509Certificate(chain.activeCertificate);
    expect(verify('sha256', Buffer.from('pinned'), { key: certificate.publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);

    const rotated = await svc.call('POST', '/api/key-chain/gcp-attestation/rotate', { token: acme });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.previousJwk?.kid).toBe(chain.activeJwk.kid);
    const rotatedName = new RegExp(`^${acmeKeys}_dacme-attestation-\\d{8}t\\d{9}z$`);
    expect([...gcp.keys.keys()].filter((id) => rotatedName.test(id))).toHaveLength(1);
    const next = new X509Certificate(rotated.body.activeCertificate);
    expect(next.verify(new X509Certificate(chain.rootCertificate).publicKey)).toBe(true);
  });

  it("never lets another tenant reach acme's key; names too long for Cloud KMS are hashed", async () => {
    expect((await svc.call('GET', '/api/key-chain/gcp-attestation', { token: other })).status).toBe(404);
    const created = await svc.call('POST', '/api/key-chain', {
      token: other,
      body: { usageType: 'access', type: 'standalone', kmsProvider: 'gcp', externalKeyId: 'acme-attestation' },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.activeJwk.kid).not.toBe(chain.activeJwk.kid);
    expect(gcp.keys.has(`svc_dother_d${await tenantInstance(svc.db, 'other')}_dacme-attestation`)).toBe(true);

    const long = 'a-name-that-is-long-enough-to-pass-the-sixty-three-characters';
    const hashed = await svc.call('POST', '/api/key-chain', {
      token: other,
      body: { usageType: 'access', type: 'standalone', kmsProvider: 'gcp', externalKeyId: long },
    });
    expect(hashed.status, hashed.text).toBe(201);
    expect([...gcp.keys.keys()].filter((id) => /^svch_[A-Za-z0-9_-]{43}$/.test(id))).toHaveLength(1);
  });

  it('fails signatures with a 503 naming the provider when Cloud KMS fails, and /health/ready says so', async () => {
    gcp.failWith = 503;
    try {
      const signer = await svc.running.services.signing.signer('acme', { keyChainId: 'gcp-attestation', usageType: 'attestation' });
      await expect(signer.sign(Buffer.from('x'))).rejects.toMatchObject({ status: 503, extra: { provider: 'gcp' } });
      const created = await svc.call('POST', '/api/key-chain', {
        token: acme,
        body: { usageType: 'access', type: 'standalone', kmsProvider: 'gcp', externalKeyId: 'while-down' },
      });
      expect(created.status).toBe(503);
      expect(problemOf(created).detail).toMatch(/^key provider 'gcp' could not provide key/);
      const ready = await svc.raw('GET', '/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.checks?.['keyProvider:gcp']).toBe('cannot sign');
    } finally {
      gcp.failWith = undefined;
    }
    expect((await svc.raw('GET', '/health/ready')).body.checks?.['keyProvider:gcp']).toBe('ok');
  });
});

describe('start-up', () => {
  it('refuses an entry whose key ring is not a key ring name, naming the provider and the field', () => {
    const file = files.write({ providers: [{ id: 'gcp', type: 'gcp-kms', keyRing: 'svc' }] });
    expect(() => readKmsFile(file)).toThrow(
      `KMS_PROVIDERS ${file}: provider 'gcp': providers.0.keyRing: must be projects/<project>/locations/<location>/keyRings/<key ring>`,
    );
  });

  it('stops naming the provider for a bad key file or a refused assertion (78), and an unreachable Cloud KMS (69)', async () => {
    const database = await freshDatabase();
    try {
      const startWith = (entry: unknown) =>
        startFailure({
          NODE_ENV: 'test',
          PORT: '0',
          LOG_LEVEL: 'silent',
          MASTER_SECRET: randomBytes(32).toString('base64url'),
          ...database.env,
          KMS_PROVIDERS: files.write({ providers: [entry] }),
        });
      const notJson = await startWith(serviceAccountEntry(gcp.url, 'not json'));
      expect(notJson.exitCode).toBe(78);
      expect(notJson.message).toMatch(/provider 'gcp' \(gcp-kms\): serviceAccountKey: is not JSON/);

      // Another account's key: the token endpoint refuses the assertion.
      const stranger = await startGcpKmsFake();
      const foreign = { ...JSON.parse(stranger.serviceAccountKey), token_uri: `${gcp.url}/token` };
      await stranger.stop();
      const refused = await startWith(serviceAccountEntry(gcp.url, JSON.stringify(foreign)));
      expect(refused.exitCode).toBe(78);
      expect(refused.message).toMatch(
        /provider 'gcp' \(gcp-kms\): Cloud KMS key ring .+: Google's token endpoint \(.+\) refuses the credentials \(400: invalid_grant\)$/,
      );

      const gone = await startGcpKmsFake();
      await gone.stop();
      const unreachable = await startWith({ ...serviceAccountEntry(gone.url, gcp.serviceAccountKey) });
      expect(unreachable.exitCode).toBe(69);
      expect(unreachable.message).toMatch(/provider 'gcp' \(gcp-kms\): Cloud KMS key ring .+ is unreachable: .*ECONNREFUSED/);
    } finally {
      await database.drop();
    }
  });
});
