// Keys in a provider shared by all tenants (a PKCS#11 token, a Vault mount, an AWS account) belong to
// the tenant that made them: a tenant's externalKeyId names a key in its own namespace, so no tenant
// reaches another's key by naming it, nor by picking tenant and chain ids that run together. A key
// the operator made outside svc is reached by its own name only by the tenant KMS_PROVIDERS lets
// adopt it. Real SoftHSM2; Vault and AWS KMS are fakes speaking their HTTP APIs.
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { CreateAliasCommand, CreateKeyCommand, GetPublicKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CKA, CKK_EC, CKO, Cryptoki } from '../../src/key-chains/providers/pkcs11/cryptoki.js';
import { removeFolders, writeFolder } from '../config-files/support.js';
import { type AwsKmsFake, startAwsKmsFake } from '../support/aws-kms-fake.js';
import { freshDatabase } from '../support/database.js';
import { tenantInstance } from '../support/kms-files.js';
import { expectFieldErrors, expectProblem, problemOf } from '../support/problems.js';
import { startFailure, startService, type TestService } from '../support/service.js';
import { SOFTHSM_MODULE, type SoftHsm, softHsm } from '../support/softhsm.js';
import { startVaultFake, type VaultFake } from '../support/vault-fake.js';

const PIN = '271828';
let hsm: SoftHsm;
let vault: VaultFake;
let kms: AwsKmsFake;
let svc: TestService;
/** The KMS_PROVIDERS file of the service, for another instance beside it. */
let kmsProviders: string;
const tokens: Record<string, string> = {};

/** Public keys of the operator's keys made outside svc, by provider. */
const operatorKeys: Record<string, { x: string; y: string }> = {};

/** A P-256 key pair made in the token directly, as an operator's tool would: label `label`. */
function makeTokenKey(label: string) {
  const cryptoki = Cryptoki.open(SOFTHSM_MODULE);
  try {
    const slot = cryptoki.findSlot('svc-names') as number;
    const session = cryptoki.openSession(slot);
    cryptoki.login(session, PIN);
    const p256 = Buffer.from('06082a8648ce3d030107', 'hex');
    const { publicKey } = cryptoki.generateKeyPair(
      session,
      [
        [CKA.CLASS, CKO.PUBLIC_KEY],
        [CKA.KEY_TYPE, CKK_EC],
        [CKA.TOKEN, true],
        [CKA.LABEL, label],
        [CKA.EC_PARAMS, p256],
        [CKA.VERIFY, true],
      ],
      [
        [CKA.CLASS, CKO.PRIVATE_KEY],
        [CKA.KEY_TYPE, CKK_EC],
        [CKA.TOKEN, true],
        [CKA.PRIVATE, true],
        [CKA.LABEL, label],
        [CKA.SIGN, true],
        [CKA.SENSITIVE, true],
      ],
    );
    const [point] = cryptoki.attributes(session, publicKey, [CKA.EC_POINT]);
    cryptoki.closeSession(session);
    const raw = (point as Buffer).subarray(-65);
    return { x: raw.subarray(1, 33).toString('base64url'), y: raw.subarray(33).toString('base64url') };
  } finally {
    cryptoki.close();
  }
}

async function makeVaultKey(name: string) {
  const headers = { 'x-vault-token': vault.token, 'content-type': 'application/json' };
  const made = await fetch(`${vault.url}/v1/transit/keys/${name}`, { method: 'POST', headers, body: '{"type":"ecdsa-p256"}' });
  expect(made.status).toBe(204);
  const read = (await (await fetch(`${vault.url}/v1/transit/keys/${name}`, { headers })).json()) as any;
  const jwk = createPublicKey(read.data.keys['1'].public_key).export({ format: 'jwk' });
  return { x: jwk.x as string, y: jwk.y as string };
}

