// Starting with a PKCS#11 provider that cannot be used: one line naming the provider, and the exit
// code of its kind. In a file of its own: a module is initialised once per process, and a token that
// another service of the process is logged in to would take any PIN.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start } from '../../src/start-up/server.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { run, runUntilExit, stop } from '../support/process.js';
import { startFailure } from '../support/service.js';
import { SOFTHSM_MODULE, type SoftHsm, softHsm } from '../support/softhsm.js';

const PIN = '271828';
/** One for the file: the database keeps what the first start sealed with it. */
const MASTER_SECRET = randomBytes(32).toString('base64url');
let hsm: SoftHsm;
let database: TestDatabase;
beforeAll(async () => {
  hsm = softHsm('svc-test', PIN);
  database = await freshDatabase();
});
afterAll(async () => {
  await database?.drop();
  hsm?.remove();
});

const providers = (pin: unknown, tokenLabel = 'svc-test') => ({
  defaultProvider: 'db',
  providers: [{ id: 'hsm', type: 'pkcs11', module: SOFTHSM_MODULE, tokenLabel, pin }],
});

describe('start-up', () => {
  const startWith = async (env: Record<string, string>) => {
    const failure = await startFailure({ NODE_ENV: 'test', PORT: '0', LOG_LEVEL: 'silent', MASTER_SECRET, ...database.env, ...env });
    return failure;
  };

  it('stops with one line naming the provider when the PIN is wrong (exit 78)', async () => {
    const failure = await startWith({ KMS_PROVIDERS: hsm.kmsFile(providers('000000')) });
    expect(failure.exitCode).toBe(78);
    expect(failure.message).toMatch(/provider 'hsm' \(pkcs11\): the PIN of token 'svc-test' is wrong/);
    expect(failure.message).not.toContain('\n');
    expect(failure.message).not.toContain('000000');
  });

  it('stops naming the provider when its token is not there (exit 69)', async () => {
    const failure = await startWith({ KMS_PROVIDERS: hsm.kmsFile(providers(PIN, 'no-such-token')) });
    expect(failure.exitCode).toBe(69);
    expect(failure.message).toMatch(/provider 'hsm' \(pkcs11\): no token labelled 'no-such-token' is present/);
  });

  it('stops naming the file, the provider and the field when the file is wrong (exit 78)', async () => {
    const path = hsm.kmsFile({ providers: [{ id: 'hsm', type: 'pkcs11', module: SOFTHSM_MODULE, tokenLabel: 'svc-test' }] });
    const failure = await startWith({ KMS_PROVIDERS: path });
    expect(failure.exitCode).toBe(78);
    expect(failure.message).toMatch(new RegExp(`^KMS_PROVIDERS ${path}: provider 'hsm': providers\\.0\\.pin: [^\\n]+$`));
    expect((await startWith({ KMS_PROVIDERS: hsm.kmsFile('{ not json') })).exitCode).toBe(78);
    const unsetPin = await startWith({ KMS_PROVIDERS: hsm.kmsFile(providers({ env: 'NO_SUCH_PIN_VARIABLE' })) });
    expect(unsetPin.message).toMatch(/provider 'hsm' \(pkcs11\): pin: environment variable NO_SUCH_PIN_VARIABLE is not set/);
  });

  it('starts with the right PIN', async () => {
    const running = await start(
      {
        NODE_ENV: 'test',
        PORT: '0',
        LOG_LEVEL: 'silent',
        MASTER_SECRET,
        ...database.env,
        KMS_PROVIDERS: hsm.kmsFile(providers(PIN)),
      },
      () => {},
    );
    await running.close();
  });
});

describe('npm start (the compiled service) with a PKCS#11 provider', () => {
  const env = (kmsFile: string) => ({
    ...database.env,
    PORT: '0',
    MASTER_SECRET,
    SOFTHSM2_CONF: hsm.conf,
    HSM_PIN: PIN,
    KMS_PROVIDERS: kmsFile,
  });

  it('exits 78 with one line naming the provider when the PIN is wrong', async () => {
    const path = hsm.kmsFile(providers('999999'));
    const failure = await runUntilExit(env(path));
    expect(failure.code).toBe(78);
    expect(failure.output.trim()).toBe(
      `svc: KMS_PROVIDERS ${path}: provider 'hsm' (pkcs11): the PIN of token 'svc-test' is wrong (C_Login returned CKR_PIN_INCORRECT)`,
    );
  });

  it('loads the module from the bundle and answers ready with the token able to sign', async () => {
    const started = await run(env(hsm.kmsFile(providers({ env: 'HSM_PIN' }))));
    try {
      const ready = await fetch(`http://127.0.0.1:${started.port}/health/ready`);
      expect(await ready.json()).toEqual({ status: 'ok', checks: { database: 'ok', 'keyProvider:hsm': 'ok' } });
    } finally {
      expect(await stop(started)).toBe(0);
    }
  });
});
