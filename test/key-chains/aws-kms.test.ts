// Key chains in AWS KMS, through the official @aws-sdk/client-kms with a custom endpoint, against a
// fake speaking KMS's JSON 1.1 protocol (KMS cannot run here). Credentials and certificates made
// with those keys are verified independently.
import { randomBytes, verify, X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { derToRaw } from '../../src/key-chains/providers/aws-kms/provider.js';
import { readKmsFile } from '../../src/key-chains/providers/kms-file.js';
import { type AwsKmsFake, startAwsKmsFake } from '../support/aws-kms-fake.js';
import { freshDatabase } from '../support/database.js';
import { PID } from '../support/fixtures.js';
import { kmsFiles, tenantInstance } from '../support/kms-files.js';
import { verifySdJwtIndependently } from '../support/sd-jwt-check.js';
import { startFailure, startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

let kms: AwsKmsFake;
let svc: TestService;
let acme: string;
/** The namespace of acme's aliases: alias/svc/acme/<instance>. */
let acmeAliases: string;
const files = kmsFiles();

function kmsFile(endpoint: string, accessKeyId: unknown = { env: 'TEST_AWS_KEY_ID' }) {
  const provider = {
    id: 'aws',
    type: 'aws-kms',
    region: 'eu-central-1',
    endpoint,
    accessKeyId,
    secretAccessKey: { env: 'TEST_AWS_SECRET' },
  };
  return files.write({ providers: [provider] });
}

beforeAll(async () => {
  kms = await startAwsKmsFake();
  svc = await startService({
    KMS_PROVIDERS: kmsFile(kms.url),
    TEST_AWS_KEY_ID: kms.credentials.accessKeyId,
    TEST_AWS_SECRET: kms.credentials.secretAccessKey,
  });
  acme = (await svc.tenant('acme')).token;
  acmeAliases = `alias/svc/acme/${await tenantInstance(svc.db, 'acme')}`;
});
afterAll(async () => {
  await svc?.stop();
  await kms?.stop();
  files.remove();
});

describe('AWS KMS', () => {
  let chain: any;
  beforeAll(async () => {
    const reply = await svc.call('POST', '/api/key-chain', {
      token: acme,
      body: {
        id: 'kms-attestation',
        usageType: 'attestation',
        type: 'internalChain',
        kmsProvider: 'aws',
        externalKeyId: 'acme-attestation',
      },
    });
    expect(reply.status, reply.text).toBe(201);
    chain = reply.body;
  });

  it('makes the keys in KMS under aliases, and keeps only their ARNs and public keys', async () => {
    expect([...kms.aliases.keys()].sort()).toEqual([`${acmeAliases}/acme-attestation`, `${acmeAliases}/acme-attestation-root`]);
    expect(kms.targets).toEqual(expect.arrayContaining(['TrentService.CreateKey', 'TrentService.GetPublicKey', 'TrentService.Sign']));
    const row = await svc.db.selectFrom('key_chains').selectAll().where('id', '=', 'kms-attestation').executeTakeFirstOrThrow();
    const active = JSON.parse(row.active_jwk);
    expect(active.ref).toBe(kms.keys.get(kms.aliases.get(`${acmeAliases}/acme-attestation`) as string)?.arn);
    expect(Object.keys(active.jwk).sort()).toEqual(['crv', 'kty', 'x', 'y']);
    const [leaf] = (await svc.call('GET', '/api/key-chain/kms-attestation/certificate', { token: acme })).text.split(
      /(?<=-----END CERTIFICATE-----)\n/,
    );
    expect(new X509Certificate(leaf as string).verify(new X509Certificate(chain.rootCertificate).publicKey)).toBe(true);
  });

  it('issues SD-JWT VCs signed by KMS that verify with the chain certificate', async () => {
    expect(
      (await svc.call('POST', '/api/issuer/credentials', { token: acme, body: { ...PID, keyChainId: 'kms-attestation' } })).status,
    ).toBe(201);
    const issued = await issueCredential(svc, acme, 'pid', { given_name: 'Erika', family_name: 'Mustermann' });
    const { claims } = await verifySdJwtIndependently(issued.credential, chain.rootCertificate);
    expect(claims.family_name).toBe('Mustermann');
  });

  it('rotates to a new KMS key; a key already under the alias is taken as it is', async () => {
    const rotated = await svc.call('POST', '/api/key-chain/kms-attestation/rotate', { token: acme });
    expect(rotated.status, rotated.text).toBe(200);
    expect(kms.keys.size).toBe(3);
    expect([...kms.aliases.keys()].some((alias) => new RegExp(`^${acmeAliases}/acme-attestation-\\d{8}t\\d{9}z$`).test(alias))).toBe(true);
    const again = await svc.call('POST', '/api/key-chain', {
      token: acme,
      body: { usageType: 'access', type: 'standalone', kmsProvider: 'aws', externalKeyId: 'acme-attestation' },
    });
    expect(again.status, again.text).toBe(201);
    expect(again.body.activeJwk.kid).toBe(chain.activeJwk.kid);
    expect(kms.keys.size).toBe(3);
  });

  it('fails signatures with a 503 naming the provider when KMS fails, and /health/ready says so', async () => {
    kms.failWith = 'KMSInternalException';
    try {
      const signer = await svc.running.services.signing.signer('acme', { keyChainId: 'kms-attestation', usageType: 'attestation' });
      await expect(signer.sign(Buffer.from('x'))).rejects.toMatchObject({ status: 503, extra: { provider: 'aws' } });
      const ready = await svc.raw('GET', '/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.checks?.['keyProvider:aws']).toBe('cannot sign');
    } finally {
      kms.failWith = undefined;
    }
  });
});

describe('DER signatures', () => {
  it('become r || s of the curve size, leading zeros and sign bytes handled', () => {
    const r = Buffer.alloc(32, 0x80);
    const s = Buffer.concat([Buffer.alloc(1), Buffer.alloc(31, 0x11)]);
    const der = Buffer.concat([Buffer.from([0x30, 2 + 33 + 2 + 31, 0x02, 33, 0]), r, Buffer.from([0x02, 31]), s.subarray(1)]);
    expect(Buffer.from(derToRaw(der, 32))).toEqual(Buffer.concat([r, s]));
    expect(() => derToRaw(Buffer.from([0x31, 0]), 32)).toThrow(/DER SEQUENCE/);
  });

  it('verify as the DER KMS gave', async () => {
    const signer = await svc.running.services.signing.signer('acme', { keyChainId: 'kms-attestation', usageType: 'attestation' });
    const signature = await signer.sign(Buffer.from('payload'));
    const certificate = new X509Certificate(Buffer.from(signer.x5c[0] as string, 'base64'));
    expect(verify('sha256', Buffer.from('payload'), { key: certificate.publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
  });
});

describe('start-up', () => {
  it('refuses an entry with one of accessKeyId and secretAccessKey, naming the provider and the field', () => {
    const half = files.write({ providers: [{ id: 'aws', type: 'aws-kms', region: 'eu-central-1', accessKeyId: 'AKIAONLY' }] });
    expect(() => readKmsFile(half)).toThrow(
      `KMS_PROVIDERS ${half}: provider 'aws': providers.0.accessKeyId: set both accessKeyId and secretAccessKey, or neither`,
    );
    const both = files.write({
      providers: [{ id: 'aws', type: 'aws-kms', region: 'eu-central-1', accessKeyId: 'A', secretAccessKey: 'S' }],
    });
    expect(readKmsFile(both).providers).toMatchObject([{ id: 'aws', type: 'aws-kms', accessKeyId: 'A', secretAccessKey: 'S' }]);
  });

  it('stops naming the provider when KMS refuses the credentials (78) or cannot be reached (69)', async () => {
    const database = await freshDatabase();
    try {
      const startWith = async (file: string) => {
        const env = {
          NODE_ENV: 'test',
          PORT: '0',
          LOG_LEVEL: 'silent',
          MASTER_SECRET: randomBytes(32).toString('base64url'),
          ...database.env,
        };
        const failure = await startFailure({ ...env, KMS_PROVIDERS: file, TEST_AWS_SECRET: 'x' });
        return failure;
      };
      const refused = await startWith(kmsFile(kms.url, 'AKIAWRONG'));
      expect(refused.exitCode).toBe(78);
      expect(refused.message).toMatch(
        /provider 'aws' \(aws-kms\): AWS KMS \(http:\/\/127\.0\.0\.1:\d+\) refuses the credentials \(UnrecognizedClientException\)$/,
      );
      const gone = await startAwsKmsFake();
      await gone.stop();
      const unreachable = await startWith(kmsFile(gone.url, kms.credentials.accessKeyId));
      expect(unreachable.exitCode).toBe(69);
      expect(unreachable.message).toMatch(/provider 'aws' \(aws-kms\): AWS KMS \(.+\) is unreachable/);
    } finally {
      await database.drop();
    }
  });
});
