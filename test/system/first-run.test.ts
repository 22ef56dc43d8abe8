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

    // A second start reuses what the first generated and announces nothing.
    const again = await run(firstRunEnv);
    expect(again.output()).not.toContain('client_secret');
    const retry = await fetch(`http://127.0.0.1:${again.port}/api/oauth2/token`, { method: 'POST', headers: { authorization: basic } });
    expect(retry.status).toBe(200);
    expect(await stop(again)).toBe(0);
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

  it('stops when external mode is asked for, saying it is not available yet', async () => {
    const failure = await runUntilExit({ ...firstRunEnv, OIDC: 'https://idp.example.com' });
    expect(failure.code).toBe(78);
    expect(failure.output).toContain('OIDC: external identity providers are not supported yet');
  });
});