async function makeAwsKey(name: string) {
  const client = new KMSClient({ region: kms.region, endpoint: kms.url, credentials: { ...kms.credentials } });
  const made = await client.send(new CreateKeyCommand({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' }));
  await client.send(new CreateAliasCommand({ AliasName: `alias/${name}`, TargetKeyId: made.KeyMetadata?.Arn }));
  const key = await client.send(new GetPublicKeyCommand({ KeyId: `alias/${name}` }));
  client.destroy();
  const jwk = createPublicKey({ key: Buffer.from(key.PublicKey as Uint8Array), format: 'der', type: 'spki' }).export({ format: 'jwk' });
  return { x: jwk.x as string, y: jwk.y as string };
}

beforeAll(async () => {
  hsm = softHsm('svc-names', PIN);
  vault = await startVaultFake();
  kms = await startAwsKmsFake();
  operatorKeys.hsm = makeTokenKey('operator-key');
  operatorKeys.vault = await makeVaultKey('operator-key');
  operatorKeys.aws = await makeAwsKey('operator-key');
  const adopt = [
    { tenant: 'alice', keys: ['operator-key'] },
    { tenant: 'phoenix', keys: ['operator-key'] },
  ];
  kmsProviders = hsm.kmsFile({
    defaultProvider: 'hsm',
    providers: [
      { id: 'hsm', type: 'pkcs11', module: SOFTHSM_MODULE, tokenLabel: 'svc-names', pin: PIN, adopt },
      { id: 'vault', type: 'vault', url: vault.url, token: vault.token, adopt },
      {
        id: 'aws',
        type: 'aws-kms',
        region: kms.region,
        endpoint: kms.url,
        accessKeyId: kms.credentials.accessKeyId,
        secretAccessKey: kms.credentials.secretAccessKey,
        adopt,
      },
    ],
  });
  svc = await startService({ KMS_PROVIDERS: kmsProviders });
  for (const tenant of ['alice', 'mallory', 'v49724', 'v49724-x']) tokens[tenant] = (await svc.tenant(tenant)).token;
});
afterAll(async () => {
  await svc?.stop();
  await vault?.stop();
  await kms?.stop();
  hsm?.remove();
  removeFolders();
});

const point = (jwk: { x?: string; y?: string } | null | undefined) => ({ x: jwk?.x, y: jwk?.y });

const instanceOf = (tenant: string) => tenantInstance(svc.db, tenant);

async function createChain(tenant: string, body: Record<string, unknown>) {
  const reply = await svc.call('POST', '/api/key-chain', { token: tokens[tenant], body: body as any });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

describe.each(['hsm', 'vault', 'aws'])('provider %s: an externalKeyId names a key of the tenant', (provider) => {
  it("gives another tenant naming the same externalKeyId a key of its own, never Alice's", async () => {
    const body = { usageType: 'attestation', type: 'internalChain', kmsProvider: provider, externalKeyId: 'signer' };
    const alice = await createChain('alice', { id: `signer-${provider}`, ...body });
    const mallory = await createChain('mallory', { id: `signer-${provider}`, ...body });
    expect(mallory.externalKeyId).toBe('signer');
    expect(point(mallory.activeJwk)).not.toEqual(point(alice.activeJwk));
    expect(point(mallory.rootJwk)).not.toEqual(point(alice.rootJwk));
    // The same tenant naming its key again gets it again (a chain re-created).
    const again = await createChain('alice', { id: `signer-${provider}-again`, ...body });
    expect(point(again.activeJwk)).toEqual(point(alice.activeJwk));
  });

  it("refuses a name in another tenant's namespace: externalKeyId cannot hold a separator", async () => {
    for (const externalKeyId of ['svc.alice.signer', 'svc/alice/signer']) {
      const reply = await svc.call('POST', '/api/key-chain', {
        token: tokens.mallory,
        body: { usageType: 'access', type: 'standalone', kmsProvider: provider, externalKeyId },
      });
      expectFieldErrors(reply, ['body.externalKeyId']);
    }
  });

  it('lets only the tenant KMS_PROVIDERS names adopt the key the operator made', async () => {
    const body = { usageType: 'access', type: 'standalone', kmsProvider: provider, externalKeyId: 'operator-key' };
    const alice = await createChain('alice', { id: `adopted-${provider}`, ...body });
    expect(point(alice.activeJwk)).toEqual(operatorKeys[provider]);
    const mallory = await createChain('mallory', { id: `adopted-${provider}`, ...body });
    expect(point(mallory.activeJwk)).not.toEqual(operatorKeys[provider]);
  });
});

describe('one name, asked for at once', () => {
  it('makes one key: chains created in parallel with the same externalKeyId share it and all sign', async () => {
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        svc.call('POST', '/api/key-chain', {
          token: tokens.alice,
          body: { id: `parallel-${i}`, usageType: 'access', type: 'standalone', kmsProvider: 'hsm', externalKeyId: 'parallel' },
        }),
      ),
    );
    for (const reply of replies) expect(reply.status, reply.text).toBe(201);
    expect(new Set(replies.map((reply) => reply.body.activeJwk.kid)).size).toBe(1);
    const signer = await svc.running.services.signing.signer('alice', { keyChainId: 'parallel-0', usageType: 'access' });
    expect((await signer.sign(Buffer.from('data'))).length).toBe(64);
  });
});

describe('names in the provider', () => {
  it("keep tenant v49724's chain x-default-attestation apart from tenant v49724-x's default chain (defaultProvider hsm)", async () => {
    const joined = await createChain('v49724', { id: 'x-default-attestation', usageType: 'attestation', type: 'internalChain' });
    const other = (await svc.call('GET', '/api/key-chain/default-attestation', { token: tokens['v49724-x'] })).body;
    expect(other.kmsProvider).toBe('hsm');
    expect(joined.kmsProvider).toBe('hsm');
    expect(point(joined.activeJwk)).not.toEqual(point(other.activeJwk));
    expect(point(joined.rootJwk)).not.toEqual(point(other.rootJwk));
  });

  it('are svc.<tenant>.<instance>.<name> in the token and Vault, alias/svc/<tenant>/<instance>/<name> in AWS KMS', async () => {
    const refOf = async (tenant: string, id: string, column: 'active_jwk' | 'root_jwk' = 'active_jwk') => {
      const row = await svc.db
        .selectFrom('key_chains')
        .selectAll()
        .where('tenant_id', '=', tenant)
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return JSON.parse(row[column] as string).ref as string;
    };
    const [alice, mallory, v49724, v49724x] = await Promise.all(['alice', 'mallory', 'v49724', 'v49724-x'].map(instanceOf));
    expect(alice).toMatch(/^[0-9a-z]{8}$/);
    expect(await refOf('v49724-x', 'default-attestation')).toBe(`svc.v49724-x.${v49724x}.default-attestation`);
    expect(await refOf('v49724', 'x-default-attestation', 'root_jwk')).toBe(`svc.v49724.${v49724}.x-default-attestation-root`);
    expect(await refOf('alice', 'signer-hsm')).toBe(`svc.alice.${alice}.signer`);
    expect(await refOf('alice', 'adopted-hsm')).toBe('operator-key');
    expect(await refOf('mallory', 'adopted-hsm')).toBe(`svc.mallory.${mallory}.operator-key`);
    expect(await refOf('alice', 'signer-vault')).toBe(`svc.alice.${alice}.signer:1`);
    const aliases = [`alias/svc/alice/${alice}/signer`, `alias/svc/mallory/${mallory}/signer`];
    expect([...kms.aliases.keys()]).toEqual(expect.arrayContaining(aliases));
    expect(await refOf('alice', 'signer-aws')).toBe(kms.keys.get(kms.aliases.get(aliases[0] as string) as string)?.arn);
  });

  it('escape the characters of tenant and chain ids that are not letters, digits or - (one-to-one)', async () => {
    const dotted = (await svc.tenant('a.b_c~d')).token;
    const chain = await svc.call('GET', '/api/key-chain/default-access', { token: dotted });
    expect(chain.body.externalKeyId).toBe('default-access');
    const row = await svc.db
      .selectFrom('key_chains')
      .selectAll()
      .where('tenant_id', '=', 'a.b_c~d')
      .where('id', '=', 'default-access')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(row.active_jwk).ref).toBe(`svc.a_2eb_5fc_7ed.${await instanceOf('a.b_c~d')}.default-access`);
    tokens.dotted = dotted;
    const made = await createChain('dotted', { id: 'my.chain', usageType: 'access', type: 'standalone' });
    expect(made.externalKeyId).toBe('my_2echain');
  });
});

describe('a tenant deleted and created again with the same id', () => {
  /** The public keys of the tenant's default chains (on the HSM) and of a chain naming `named` on each provider. */
  async function keysOf(token: string) {
    const keys: Record<string, { x?: string; y?: string }> = {};
    for (const id of ['default-attestation', 'default-access', 'default-statusList', 'default-trustList']) {
      const chain = (await svc.call('GET', `/api/key-chain/${id}`, { token })).body;
      expect(chain.kmsProvider).toBe('hsm');
      keys[id] = point(chain.activeJwk);
      if (chain.rootJwk) keys[`${id} root`] = point(chain.rootJwk);
    }
    for (const provider of ['hsm', 'vault', 'aws']) {
      const body = {
        id: `named-${provider}`,
        usageType: 'attestation',
        type: 'internalChain',
        kmsProvider: provider,
        externalKeyId: 'named',
      };
      const reply = await svc.call('POST', '/api/key-chain', { token, body: body as any });
      expect(reply.status, reply.text).toBe(201);
      keys[`named-${provider}`] = point(reply.body.activeJwk);
      keys[`named-${provider} root`] = point(reply.body.rootJwk);
    }
    return keys;
  }

  it('gets new keys when CONFIG_IMPORT makes it again from its files; an import into the tenant as it is keeps them', async () => {
    const folder = writeFolder({
      'reimported/tenant.json': { name: 'Made from files' },
      'reimported/key-chains/named-vault.json': { usageType: 'access', type: 'standalone', kmsProvider: 'vault', externalKeyId: 'named' },
      'reimported/key-chains/named-aws.json': { usageType: 'access', type: 'standalone', kmsProvider: 'aws', externalKeyId: 'named' },
    });
    const importFolder = async () => (await startService({ CONFIG_IMPORT: folder, KMS_PROVIDERS: kmsProviders }, { besides: svc })).stop();
    const publicKeys = async () => {
      const rows = await svc.db
        .selectFrom('key_chains')
        .selectAll()
        .where('tenant_id', '=', 'reimported')
        .where('kms_provider', '!=', 'db')
        .execute();
      return Object.fromEntries(rows.map((row) => [row.id, point(JSON.parse(row.active_jwk).jwk)]));
    };
    await importFolder();
    const before = await publicKeys();
    expect(Object.keys(before).sort()).toEqual([
      'default-access',
      'default-attestation',
      'default-statusList',
      'default-trustList',
      'named-aws',
      'named-vault',
    ]);
    await importFolder();
    expect(await publicKeys()).toEqual(before);
    const deleted = await svc.call('DELETE', '/api/tenant/reimported', { token: await svc.rootToken() });
    expect(deleted.status, deleted.text).toBe(204);
    await importFolder();
    const after = await publicKeys();
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    for (const [chain, key] of Object.entries(after)) expect(key, chain).not.toEqual(before[chain]);
  });

  it('refuses (409) a chain whose keys were being made while the tenant was deleted and created again: the new tenant never gets it', async () => {
    const deletedTenant = (await svc.tenant('racer')).token;
    let release = () => {};
    vault.hold = new Promise((resolve) => {
      release = resolve;
    });
    try {
      const body = { id: 'raced', usageType: 'access', type: 'standalone', kmsProvider: 'vault', externalKeyId: 'raced' } as const;
      const pending = svc.call('POST', '/api/key-chain', { token: deletedTenant, body });
      // The key is being made in Vault (named for the first racer) when the tenant is deleted and made again.
      await vi.waitFor(() => expect(vault.requests.some((request) => request.endsWith('.raced'))).toBe(true));
      const deleted = await svc.call('DELETE', '/api/tenant/racer', { token: await svc.rootToken() });
      expect(deleted.status, deleted.text).toBe(204);
      const newTenant = (await svc.tenant('racer')).token;
      release();
      const reply = await pending;
      expectProblem(reply, 409);
      expect(problemOf(reply).detail).toBe(
        "tenant 'racer' was deleted while the key chain was made; the keys stay with the deleted tenant",
      );
      expect((await svc.call('GET', '/api/key-chain/raced', { token: newTenant })).status).toBe(404);
    } finally {
      vault.hold = undefined;
      release();
    }
  });

  const recreate = async () => {
    const deleted = await svc.call('DELETE', '/api/tenant/phoenix', { token: await svc.rootToken() });
    expect(deleted.status, deleted.text).toBe(204);
    return (await svc.tenant('phoenix')).token;
  };

  it('gets keys of its own in every provider, never those of the deleted tenant (which may still be trusted for what they signed)', async () => {
    const before = await keysOf((await svc.tenant('phoenix')).token);
    const after = await keysOf(await recreate());
    expect(Object.keys(after)).toEqual(Object.keys(before));
    for (const [chain, key] of Object.entries(after)) expect(key, chain).not.toEqual(before[chain]);
  });

  it('keeps the key that adopt gives to its id: the operator named the tenant id in the file', async () => {
    const token = await recreate();
    const body = { usageType: 'access', type: 'standalone', kmsProvider: 'vault', externalKeyId: 'operator-key' };
    const reply = await svc.call('POST', '/api/key-chain', { token, body: body as any });
    expect(reply.status, reply.text).toBe(201);
    expect(point(reply.body.activeJwk)).toEqual(operatorKeys.vault);
  });
});

describe('a key chain made before names had a tenant instance', () => {
  it('still signs with the key its row names (svc.<tenant>.<name>)', async () => {
    const legacy = await makeVaultKey('svc.alice.legacy');
    await createChain('alice', { id: 'legacy', usageType: 'access', type: 'standalone', kmsProvider: 'vault', externalKeyId: 'legacy' });
    // The row as the earlier naming wrote it: the key's exact reference and its public JWK.
    const record = { ref: 'svc.alice.legacy:1', jwk: { kty: 'EC', crv: 'P-256', ...legacy } };
    await svc.db
      .updateTable('key_chains')
      .set({ active_jwk: JSON.stringify(record) })
      .where('tenant_id', '=', 'alice')
      .where('id', '=', 'legacy')
      .execute();
    const signer = await svc.running.services.signing.signer('alice', { keyChainId: 'legacy', usageType: 'access' });
    const data = Buffer.from('signed by the key made before');
    const signature = await signer.sign(data);
    const publicKey = createPublicKey({ key: record.jwk, format: 'jwk' });
    expect(verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
  });
});

describe('names too long for the provider', () => {
  it("refuses (400 naming externalKeyId) a chain whose rotated keys' aliases would pass AWS KMS's 256 characters; one that fits rotates", async () => {
    // Escaped, the tenant id is 190 characters: alias/svc/<190>/<instance: 8>/ is 210, and a rotated
    // key adds -<UTC time> (20) to the name: a name of 26 fits, 27 does not (though its first key would).
    const token = (await svc.tenant(`a${'~'.repeat(63)}`)).token;
    const create = (externalKeyId: string) =>
      svc.call('POST', '/api/key-chain', { token, body: { usageType: 'access', type: 'standalone', kmsProvider: 'aws', externalKeyId } });
    const aliases = kms.aliases.size;
    const tooLong = await create('k'.repeat(27));
    expectFieldErrors(tooLong, ['body.externalKeyId']);
    expect(problemOf(tooLong).errors?.[0]?.message).toMatch(
      /takes names of at most 250 characters, and 'svc\/a(_7e){63}\/[0-9a-z]{8}\/k{27}-\d{8}t\d{9}z' has 251$/,
    );
    expect(kms.aliases.size).toBe(aliases);
    const fits = await create('k'.repeat(26));
    expect(fits.status, fits.text).toBe(201);
    const rotated = await svc.call('POST', `/api/key-chain/${fits.body.id}/rotate`, { token });
    expect(rotated.status, rotated.text).toBe(200);
  });
});

describe('KMS_PROVIDERS adopt', () => {
  it('refuses a name that is not a valid externalKeyId, or a tenant that is not a tenant id, naming the provider and the field', async () => {
    const database = await freshDatabase();
    const startWith = (adopt: unknown) => {
      const provider = { id: 'hsm', type: 'pkcs11', module: SOFTHSM_MODULE, tokenLabel: 'svc-names', pin: PIN, adopt };
      const env = { NODE_ENV: 'test', PORT: '0', LOG_LEVEL: 'silent', MASTER_SECRET: randomBytes(32).toString('base64url') };
      return startFailure({ ...env, ...database.env, KMS_PROVIDERS: hsm.kmsFile({ providers: [provider] }) });
    };
    try {
      const badName = await startWith([{ tenant: 'alice', keys: ['a.b'] }]);
      expect(badName.exitCode).toBe(78);
      expect(badName.message).toMatch(/provider 'hsm': providers\.0\.adopt\.0\.keys\.0: must be 1-100 letters, digits, _ or -/);
      const badTenant = await startWith([{ tenant: '__proto__', keys: ['operator-key'] }]);
      expect(badTenant.message).toMatch(/provider 'hsm': providers\.0\.adopt\.0\.tenant: must be 1-64 URL-safe characters/);
    } finally {
      await database.drop();
    }
  });
});
