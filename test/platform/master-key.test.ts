// MASTER_KEY_PROVIDER: the data key generated at the first start is stored only wrapped by the
// source (a key file, Vault Transit, AWS KMS, each a fake speaking its protocol where the service
// cannot run here), every start unwraps it, and what was sealed before a restart opens after it. A
// key that does not open stops the start with exit 78, a source out of reach with 69, one line each.
// Rotation re-wraps under the new key; a database sealed under MASTER_SECRET moves to a source.
import { createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { type AwsKmsFake, startAwsKmsFake } from '../support/aws-kms-fake.js';
import { engine, freshDatabase, type TestDatabase } from '../support/database.js';
import { run, runUntilExit, stop } from '../support/process.js';
import { freePort, ROOT_ID, startFailure, startService, type TestService } from '../support/service.js';
import { startVaultFake, type VaultFake } from '../support/vault-fake.js';

const ROOT_SECRET = randomBytes(24).toString('base64url');
const CHECKED = 'MASTER_SECRET opens the data of this database';
/** A test that starts the service six to ten times in a row: more than the default 30 s on a busy machine with PostgreSQL. */
const SEVERAL_STARTS = { timeout: 90_000 };

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-master-key-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A key file: 32 random bytes, in base64 or raw. */
function keyFile(name: string, form: 'base64' | 'raw' = 'base64'): { path: string; key: Buffer } {
  const key = randomBytes(32);
  const path = join(dir, name);
  writeFileSync(path, form === 'raw' ? key : `${key.toString('base64')}\n`, { mode: 0o600 });
  return { path, key };
}

/** A service on `database` with the root client and `env` (no MASTER_SECRET unless `env` has one); stopping it keeps the database. */
function startOn(database: TestDatabase, env: Record<string, string>): Promise<TestService> {
  const shared = { env: { AUTH_CLIENT_ID: ROOT_ID, AUTH_CLIENT_SECRET: ROOT_SECRET, ...database.env, ...env }, rootSecret: ROOT_SECRET };
  return startService({}, { besides: { shared } });
}

const failureOn = (database: TestDatabase, env: Record<string, string>) =>
  startFailure({
    NODE_ENV: 'test',
    PORT: '0',
    LOG_LEVEL: 'silent',
    AUTH_CLIENT_ID: ROOT_ID,
    AUTH_CLIENT_SECRET: ROOT_SECRET,
    ...database.env,
    ...env,
  });

async function storedRow(svc: TestService): Promise<{ wrappedBy: string; wrapped: string } | undefined> {
  const row = await svc.db.selectFrom('service_settings').select('value').where('name', '=', 'master-key').executeTakeFirst();
  return row && (JSON.parse(row.value) as { wrappedBy: string; wrapped: string });
}

/** Opens the master secret check value with `dataKey` by node:crypto alone (HKDF-SHA256, AES-256-GCM), as derive.ts and sealed.ts define it. */
async function checkValueOpensWith(svc: TestService, dataKey: string): Promise<boolean> {
  const row = await svc.db
    .selectFrom('service_settings')
    .select('value')
    .where('name', '=', 'master-secret-check')
    .executeTakeFirstOrThrow();
  const [, iv, body, tag] = row.value.split('.') as [string, string, string, string];
  const key = Buffer.from(hkdfSync('sha256', dataKey, 'svc', 'svc/encryption/master-secret-check', 32));
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from('master-secret-check'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8') === CHECKED;
  } catch {
    return false;
  }
}

/** The file source's wrapping, undone by node:crypto: iv (12) || ciphertext || tag (16), associated data svc/master-key. */
function unwrapFile(wrapped: string, key: Buffer): string {
  const bytes = Buffer.from(wrapped, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
  decipher.setAAD(Buffer.from('svc/master-key'));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8');
}

interface Sealed {
  /** The root client's management token from before the restart. */
  token: string;
  tenant: { clientId: string; secret: string };
}

/**
 * What was sealed before opens now: a management token signed before the restart is still valid
 * (its key is derived from the data key), and the tenant's trust list key, sealed in the database
 * with the db provider, signs a trust list.
 */
async function sealedDataOpens(svc: TestService, sealed: Sealed) {
  expect((await svc.raw('GET', '/api/tenant', { token: sealed.token })).status).toBe(200);
  expect(await svc.running.services.keyChains.sealedKeyOpens()).toBe(true);
  const signed = await svc.raw('POST', '/api/trust-list', {
    token: await svc.token(sealed.tenant.clientId, sealed.tenant.secret),
    body: { id: `l${randomBytes(4).toString('hex')}`, entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
  });
  expect(signed.status).toBe(201);
}

/** First start: a tenant (its key chains sealed with the db provider) and a token, for the next start to open. */
async function seal(svc: TestService): Promise<Sealed> {
  const { clientId, secret } = await svc.tenant(`t${randomBytes(4).toString('hex')}`);
  return { token: await svc.rootToken(), tenant: { clientId, secret } };
}

describe('MASTER_KEY_PROVIDER=file', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(() => database.drop());

  it(
    'generates a data key, stores it only wrapped, opens the data after a restart; another key stops the start (78), a rotation re-wraps',
    SEVERAL_STARTS,
    async () => {
      const first = keyFile('first.key');
      const env = { MASTER_KEY_PROVIDER: 'file', MASTER_KEY_FILE: first.path };
      const svc = await startOn(database, env);
      const token = await seal(svc);
      const row = await storedRow(svc);
      expect(row?.wrappedBy).toMatch(/^file:[0-9a-f]{16}$/);
      const dataKey = unwrapFile(row?.wrapped ?? '', first.key);
      expect(dataKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(row?.wrapped).not.toContain(dataKey);
      expect(await checkValueOpensWith(svc, dataKey)).toBe(true);
      await svc.stop();

      // The same key, now raw bytes in another file: the key is what counts, not the path.
      const moved = join(dir, 'moved.key');
      writeFileSync(moved, first.key);
      const again = await startOn(database, { ...env, MASTER_KEY_FILE: moved });
      await sealedDataOpens(again, token);
      await again.stop();

      const other = keyFile('other.key');
      const wrong = await failureOn(database, { ...env, MASTER_KEY_FILE: other.path });
      expect(wrong.exitCode).toBe(78);
      expect(wrong.message).toMatch(
        /^MASTER_KEY_PROVIDER=file: the data key in the database is wrapped by file:[0-9a-f]{16}, not by file:[0-9a-f]{16}: /,
      );
      expect(wrong.message).not.toContain('\n');

      const short = join(dir, 'short.key');
      writeFileSync(short, 'c2hvcnQ=\n');
      const unreadable = await failureOn(database, { ...env, MASTER_KEY_FILE: short });
      expect(unreadable.exitCode).toBe(78);
      expect(unreadable.message).toBe(
        `MASTER_KEY_PROVIDER=file: MASTER_KEY_FILE ${short}: must hold a 32-byte key, raw or in base64 (such as openssl rand -base64 32 writes)`,
      );
      const missing = await failureOn(database, { ...env, MASTER_KEY_FILE: join(dir, 'absent.key') });
      expect(missing.exitCode).toBe(78);
      expect(missing.message).toMatch(/MASTER_KEY_FILE .*absent\.key: cannot be read \(ENOENT\)$/);

      // Rotation: the new key with the previous one; the start re-wraps, the data key stays.
      const rotated = await startOn(database, { ...env, MASTER_KEY_FILE: other.path, MASTER_KEY_PREVIOUS_FILE: first.path });
      await sealedDataOpens(rotated, token);
      const rewrapped = await storedRow(rotated);
      expect(rewrapped?.wrappedBy).not.toBe(row?.wrappedBy);
      expect(unwrapFile(rewrapped?.wrapped ?? '', other.key)).toBe(dataKey);
      await rotated.stop();
      const after = await startOn(database, { ...env, MASTER_KEY_FILE: other.path });
      await sealedDataOpens(after, token);
      await after.stop();
      expect((await failureOn(database, env)).exitCode).toBe(78);
    },
  );
});

describe('MASTER_KEY_PROVIDER=vault-transit', () => {
  let database: TestDatabase;
  let vault: VaultFake;
  beforeAll(async () => {
    database = await freshDatabase();
    vault = await startVaultFake();
  });
  afterAll(async () => {
    await vault.stop();
    await database.drop();
  });
  const env = () => ({
    MASTER_KEY_PROVIDER: 'vault-transit',
    MASTER_KEY_ID: 'svc-master',
    MASTER_KEY_VAULT_URL: vault.url,
    MASTER_KEY_VAULT_TOKEN: vault.token,
  });

  it(
    'wraps the data key with Transit encrypt, opens it with decrypt after a restart, and re-wraps under a new key',
    SEVERAL_STARTS,
    async () => {
      const svc = await startOn(database, env());
      const token = await seal(svc);
      const row = await storedRow(svc);
      expect(row).toEqual({ wrappedBy: 'vault-transit:svc-master', wrapped: expect.stringMatching(/^vault:v1:/) });
      expect(vault.requests).toContain('POST /v1/transit/encrypt/svc-master');
      await svc.stop();

      const again = await startOn(database, env());
      await sealedDataOpens(again, token);
      expect(vault.requests).toContain('POST /v1/transit/decrypt/svc-master');
      await again.stop();

      // Rotation inside Vault needs nothing: the value names its version, which Vault still holds.
      const key = vault.keys.get('svc-master');
      key?.versions.push({ secret: randomBytes(32) });
      const rotatedInVault = await startOn(database, env());
      await sealedDataOpens(rotatedInVault, token);
      await rotatedInVault.stop();

      // Another transit key: the start unwraps under the previous one and re-wraps under the new one.
      // On PostgreSQL an instance started before keeps running on the old settings throughout: the
      // data key it holds is the one re-wrapped (SQLite's file belongs to one process).
      const running = engine === 'postgres' ? await startOn(database, env()) : undefined;
      vault.requests.length = 0;
      const moved = await startOn(database, { ...env(), MASTER_KEY_ID: 'svc-master-2', MASTER_KEY_PREVIOUS_ID: 'svc-master' });
      await sealedDataOpens(moved, token);
      expect(vault.requests).toEqual(['POST /v1/transit/decrypt/svc-master', 'POST /v1/transit/encrypt/svc-master-2']);
      expect((await storedRow(moved))?.wrappedBy).toBe('vault-transit:svc-master-2');
      if (running) {
        await sealedDataOpens(running, { ...token, token: await moved.rootToken() });
        await running.stop();
      }
      await moved.stop();
      const after = await startOn(database, { ...env(), MASTER_KEY_ID: 'svc-master-2' });
      await sealedDataOpens(after, token);
      await after.stop();
    },
  );

  it('stops with 78 when the token is refused or the key does not open the value, 69 when Vault is sealed or unreachable', async () => {
    const wrongToken = await failureOn(database, { ...env(), MASTER_KEY_ID: 'svc-master-2', MASTER_KEY_VAULT_TOKEN: 'hvs.wrong' });
    expect(wrongToken.exitCode).toBe(78);
    expect(wrongToken.message).toBe(
      `MASTER_KEY_PROVIDER=vault-transit: Vault at ${vault.url}, transit key 'svc-master-2' (transit): the token is refused (403): permission denied`,
    );

    const replaced = vault.keys.get('svc-master-2');
    vault.keys.set('svc-master-2', { type: 'aes256-gcm96', versions: [{ secret: randomBytes(32) }, { secret: randomBytes(32) }] });
    const wrongKey = await failureOn(database, { ...env(), MASTER_KEY_ID: 'svc-master-2' });
    expect(wrongKey.exitCode).toBe(78);
    expect(wrongKey.message).toMatch(
      /transit key 'svc-master-2' \(transit\): decrypt refused \(400\): cipher: message authentication failed$/,
    );
    if (replaced) vault.keys.set('svc-master-2', replaced);

    vault.failWith = 503;
    const sealed = await failureOn(database, { ...env(), MASTER_KEY_ID: 'svc-master-2' });
    vault.failWith = undefined;
    expect(sealed.exitCode).toBe(69);
    expect(sealed.message).toMatch(/answered 503: Vault is sealed$/);

    const closed = `http://127.0.0.1:${await freePort()}`;
    const unreachable = await failureOn(database, { ...env(), MASTER_KEY_ID: 'svc-master-2', MASTER_KEY_VAULT_URL: closed });
    expect(unreachable.exitCode).toBe(69);
    expect(unreachable.message).toMatch(
      new RegExp(`^MASTER_KEY_PROVIDER=vault-transit: Vault at ${closed}, transit key 'svc-master-2' \\(transit\\): unreachable: [^\\n]+$`),
    );
  });
});

describe('MASTER_KEY_PROVIDER=aws-kms', () => {
  let database: TestDatabase;
  let kms: AwsKmsFake;
  let keyId: string;
  let nextKeyId: string;
  beforeAll(async () => {
    database = await freshDatabase();
    kms = await startAwsKmsFake();
    const client = new KMSClient({ region: kms.region, endpoint: kms.url, credentials: kms.credentials });
    keyId = (await client.send(new CreateKeyCommand({ KeySpec: 'SYMMETRIC_DEFAULT', KeyUsage: 'ENCRYPT_DECRYPT' }))).KeyMetadata?.Arn ?? '';
    nextKeyId = (await client.send(new CreateKeyCommand({}))).KeyMetadata?.Arn ?? '';
    client.destroy();
  });
  afterAll(async () => {
    await kms.stop();
    await database.drop();
  });
  const env = () => ({
    MASTER_KEY_PROVIDER: 'aws-kms',
    MASTER_KEY_ID: keyId,
    MASTER_KEY_AWS_REGION: kms.region,
    MASTER_KEY_AWS_ENDPOINT: kms.url,
    AWS_ACCESS_KEY_ID: kms.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: kms.credentials.secretAccessKey,
  });

  it(
    'wraps with Encrypt, opens with Decrypt after a restart, stops with 78 or 69, and re-wraps under a new key',
    SEVERAL_STARTS,
    async () => {
      const svc = await startOn(database, env());
      const token = await seal(svc);
      expect((await storedRow(svc))?.wrappedBy).toBe(`aws-kms:${keyId}`);
      expect(kms.targets).toContain('TrentService.Encrypt');
      await svc.stop();
      const again = await startOn(database, env());
      await sealedDataOpens(again, token);
      expect(kms.targets).toContain('TrentService.Decrypt');
      await again.stop();

      const refused = await failureOn(database, { ...env(), AWS_ACCESS_KEY_ID: 'AKIAWRONG0000000000' });
      expect(refused.exitCode).toBe(78);
      expect(refused.message).toMatch(
        /^MASTER_KEY_PROVIDER=aws-kms: AWS KMS \(http:[^)]+\), key \S+: Decrypt refused \(UnrecognizedClientException\)/,
      );
      expect(refused.message).not.toContain('\n');

      const key = kms.keys.get(keyId.split('/').at(-1) ?? '');
      const secret = key?.secret;
      if (key) key.secret = randomBytes(32);
      const wrongKey = await failureOn(database, env());
      if (key) key.secret = secret;
      expect(wrongKey.exitCode).toBe(78);
      expect(wrongKey.message).toMatch(/Decrypt refused \(InvalidCiphertextException\)/);

      kms.failWith = 'KMSInternalException';
      const failing = await failureOn(database, env());
      kms.failWith = undefined;
      expect(failing.exitCode).toBe(69);
      const unreachable = await failureOn(database, { ...env(), MASTER_KEY_AWS_ENDPOINT: `http://127.0.0.1:${await freePort()}` });
      expect(unreachable.exitCode).toBe(69);
      expect(unreachable.message).toMatch(/^MASTER_KEY_PROVIDER=aws-kms: AWS KMS \(http:[^)]+\), key \S+: unreachable: [^\n]+$/);

      const rotated = await startOn(database, { ...env(), MASTER_KEY_ID: nextKeyId, MASTER_KEY_PREVIOUS_ID: keyId });
      await sealedDataOpens(rotated, token);
      expect((await storedRow(rotated))?.wrappedBy).toBe(`aws-kms:${nextKeyId}`);
      await rotated.stop();
      const after = await startOn(database, { ...env(), MASTER_KEY_ID: nextKeyId });
      await sealedDataOpens(after, token);
      await after.stop();
      const old = await failureOn(database, env());
      expect(old.exitCode).toBe(78);
      expect(old.message).toContain(`the data key in the database is wrapped by aws-kms:${nextKeyId}, not by aws-kms:${keyId}`);
    },
  );
});

describe('moving a database from MASTER_SECRET to a source', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(() => database.drop());

  it(
    'wraps the existing MASTER_SECRET when both are set once; without it, or with another secret, the start stops (78) and stores nothing',
    SEVERAL_STARTS,
    async () => {
      const masterSecret = randomBytes(32).toString('base64url');
      const svc = await startOn(database, { MASTER_SECRET: masterSecret });
      const token = await seal(svc);
      await svc.stop();

      const { path, key } = keyFile('migration.key');
      const provider = { MASTER_KEY_PROVIDER: 'file', MASTER_KEY_FILE: path };
      const alone = await failureOn(database, provider);
      expect(alone.exitCode).toBe(78);
      expect(alone.message).toMatch(
        /^MASTER_KEY_PROVIDER=file: this database is sealed under a MASTER_SECRET and holds no wrapped data key yet; start once with that MASTER_SECRET set as well/,
      );
      const wrong = await failureOn(database, { ...provider, MASTER_SECRET: randomBytes(32).toString('base64url') });
      expect(wrong.exitCode).toBe(78);
      expect(wrong.message).toMatch(/^MASTER_SECRET: not the secret this database was created with/);

      const moving = await startOn(database, { ...provider, MASTER_SECRET: masterSecret });
      await sealedDataOpens(moving, token);
      expect(unwrapFile((await storedRow(moving))?.wrapped ?? '', key)).toBe(masterSecret);
      await moving.stop();

      const moved = await startOn(database, provider);
      await sealedDataOpens(moved, token);
      await moved.stop();
      const stale = await failureOn(database, { ...provider, MASTER_SECRET: randomBytes(32).toString('base64url') });
      expect(stale.exitCode).toBe(78);
      expect(stale.message).toMatch(/^MASTER_SECRET: set, but the data key that file:[0-9a-f]{16} unwraps is another secret/);
    },
  );
});

