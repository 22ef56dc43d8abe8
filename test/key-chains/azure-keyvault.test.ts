// Key chains in Azure Key Vault, over its REST API through the outbound client, against a fake that
// speaks Key Vault's and Microsoft Entra's documented protocols (Azure cannot run here). Two
// providers share the fake: one with an app registration's client secret, one with the managed
// identity (IMDS). Credentials and certificates made with those keys are verified independently.
import { randomBytes, verify, X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CachedToken } from '../../src/key-chains/providers/bearer-token.js';
import { readKmsFile } from '../../src/key-chains/providers/kms-file.js';
import { OutboundClient } from '../../src/platform/outbound/client.js';
import { type AzureKeyVaultFake, startAzureKeyVaultFake } from '../support/azure-keyvault-fake.js';
import { freshDatabase } from '../support/database.js';
import { MDL_NAMESPACE, mdl, PID } from '../support/fixtures.js';
import { kmsFiles, tenantInstance } from '../support/kms-files.js';
import { verifyMdocIssuerAuth } from '../support/mdoc-check.js';
import { expectFieldErrors, problemOf } from '../support/problems.js';
import { verifySdJwtIndependently } from '../support/sd-jwt-check.js';
import { startFailure, startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

let azure: AzureKeyVaultFake;
let svc: TestService;
let acme: string;
let other: string;
/** acme's namespace as Key Vault spells it: svc-dacme-d<instance> (- escapes: -d for '.', -- for -, -u for _). */
let acmeKeys: string;
const files = kmsFiles();
const spelled = (namespace: string, name: string) => `${namespace}-d${name.replace(/-/g, '--')}`;

const clientSecretEntry = (url: string, clientSecret: unknown = { env: 'TEST_AZURE_SECRET' }) => ({
  id: 'azure',
  type: 'azure-keyvault',
  vaultUrl: url,
  tenantId: azure.tenantId,
  clientId: azure.client.id,
  clientSecret,
  authorityUrl: url,
});

beforeAll(async () => {
  azure = await startAzureKeyVaultFake();
  const managedIdentity = {
    id: 'azure-mi',
    type: 'azure-keyvault',
    vaultUrl: azure.url,
    identityEndpoint: `${azure.url}/metadata/identity/oauth2/token`,
  };
  svc = await startService({
    KMS_PROVIDERS: files.write({ providers: [clientSecretEntry(azure.url), managedIdentity] }),
    TEST_AZURE_SECRET: azure.client.secret,
  });
  acme = (await svc.tenant('acme')).token;
  other = (await svc.tenant('other')).token;
  acmeKeys = `svc-dacme-d${await tenantInstance(svc.db, 'acme')}`;
});
afterAll(async () => {
  await svc?.stop();
  await azure?.stop();
  files.remove();
});

describe('Azure Key Vault', () => {
  let chain: any;
  beforeAll(async () => {
    const reply = await svc.call('POST', '/api/key-chain', {
      token: acme,
      body: {
        id: 'azure-attestation',
        usageType: 'attestation',
        type: 'internalChain',
        kmsProvider: 'azure',
        externalKeyId: 'acme-attestation',
      },
    });
    expect(reply.status, reply.text).toBe(201);
    chain = reply.body;
  });

  it('lists both providers with what they can do', async () => {
    const providers = (await svc.call('GET', '/api/key-chain/providers', { token: acme })).body as any[];
    expect(providers.filter((p) => p.type === 'azure-keyvault').map((p) => [p.id, p.capabilities])).toEqual(
      ['azure', 'azure-mi'].map((id) => [id, { generate: true, import: false, algorithms: ['ES256', 'ES384', 'ES512'], decrypt: false }]),
    );
  });

  it("makes the keys in the vault under the tenant's names, and keeps only the pinned version and the public key", async () => {
    expect([...azure.keys.keys()].sort()).toEqual([spelled(acmeKeys, 'acme-attestation'), spelled(acmeKeys, 'acme-attestation-root')]);
    const [version] = azure.keys.get(spelled(acmeKeys, 'acme-attestation')) ?? [];
    const row = await svc.db.selectFrom('key_chains').selectAll().where('id', '=', 'azure-attestation').executeTakeFirstOrThrow();
    const active = JSON.parse(row.active_jwk);
    expect(active).toEqual({ ref: `${spelled(acmeKeys, 'acme-attestation')}/${version?.version}`, jwk: { ...version?.jwk } });
    const leaf = new X509Certificate(chain.activeCertificate);
    expect(leaf.verify(new X509Certificate(chain.rootCertificate).publicKey)).toBe(true);
  });

  it('issues SD-JWT VCs and mdocs signed in the vault that verify with the chain certificate', async () => {
    const pid = await svc.call('POST', '/api/issuer/credentials', { token: acme, body: { ...PID, keyChainId: 'azure-attestation' } });
    expect(pid.status, pid.text).toBe(201);
    const sdJwt = await issueCredential(svc, acme, 'pid', { given_name: 'Erika', family_name: 'Mustermann' });
    const { claims } = await verifySdJwtIndependently(sdJwt.credential, chain.rootCertificate);
    expect(claims.family_name).toBe('Mustermann');

    const mdoc = { ...mdl(['given_name', 'family_name']), id: 'mdl-azure', keyChainId: 'azure-attestation' };
    expect((await svc.call('POST', '/api/issuer/credentials', { token: acme, body: mdoc })).status).toBe(201);
    const issued = await issueCredential(svc, acme, 'mdl-azure', { [MDL_NAMESPACE]: { given_name: 'Erika', family_name: 'Mustermann' } });
    const leaf = verifyMdocIssuerAuth(issued.credential, new X509Certificate(chain.rootCertificate));
    expect(leaf.publicKey.export({ format: 'jwk' })).toMatchObject({ x: chain.activeJwk.x, y: chain.activeJwk.y });
    expect(azure.requests).toContain(
      `POST /keys/${spelled(acmeKeys, 'acme-attestation')}/${azure.keys.get(spelled(acmeKeys, 'acme-attestation'))?.[0]?.version}/sign`,
    );
    // One client-credentials token served every call so far.
    expect(azure.tokensIssued.clientCredentials).toBe(1);
  });

  it('signs with P-384 and P-521 keys too', async () => {
    for (const algorithm of ['ES384', 'ES512'] as const) {
      const id = `azure-${algorithm.toLowerCase()}`;
      const created = await svc.call('POST', '/api/key-chain', {
        token: acme,
        body: { id, usageType: 'access', type: 'standalone', algorithm, kmsProvider: 'azure', externalKeyId: id },
      });
      expect(created.status, created.text).toBe(201);
      const signer = await svc.running.services.signing.signer('acme', { keyChainId: id, usageType: 'access' });
      const certificate = new X509Certificate(created.body.activeCertificate);
      const hash = algorithm === 'ES384' ? 'sha384' : 'sha512';
      const signature = await signer.sign(Buffer.from('signed data'));
      expect(verify(hash, Buffer.from('signed data'), { key: certificate.publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
    }
  });

  it('signs with the managed identity, its token from IMDS', async () => {
    const created = await svc.call('POST', '/api/key-chain', {
      token: acme,
      body: { id: 'azure-mi-access', usageType: 'access', type: 'standalone', kmsProvider: 'azure-mi', externalKeyId: 'mi-access' },
    });
    expect(created.status, created.text).toBe(201);
    const signer = await svc.running.services.signing.signer('acme', { keyChainId: 'azure-mi-access', usageType: 'access' });
    const signature = await signer.sign(Buffer.from('signed data'));
    const certificate = new X509Certificate(created.body.activeCertificate);
    expect(verify('sha256', Buffer.from('signed data'), { key: certificate.publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
    expect(azure.tokensIssued.managedIdentity).toBe(1);
  });

  it('takes a new token when the vault no longer takes the kept one', async () => {
    azure.revokeTokens();
    const before = azure.tokensIssued.clientCredentials;
    const signer = await svc.running.services.signing.signer('acme', { keyChainId: 'azure-attestation', usageType: 'attestation' });
    await signer.sign(Buffer.from('after revocation'));
    expect(azure.tokensIssued.clientCredentials).toBe(before + 1);
  });

  it('keeps signing with the version it certified when the key gets a new version in the vault, and rotates to a new vault key', async () => {
    const name = spelled(acmeKeys, 'acme-attestation');
    azure.rotateKey(name);
    expect(azure.keys.get(name)).toHaveLength(2);
    const signer = await svc.running.services.signing.signer('acme', { keyChainId: 'azure-attestation', usageType: 'attestation' });
    const signature = await signer.sign(Buffer.from('pinned'));
    const certificate = new X509Certificate(chain.activeCertificate);
    expect(verify('sha256', Buffer.from('pinned'), { key: certificate.publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);

    const rotated = await svc.call('POST', '/api/key-chain/azure-attestation/rotate', { token: acme });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.previousJwk?.kid).toBe(chain.activeJwk.kid);
    expect(rotated.body.activeJwk.kid).not.toBe(chain.activeJwk.kid);
    // The rotated key's name: <externalKeyId>-<UTC time>, spelled for Key Vault (- as --).
    const rotatedName = new RegExp(`^${spelled(acmeKeys, 'acme-attestation')}--\\d{8}t\\d{9}z$`);
    expect([...azure.keys.keys()].filter((key) => rotatedName.test(key))).toHaveLength(1);
    const next = new X509Certificate(rotated.body.activeCertificate);
    expect(next.verify(new X509Certificate(chain.rootCertificate).publicKey)).toBe(true);
  });

  it("never lets another tenant reach acme's key: the same externalKeyId is a key of its own", async () => {
    expect((await svc.call('GET', '/api/key-chain/azure-attestation', { token: other })).status).toBe(404);
    const created = await svc.call('POST', '/api/key-chain', {
      token: other,
      body: { usageType: 'access', type: 'standalone', kmsProvider: 'azure', externalKeyId: 'acme-attestation' },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.activeJwk.kid).not.toBe(chain.activeJwk.kid);
    const otherKeys = `svc-dother-d${await tenantInstance(svc.db, 'other')}`;
    expect(azure.keys.has(spelled(otherKeys, 'acme-attestation'))).toBe(true);
  });

  it('refuses a bad externalKeyId with a 400 naming it', async () => {
    const reply = await svc.call('POST', '/api/key-chain', {
      token: acme,
      body: { usageType: 'access', type: 'standalone', kmsProvider: 'azure', externalKeyId: 'a.b' },
    });
    expectFieldErrors(reply, ['body.externalKeyId']);
  });

  it('fails signatures with a 503 naming the provider when the vault fails, and /health/ready says so', async () => {
    azure.failWith = 503;
    try {
      const signer = await svc.running.services.signing.signer('acme', { keyChainId: 'azure-attestation', usageType: 'attestation' });
      await expect(signer.sign(Buffer.from('x'))).rejects.toMatchObject({ status: 503, extra: { provider: 'azure' } });
      const created = await svc.call('POST', '/api/key-chain', {
        token: acme,
        body: { usageType: 'access', type: 'standalone', kmsProvider: 'azure', externalKeyId: 'while-down' },
      });
      expect(created.status).toBe(503);
      expect(problemOf(created).detail).toMatch(/^key provider 'azure' could not provide key/);
      const ready = await svc.raw('GET', '/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.checks?.['keyProvider:azure']).toBe('cannot sign');
    } finally {
      azure.failWith = undefined;
    }
    expect((await svc.raw('GET', '/health/ready')).body.checks?.['keyProvider:azure']).toBe('ok');
  });
});

describe('tokens', () => {
  it('are kept until shortly before they expire', async () => {
    let now = 0;
    let fetched = 0;
    const token = new CachedToken(
      async () => ({ accessToken: `t${++fetched}`, expiresInSeconds: 3600 }),
      () => now,
    );
    expect(await Promise.all([token.get(), token.get()])).toEqual(['t1', 't1']);
    now = 3600_000 - 5 * 60_000 - 1;
    expect(await token.get()).toBe('t1');
    now += 1;
    expect(await token.get()).toBe('t2');
    token.drop();
    expect(await token.get()).toBe('t3');
  });

  it('of the managed identity may come from the cloud metadata address, which stays refused to every other call', () => {
    const outbound = new OutboundClient({ allowPrivate: true });
    const imds = 'http://169.254.169.254/metadata/identity/oauth2/token';
    expect(outbound.urlRefusal(imds)).toMatch(/cloud metadata address/);
    expect(outbound.admittingMetadata().urlRefusal(imds)).toBeUndefined();
    expect(new OutboundClient({ allowPrivate: false }).admittingMetadata().urlRefusal(imds)).toMatch(/cloud metadata address/);
  });
});

describe('start-up', () => {
  it('refuses an entry with a client secret but no tenant, naming the provider and the field', () => {
    const entry = { id: 'azure', type: 'azure-keyvault', vaultUrl: 'https://svc.vault.azure.net', clientId: 'abc', clientSecret: 'x' };
    const file = files.write({ providers: [entry] });
    expect(() => readKmsFile(file)).toThrow(
      `KMS_PROVIDERS ${file}: provider 'azure': providers.0.clientSecret: set tenantId, clientId and clientSecret together, or only clientId or none`,
    );
    const bad = files.write({ providers: [{ id: 'azure', type: 'azure-keyvault', vaultUrl: 'ftp://vault' }] });
    expect(() => readKmsFile(bad)).toThrow(`KMS_PROVIDERS ${bad}: provider 'azure': providers.0.vaultUrl:`);
  });

  it('stops naming the provider when Entra refuses the secret (78), the vault cannot be reached (69), or it is the metadata address', async () => {
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
      const refused = await startWith(clientSecretEntry(azure.url, 'wrong-secret'));
      expect(refused.exitCode).toBe(78);
      expect(refused.message).toMatch(
        /provider 'azure' \(azure-keyvault\): Azure Key Vault http:\/\/127\.0\.0\.1:\d+: Microsoft Entra \(.+\) refuses the credentials \(401: invalid_client\)$/,
      );
      expect(refused.message).not.toContain('wrong-secret');
      const gone = await startAzureKeyVaultFake();
      await gone.stop();
      const unreachable = await startWith(clientSecretEntry(gone.url, 'x'));
      expect(unreachable.exitCode).toBe(69);
      expect(unreachable.message).toMatch(/provider 'azure' \(azure-keyvault\): Azure Key Vault .+ is unreachable: .*ECONNREFUSED/);
      const metadata = await startWith({ ...clientSecretEntry('http://169.254.169.254', azure.client.secret), authorityUrl: azure.url });
      expect(metadata.exitCode).toBe(69);
      expect(metadata.message).toMatch(/refused: 169\.254\.169\.254 is the cloud metadata address/);
    } finally {
      await database.drop();
    }
  });
});
