// The README's walkthrough, run as a new user pastes it: its shell blocks, in order, in one bash, against
// the service as `npm start` runs it on a first start (bootstrap client generated into DATA_DIR), with
// the demo wallet as the holder. And the token example of "Using the management API" (docs/api/management.md).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWallet } from '../../wallet/cli.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { PID } from '../support/fixtures.js';
import { root, run, type Started, stop } from '../support/process.js';
import { startService } from '../support/service.js';

const readme = readFileSync(join(root, 'README.md'), 'utf8');
const managementGuide = readFileSync(join(root, 'docs/api/management.md'), 'utf8');
const shellBlocks = (text: string) => [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] as string);

function between(start: string, end: string, text = readme): string {
  const from = text.indexOf(start);
  const to = text.indexOf(end, from);
  if (from < 0 || to < 0) throw new Error(`no section between ${start} and ${end}`);
  return text.slice(from + start.length, to);
}

/** Runs `script` with bash, stopping at the first failing command, as a careful user would notice it. */
function bash(script: string, options: { cwd: string; env: Record<string, string> }): Promise<{ code: number | null; output: string }> {
  const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output })));
}

let database: TestDatabase;
let workDir: string;
let dataDir: string;
let service: Started;
let svc: string;
let walletDir: string;

/**
 * What a new user's wallet holds who ran the walkthrough before and started the service over: a
 * credential like the one the walkthrough issues, from a deployment this service does not trust.
 */
async function credentialOfAnotherDeployment(into: string) {
  const other = await startService();
  try {
    const admin = (await other.tenant('acme')).token;
    expect((await other.call('POST', '/api/issuer/credentials', { token: admin, body: PID })).status).toBe(201);
    const offer = await other.call('POST', '/api/issuer/offer', {
      token: admin,
      body: {
        response_type: 'uri',
        flow: 'pre_authorized_code',
        credentialConfigurationIds: ['pid'],
        credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true } } },
      },
    });
    const io = { print: () => {}, ask: async () => '' };
    expect(await runWallet([(offer.body as { uri: string }).uri, '--dir', into], io, {})).toBe(0);
  } finally {
    await other.stop();
  }
}

beforeAll(async () => {
  database = await freshDatabase();
  // A folder laid out like the project's: the first start writes ./data/bootstrap-client.json.
  workDir = mkdtempSync(join(tmpdir(), 'svc-walkthrough-'));
  dataDir = join(workDir, 'data');
  mkdirSync(dataDir);
  service = await run({ ...database.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' }, { until: 'The API explorer is at' });
  walletDir = join(workDir, 'wallet');
  await credentialOfAnotherDeployment(walletDir);
  svc = `http://localhost:${service.port}`;
});
afterAll(async () => {
  if (service) await stop(service);
  await database.drop();
  rmSync(workDir, { recursive: true, force: true });
});

describe('README', () => {
  it('walkthrough: every block succeeds, from the bootstrap token to the revoked credential refused', async () => {
    const blocks = shellBlocks(between('<!-- walkthrough:start -->', '<!-- walkthrough:end -->'));
    expect(blocks.length).toBeGreaterThanOrEqual(8);
    const script = blocks.map((block, i) => `${block}echo "::step ${i + 1} done"\n`).join('');
    const { code, output } = await bash(script, { cwd: root, env: { SVC: svc, DATA_DIR: dataDir, WALLET_DIR: walletDir } });
    expect(code, output).toBe(0);
    const steps = [...output.matchAll(/^::step (\d+) done$/gm)].map((match) => Number(match[1]));
    expect(steps).toEqual(blocks.map((_, i) => i + 1));

    // The wallet redeemed the offer with the transaction code, and its presentation completed the session.
    expect(output).toContain('Requesting an access token with the transaction code, bound to a DPoP key');
    expect(output).toContain('Received 1 credential(s)');
    expect(output).toMatch(/The verifier accepted the presentation\.\n::step \d+ done\ncompleted\n/);
    expect(output).toContain('event: status\nid: completed\n');
    // Beside the other deployment's credential, stored first, which the wallet did not present.
    expect(output).toContain('(1 other stored credential(s) satisfy it too');
    expect(readdirSync(join(walletDir, 'credentials'))).toHaveLength(2);
    expect(existsSync(join(walletDir, 'holder-key.json'))).toBe(true);
    // The last block: after the revocation the verifier refuses the credential, and the session says why.
    const last = output.slice(output.lastIndexOf(`::step ${blocks.length - 1} done`));
    expect(last).toContain('"updatedEntries":1');
    expect(last).toContain('"error_description": "status: revoked"');
    expect(last).toMatch(/\nstatus: revoked\n::step \d+ done\n$/);
  }, 180_000);

  it('walkthrough: json says in one line what the answer holds when the field is not there, never with a stack trace', async () => {
    const [first] = shellBlocks(between('<!-- walkthrough:start -->', '<!-- walkthrough:end -->'));
    const helper = /^json\(\) \{[\s\S]*?\$1"?; \}$/m.exec(first as string)?.[0];
    expect(helper).toBeDefined();
    const failed = JSON.stringify({ status: 'failed', errorReason: 'untrusted issuer' });
    const { code, output } = await bash(`${helper}\necho '${failed}' | json '.credentials[0].claims'`, { cwd: workDir, env: {} });
    expect(code).toBe(1);
    expect(output).toBe(`json: no .credentials[0].claims in ${failed}\n`);
  });

  it('Using the management API: the token example reads the bootstrap client and creates a tenant', async () => {
    const [example] = shellBlocks(between('# Using the management API', '\n- **', managementGuide));
    expect(example).toContain('./data/bootstrap-client.json');
    const { code, output } = await bash((example as string).replaceAll('http://localhost:3000', svc), { cwd: workDir, env: {} });
    expect(code, output).toBe(0);
    const created = JSON.parse(output);
    expect(created).toMatchObject({ id: 'example', client: { clientId: expect.any(String), secret: expect.any(String) } });
  });
});