describe('npm start (the compiled service) with MASTER_KEY_PROVIDER', () => {
  let database: TestDatabase;
  let vault: VaultFake;
  beforeAll(async () => {
    database = await freshDatabase();
    vault = await startVaultFake();
  });
  afterAll(async () => {
    await vault.stop();
    await database.drop();
  });

  it(
    'starts in production without MASTER_SECRET, and exits with one line: 78 for another key, 69 for Vault out of reach',
    SEVERAL_STARTS,
    async () => {
      const env = {
        ...database.env,
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: '0',
        AUTH_CLIENT_ID: ROOT_ID,
        AUTH_CLIENT_SECRET: ROOT_SECRET,
        MASTER_KEY_PROVIDER: 'vault-transit',
        MASTER_KEY_ID: 'svc-master',
        MASTER_KEY_VAULT_URL: vault.url,
        MASTER_KEY_VAULT_TOKEN: vault.token,
      };
      const started = await run(env);
      expect(await stop(started)).toBe(0);
      expect(vault.requests).toContain('POST /v1/transit/encrypt/svc-master');

      const wrong = await runUntilExit({ ...env, MASTER_KEY_ID: 'another-key' });
      expect(wrong.code).toBe(78);
      expect(wrong.output.trim()).toMatch(
        /^svc: MASTER_KEY_PROVIDER=vault-transit: the data key in the database is wrapped by vault-transit:svc-master, not by vault-transit:another-key: set MASTER_KEY_ID to that key, or to the new key with MASTER_KEY_PREVIOUS_ID set to that one to re-wrap$/,
      );
      const closed = `http://127.0.0.1:${await freePort()}`;
      const unreachable = await runUntilExit({ ...env, MASTER_KEY_VAULT_URL: closed });
      expect(unreachable.code).toBe(69);
      expect(unreachable.output.trim()).toMatch(
        new RegExp(
          `^svc: MASTER_KEY_PROVIDER=vault-transit: Vault at ${closed}, transit key 'svc-master' \\(transit\\): unreachable: [^\\n]+$`,
        ),
      );
    },
  );
});

