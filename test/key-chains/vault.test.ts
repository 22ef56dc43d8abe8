// Key chains in HashiCorp Vault Transit, against a fake that speaks Transit's HTTP API (Vault cannot
// run here). Vault is the default provider here: a new tenant's signing chains are made there.
// Credentials are verified independently with the chain's certificates.
import { randomBytes, verify, X509Certificate } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, assert, beforeAll, describe, expect, it } from 'vitest';
import { importEnvironment } from '../../src/config-files/environment.js';
import { freshDatabase } from '../support/database.js';
import { PID } from '../support/fixtures.js';
import { kmsFiles, tenantInstance } from '../support/kms-files.js';
import { problemOf } from '../support/problems.js';
import { verifySdJwtIndependently } from '../support/sd-jwt-check.js';
import { startFailure, startService, type TestService } from '../support/service.js';
import { startVaultFake, type VaultFake } from '../support/vault-fake.js';
import { issueCredential } from '../support/wallet.js';

let vault: VaultFake;
let svc: TestService;
let acme: string;
/** The namespace of acme's keys in Vault: svc.acme.<instance>. */
let acmeKeys: string;
const files = kmsFiles();

const kmsFile = (url: string, token: unknown = { env: 'TEST_VAULT_TOKEN' }) =>
  files.write({ defaultProvider: 'vault', providers: [{ id: 'vault', type: 'vault', url, token, mount: 'transit' }] });

beforeAll(async () => {
  vault = await startVaultFake();
  svc = await startService({ KMS_PROVIDERS: kmsFile(vault.url), TEST_VAULT_TOKEN: vault.token });
  acme = (await svc.tenant('acme')).token;
  acmeKeys = `svc.acme.${await tenantInstance(svc.db, 'acme')}`;
});
afterAll(async () => {
  await svc?.stop();
  await vault?.stop();
  files.remove();
});

