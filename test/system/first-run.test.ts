// A first start with no configuration but a data directory, as a new user runs it.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run, runUntilExit, stop } from '../support/process.js';

const dataDir = mkdtempSync(join(tmpdir(), 'svc-first-run-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const firstRunEnv = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' };

describe('zero-configuration first start', () => {
  it('generates the master secret and bootstrap client once, prints how to use them, and they work', async () => {
    const started = await run(firstRunEnv, { until: 'The API explorer is at' });
    const output = started.output();
    const clientFile = join(dataDir, 'bootstrap-client.json');
    expect(statSync(join(dataDir, 'master-secret')).mode & 0o777).toBe(0o600);
    expect(statSync(clientFile).mode & 0o777).toBe(0o600);
    const client = JSON.parse(readFileSync(clientFile, 'utf8')) as { id: string; secret: string };
    expect(output).toContain(`client_id:     ${client.id}`);
    expect(output).toContain(`client_secret: ${client.secret}`);
    expect(output).toContain(`curl -s -u '${client.id}:${client.secret}' -d grant_type=client_credentials`);
    expect(output).toContain(`The web console is at http://localhost:${started.port}/console`);
    expect(output).toContain(`export SVC=http://localhost:${started.port}`);
    expect(statSync(join(dataDir, 'svc.db')).isFile()).toBe(true);

    const base = `http://127.0.0.1:${started.port}`;
    const basic = `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`;
    const token = await fetch(`${base}/api/oauth2/token`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    expect(token.status).toBe(200);
    const { access_token } = (await token.json()) as { access_token: string };
    const tenants = await fetch(`${base}/api/tenant`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(tenants.status).toBe(200);
    expect(await stop(started)).toBe(0);

    // A second start reuses what the first generated and, the client having obtained a token, announces nothing.
    const again = await run(firstRunEnv);
    const retry = await fetch(`http://127.0.0.1:${again.port}/api/oauth2/token`, { method: 'POST', headers: { authorization: basic } });
    expect(retry.status).toBe(200);
    expect(again.output()).not.toContain('client_secret');
    expect(await stop(again)).toBe(0);
  });

  it('repeats the announcement at every start until the bootstrap client has obtained a token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-first-run-'));
    try {
      const env = { ...firstRunEnv, DATA_DIR: dir };
      const first = await run(env, { until: 'The API explorer is at' });
      expect(await stop(first)).toBe(0);
      const client = JSON.parse(readFileSync(join(dir, 'bootstrap-client.json'), 'utf8')) as { id: string; secret: string };

      // No token was obtained: the second start says it all again, the secret on the terminal only.
      const second = await run(env, { until: '"firstRun"' });
      const output = second.output();
      expect(output).toContain(`client_secret: ${client.secret}`);
      expect(output).not.toContain('MASTER_SECRET   ->');
      const record = output.split('\n').find((line) => line.includes('"firstRun"')) ?? '';
      expect(JSON.parse(record).firstRun).toEqual({
        dataDir: dir,
        clientId: client.id,
        tokenUrl: `http://localhost:${second.port}/api/oauth2/token`,
        consoleUrl: `http://localhost:${second.port}/console`,
        explorerUrl: `http://localhost:${second.port}/api`,
      });
      expect(record).not.toContain(client.secret);
      const basic = `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`;
      const token = await fetch(`http://127.0.0.1:${second.port}/api/oauth2/token`, { method: 'POST', headers: { authorization: basic } });
      expect(token.status).toBe(200);
      expect(await stop(second)).toBe(0);

      const third = await run(env);
      expect((await fetch(`http://127.0.0.1:${third.port}/health`)).status).toBe(200);
      expect(third.output()).not.toContain('client_secret');
      expect(third.output()).not.toContain('"firstRun"');
      expect(await stop(third)).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stops with a message naming the key when the configuration is invalid', async () => {
    const failure = await runUntilExit({ ...firstRunEnv, STATUS_BITS: '3' });
    expect(failure.code).toBe(78);
    expect(failure.output).toContain('STATUS_BITS');
  });

  it('stops in production when secrets are missing, instead of generating them', async () => {
    const failure = await runUntilExit({ ...firstRunEnv, NODE_ENV: 'production' });
    expect(failure.code).toBe(78);
    expect(failure.output).toContain('MASTER_SECRET: required in production');
  });

  it('stops in one line when the identity provider of external mode cannot be reached', async () => {
    const failure = await runUntilExit({
      ...firstRunEnv,
      OIDC: 'http://127.0.0.1:9/realms/svc',
      OIDC_CLIENT_ID: 'a',
      OIDC_CLIENT_SECRET: 'b',
    });
    expect(failure.code).toBe(69);
    expect(failure.output).toContain(
      "OIDC: the provider's discovery document http://127.0.0.1:9/realms/svc/.well-known/openid-configuration could not be read",
    );
    expect(failure.output).not.toContain('    at ');
  });
});