describe('configuration', () => {
  const production = { NODE_ENV: 'production', AUTH_CLIENT_ID: ROOT_ID, AUTH_CLIENT_SECRET: ROOT_SECRET };
  const problemsOf = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return [];
    } catch (err) {
      return (err as ConfigError).problems;
    }
  };

  it('needs no MASTER_SECRET in production with a source, and the settings of the source chosen', () => {
    expect(problemsOf({ ...production, MASTER_KEY_PROVIDER: 'file', MASTER_KEY_FILE: '/run/secrets/master.key' })).toEqual([]);
    expect(problemsOf(production)).toContain('MASTER_SECRET: required in production');
    expect(problemsOf({ ...production, MASTER_KEY_PROVIDER: 'vault-transit', MASTER_KEY_ID: 'svc' })).toEqual([
      'MASTER_KEY_VAULT_URL: required when MASTER_KEY_PROVIDER is vault-transit',
      'MASTER_KEY_VAULT_TOKEN: required when MASTER_KEY_PROVIDER is vault-transit',
    ]);
    expect(problemsOf({ MASTER_KEY_PROVIDER: 'aws-kms', MASTER_KEY_AWS_REGION: 'eu-central-1' })).toEqual([
      'MASTER_KEY_ID: required when MASTER_KEY_PROVIDER is aws-kms',
    ]);
    expect(problemsOf({ MASTER_KEY_FILE: '/run/secrets/master.key' })).toEqual([
      'MASTER_KEY_FILE: set, but MASTER_KEY_PROVIDER is env, which does not read it',
    ]);
    expect(() => loadConfig({ MASTER_KEY_PROVIDER: 'hsm' })).toThrow(ConfigError);
  });
});