describe('Vault Transit as the default provider', () => {
  it("makes a new tenant's signing keys in Vault, and keeps the decryption key in db", async () => {
    const chains = (await svc.call('GET', '/api/key-chain', { token: acme })).body as any[];
    const byUsage = Object.fromEntries(chains.map((chain) => [chain.usageType, chain]));
    expect(byUsage.attestation).toMatchObject({ kmsProvider: 'vault', externalKeyId: 'default-attestation' });
    expect(byUsage.statusList).toMatchObject({ kmsProvider: 'vault', externalKeyId: 'default-statusList' });
    expect(byUsage.encrypt).toMatchObject({ kmsProvider: 'db', externalKeyId: null });
    expect([...vault.keys.keys()]).toEqual(
      expect.arrayContaining([`${acmeKeys}.default-attestation`, `${acmeKeys}.default-attestation-root`, `${acmeKeys}.default-access`]),
    );
    expect(vault.keys.get(`${acmeKeys}.default-attestation`)?.type).toBe('ecdsa-p256');
    const providers = (await svc.call('GET', '/api/key-chain/providers', { token: acme })).body as any[];
    expect(providers.map((p) => [p.id, p.type, p.default])).toEqual([
      ['db', 'db', false],
      ['vault', 'vault', true],
    ]);
  });

  it('takes a configuration file without kmsProvider as describing a chain of the default provider', async () => {
    const folder = join(files.dir, 'config');
    mkdirSync(join(folder, 'acme', 'key-chains'), { recursive: true });
    const file = { usageType: 'attestation', type: 'internalChain', description: 'described by a file' };
    writeFileSync(join(folder, 'acme', 'tenant.json'), JSON.stringify({ name: 'Tenant acme' }));
    writeFileSync(join(folder, 'acme', 'key-chains', 'default-attestation.json'), JSON.stringify(file));
    await svc.running.services.configFiles.importFolder(folder, importEnvironment({}));
    const chain = (await svc.call('GET', '/api/key-chain/default-attestation', { token: acme })).body;
    expect(chain).toMatchObject({ kmsProvider: 'vault', description: 'described by a file' });
  });

  it('issues SD-JWT VCs signed in Vault that verify with the chain certificate', async () => {
    expect((await svc.call('POST', '/api/issuer/credentials', { token: acme, body: PID })).status).toBe(201);
    const chain = (await svc.call('GET', '/api/key-chain/default-attestation', { token: acme })).body;
    const issued = await issueCredential(svc, acme, 'pid', { given_name: 'Erika', family_name: 'Mustermann' });
    // An internal chain has a root (a standalone key has none).
    assert.isNotNull(chain.rootCertificate, 'the chain has a root certificate');
    const { claims } = await verifySdJwtIndependently(issued.credential, chain.rootCertificate);
    expect(claims.given_name).toBe('Erika');
    expect(vault.requests).toContain(`POST /v1/transit/sign/${acmeKeys}.default-attestation`);
  });

  it('keeps signing with the version it certified when the key is rotated inside Vault, and rotates to a new Vault key', async () => {
    const created = await svc.call('POST', '/api/key-chain', {
      token: acme,
      body: { id: 'vault-access', usageType: 'access', type: 'standalone', kmsProvider: 'vault', externalKeyId: 'acme-access' },
    });
    expect(created.status, created.text).toBe(201);
    expect(
      (
        await fetch(`${vault.url}/v1/transit/keys/${acmeKeys}.acme-access/rotate`, {
          method: 'POST',
          headers: { 'x-vault-token': vault.token },
        })
      ).status,
    ).toBe(204);
    const signer = await svc.running.services.signing.signer('acme', { keyChainId: 'vault-access', usageType: 'access' });
    const certificate = new X509Certificate(created.body.activeCertificate);
    const signature = await signer.sign(Buffer.from('signed data'));
    expect(verify('sha256', Buffer.from('signed data'), { key: certificate.publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);

    const rotated = await svc.call('POST', '/api/key-chain/vault-access/rotate', { token: acme });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.previousJwk?.kid).toBe(created.body.activeJwk.kid);
    const names = [...vault.keys.keys()].filter((name) => name.startsWith(`${acmeKeys}.acme-access-`));
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(new RegExp(`^${acmeKeys}\\.acme-access-\\d{8}t\\d{9}z$`));
  });

  it('moves a self-signed Vault chain under a root CA made in Vault beside its key, which signs its later leaves too', async () => {
    const { token } = await svc.tenant('vault-legacy');
    const keys = `svc.vault-legacy.${await tenantInstance(svc.db, 'vault-legacy')}`;
    const body = { id: 'old-access', usageType: 'access', type: 'standalone', kmsProvider: 'vault', externalKeyId: 'old-access' } as const;
    const created = await svc.call('POST', '/api/key-chain', { token, body });
    expect(created.status, created.text).toBe(201);

    const reply = await svc.raw('POST', '/api/key-chain/move-to-ca', { token });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.moved.map((chain: any) => chain.id)).toEqual(['old-access']);
    const moved = (await svc.call('GET', '/api/key-chain/old-access', { token })).body;
    expect(moved).toMatchObject({ type: 'internalChain', kmsProvider: 'vault', activeJwk: { kid: created.body.activeJwk.kid } });
    expect(vault.keys.get(`${keys}.old-access-root`)?.type).toBe('ecdsa-p256');
    const root = new X509Certificate(moved.rootCertificate as string);
    const leaf = new X509Certificate(moved.activeCertificate);
    expect(leaf.checkIssued(root) && leaf.verify(root.publicKey)).toBe(true);
    expect(vault.requests).toContain(`POST /v1/transit/sign/${keys}.old-access-root`);

    const rotated = await svc.call('POST', '/api/key-chain/old-access/rotate', { token });
    expect(rotated.status, rotated.text).toBe(200);
    const next = new X509Certificate(rotated.body.activeCertificate);
    expect(next.checkIssued(root) && next.verify(root.publicKey)).toBe(true);
    expect(rotated.body.previousJwk?.kid).toBe(created.body.activeJwk.kid);
  });

  it('fails signatures with a 503 naming the provider when Vault fails, and /health/ready says so', async () => {
    vault.failWith = 503;
    try {
      const ready = await svc.call('GET', '/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.checks?.['keyProvider:vault']).toBe('cannot sign');
      const signer = await svc.running.services.signing.signer('acme', { usageType: 'attestation' });
      await expect(signer.sign(Buffer.from('x'))).rejects.toMatchObject({ status: 503, extra: { provider: 'vault' } });
      const trustList = await svc.call('POST', '/api/trust-list', {
        token: acme,
        body: { id: 'while-sealed', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
      });
      expect(trustList.status).toBe(503);
      expect(problemOf(trustList).detail).toBe("key provider 'vault' could not sign; the service log has the reason");
    } finally {
      vault.failWith = undefined;
    }
    expect((await svc.call('GET', '/health/ready')).body.checks?.['keyProvider:vault']).toBe('ok');
  });
});

describe('start-up', () => {
  const startWith = async (file: string) => {
    const database = await freshDatabase();
    try {
      const env = {
        NODE_ENV: 'test',
        PORT: '0',
        LOG_LEVEL: 'silent',
        MASTER_SECRET: randomBytes(32).toString('base64url'),
        ...database.env,
      };
      const failure = await startFailure({ ...env, KMS_PROVIDERS: file, TEST_VAULT_TOKEN: vault.token });
      return failure;
    } finally {
      await database.drop();
    }
  };

  it('stops naming the provider when Vault refuses the token (78)', async () => {
    const failure = await startWith(kmsFile(vault.url, 'hvs.wrong'));
    expect(failure.exitCode).toBe(78);
    expect(failure.message).toMatch(/provider 'vault' \(vault\): Vault at http:\/\/127\.0\.0\.1:\d+ refuses the token \(403\)$/);
    expect(failure.message).not.toContain('hvs.wrong');
  });

  it('stops naming the provider when Vault is unreachable (69), and never calls a cloud metadata address', async () => {
    const stopped = await startVaultFake();
    await stopped.stop();
    const unreachable = await startWith(kmsFile(stopped.url));
    expect(unreachable.exitCode).toBe(69);
    expect(unreachable.message).toMatch(/provider 'vault' \(vault\): Vault at .+ is unreachable: .*ECONNREFUSED/);
    const metadata = await startWith(kmsFile('http://169.254.169.254'));
    expect(metadata.exitCode).toBe(69);
    expect(metadata.message).toMatch(/refused: 169\.254\.169\.254 is the cloud metadata address/);
  });
});
