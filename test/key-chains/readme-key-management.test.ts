// The key management section of docs/configuration.md runs as pasted: its SoftHSM2 shell snippet is run by bash, in
// the project folder with a temporary HOME, as it stands (token, file and `npm start`); the service it
// starts makes a tenant's keys in the token. The snippet writes nothing into the project. The file with
// every kind of provider is one KMS_PROVIDERS accepts.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readKmsFile } from '../../src/key-chains/providers/kms-file.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { request } from '../support/http.js';
import { root, run, type Started, stop } from '../support/process.js';
import { ALL_TENANT_ROLES } from '../support/service.js';

const page = readFileSync(join(root, 'docs/configuration.md'), 'utf8');
const section = page.slice(page.indexOf('### Key management'));
const blocks = (language: string) =>
  [...section.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1] as string);

const home = mkdtempSync(join(tmpdir(), 'svc-readme-home-'));
const projectFiles = () => execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: root, encoding: 'utf8' });
let database: TestDatabase;
let started: Started | undefined;

beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(async () => {
  if (started) await stop(started);
  await database?.drop();
  rmSync(home, { recursive: true, force: true });
});

describe('docs/configuration.md: key management section', () => {
  it('has one shell snippet and one JSON file', () => {
    expect(blocks('sh')).toHaveLength(1);
    expect(blocks('json')).toHaveLength(1);
  });

  it('SoftHSM2 snippet: runs as pasted, writes nothing into the project, and the service makes the keys in the token', async () => {
    const [snippet] = blocks('sh') as [string];
    const before = projectFiles();
    const secret = randomBytes(24).toString('base64url');
    started = await run(
      {
        HOME: home,
        ...database.env,
        MASTER_SECRET: randomBytes(32).toString('base64url'),
        AUTH_CLIENT_ID: 'root',
        AUTH_CLIENT_SECRET: secret,
        PORT: '0',
        HOST: '127.0.0.1',
      },
      { command: ['bash', '-eo', 'pipefail', '-c', snippet] },
    );
    const url = `http://127.0.0.1:${started.port}`;
    const token = async (clientId: string, clientSecret: string) =>
      (
        await request(url, 'POST', '/api/oauth2/token', {
          body: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
        })
      ).body.access_token as string;
    const ready = await request(url, 'GET', '/health/ready');
    expect(ready.body).toEqual({ status: 'ok', checks: { database: 'ok', 'keyProvider:hsm': 'ok' } });

    const tenant = await request(url, 'POST', '/api/tenant', {
      token: await token('root', secret),
      body: { id: 'acme', name: 'Acme', roles: ALL_TENANT_ROLES },
    });
    expect(tenant.status, tenant.text).toBe(201);
    const acme = await token(tenant.body.client.clientId, tenant.body.client.secret);
    const chain = await request(url, 'GET', '/api/key-chain/default-attestation', { token: acme });
    expect(chain.body).toMatchObject({ kmsProvider: 'hsm', externalKeyId: 'default-attestation', type: 'internalChain' });

    const labels = execFileSync('softhsm2-util', ['--show-slots'], {
      env: { ...process.env, SOFTHSM2_CONF: join(home, '.svc-softhsm', 'softhsm2.conf') },
      encoding: 'utf8',
    });
    expect(labels).toMatch(/Label:\s+svc\s/);
    expect(projectFiles()).toBe(before);
  });

  it('file with every kind of provider: KMS_PROVIDERS takes it', () => {
    const [json] = blocks('json') as [string];
    const path = join(home, 'all-providers.json');
    writeFileSync(path, json);
    const file = readKmsFile(path);
    expect(file.providers.map((provider) => provider.type)).toEqual(['pkcs11', 'vault', 'aws-kms', 'azure-keyvault', 'gcp-kms']);
    expect(file.providers[1]?.adopt.get('acme')).toEqual(new Set(['acme-issuer-2024']));
  });
});
