// Start-up and shutdown as an operator meets them: the compiled service started by `npm start`, the
// addresses it settles on, and one clear line with a distinct exit code for each way it can fail.
import { spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runtimeSettings } from '../../scripts/build.mjs';
import { freshDatabase } from '../support/database.js';
import { request } from '../support/http.js';
import { root, run, runUntilExit, stop } from '../support/process.js';
import { ALL_TENANT_ROLES, ROOT_ID } from '../support/service.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const dataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-start-up-'));
  dirs.push(dir);
  return dir;
};

function occupy(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

async function freePort(): Promise<number> {
  const { server, port } = await occupy();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const STACK_TRACE = /^\s+at /m;

describe('npm start', () => {
  it('runs the compiled service, and SIGTERM sent to npm stops the server', async () => {
    const dir = dataDir();
    const started = await run({ DATA_DIR: dir, PORT: '0', HOME: process.env.HOME ?? dir }, { command: ['npm', 'start', '--silent'] });
    const base = `http://127.0.0.1:${started.port}`;
    expect((await fetch(`${base}/health`)).status).toBe(200);
    expect(started.output()).not.toContain('tsx');

    expect(await stop(started)).toBe(0);
    await expect(fetch(`${base}/health`)).rejects.toThrow();
  });
});

describe("Node's compile cache (scripts/dist-main.mjs)", () => {
  const { env: runtimeEnv, nodeFlags } = runtimeSettings();
  // Node says, for each module, whether V8 took its cached code.
  const ACCEPTED = /V8 code cache for ESM file:\S*\/service\.js was accepted/;
  const startOnce = async (env: Record<string, string>, options: { uid?: number; gid?: number } = {}) => {
    const started = await run(
      { ...runtimeEnv, PORT: '0', NODE_DEBUG_NATIVE: 'COMPILE_CACHE', ...env },
      { command: [process.execPath, ...nodeFlags, 'dist/main.js'], ...options },
    );
    expect((await fetch(`http://127.0.0.1:${started.port}/health`)).status).toBe(200);
    expect(await stop(started)).toBe(0);
    return started.output();
  };

  it("is in dist/ after the build: a start takes the bundle's compiled code from it", async () => {
    const output = await startOnce({ DATA_DIR: dataDir() });
    expect(output).toMatch(ACCEPTED);
    expect(output).toContain(join(root, 'dist', 'compile-cache'));
  });

  it('goes to DATA_DIR for a user who cannot write it in dist/, and the next start takes it from there', async (context) => {
    const nobody = { uid: 65534, gid: 65534 };
    // Another user than the one who built: only root can start one, and only where that user can
    // reach this checkout and this Node.
    const reachable = () => spawnSync(process.execPath, ['-e', '0'], { cwd: root, ...nobody }).status === 0;
    if (process.getuid?.() !== 0 || !reachable()) context.skip();
    const dir = dataDir();
    chownSync(dir, nobody.uid, nobody.gid);
    const first = await startOnce({ DATA_DIR: dir }, nobody);
    expect(first).not.toMatch(ACCEPTED);
    expect(readdirSync(join(dir, 'compile-cache')).length).toBe(1);
    const second = await startOnce({ DATA_DIR: dir }, nobody);
    expect(second).toMatch(ACCEPTED);
    expect(second).toContain(join(dir, 'compile-cache'));
  });

  it('dist/main.js runs with the settings of `npm start` when started by itself (the Dockerfile does)', () => {
    const shebang = readFileSync(join(root, 'dist', 'main.js'), 'utf8').split('\n')[0];
    const settings = [...Object.entries(runtimeEnv).map(([name, value]) => `${name}=${value}`), 'node', ...nodeFlags];
    expect(shebang).toBe(`#!/usr/bin/env -S ${settings.join(' ')}`);
    expect(statSync(join(root, 'dist', 'main.js')).mode & 0o111).toBe(0o111);
  });
});

// What the bundle leaves for first use (validation of a route's input, the OpenAPI document through
// json-schema-resolver, its YAML form through yaml: stand-ins in scripts/build.mjs) works on the very
// first request that needs it, in a fresh compiled service on the suite's database.
describe('parts built on first use (the compiled service)', () => {
  it("a route's first request is validated (400 naming the field), and the OpenAPI document and its YAML are served", async () => {
    const database = await freshDatabase();
    const rootSecret = 'first-use-root-secret-0123456789abcdef';
    const started = await run({
      ...database.env,
      DATA_DIR: dataDir(),
      PORT: '0',
      HOST: '127.0.0.1',
      AUTH_CLIENT_ID: ROOT_ID,
      AUTH_CLIENT_SECRET: rootSecret,
    });
    try {
      const base = `http://127.0.0.1:${started.port}`;
      const token = await request(base, 'POST', '/api/oauth2/token', { body: { client_id: ROOT_ID, client_secret: rootSecret } });
      expect(token.status).toBe(200);
      const auth = { token: token.body.access_token as string };

      const invalid = await request(base, 'POST', '/api/tenant', { ...auth, body: { id: 'first-use', name: 42, roles: ALL_TENANT_ROLES } });
      expect(invalid.status).toBe(400);
      expect(invalid.headers.get('content-type')).toContain('application/problem+json');
      expect(invalid.body.errors.map((error: { field: string }) => error.field)).toEqual(['body.name']);
      const valid = await request(base, 'POST', '/api/tenant', {
        ...auth,
        body: { id: 'first-use', name: 'First use', roles: ALL_TENANT_ROLES },
      });
      expect(valid.status).toBe(201);

      const document = await request(base, 'GET', '/api/openapi.json');
      expect(document.status).toBe(200);
      expect(document.body.openapi).toBe('3.1.0');
      expect(Object.keys(document.body.paths)).toContain('/api/tenant');
      const yaml = await fetch(`${base}/api/yaml`);
      expect(yaml.status).toBe(200);
      expect(await yaml.text()).toMatch(/^openapi: 3\.1\.0$/m);
    } finally {
      await stop(started);
      await database.drop();
    }
    // A start alone takes seconds on a loaded machine (a fresh database is migrated first).
  }, 60_000);
});

describe('addresses', () => {
  it('defaults PUBLIC_URL to the port listened on, and listens on loopback only outside production', async () => {
    const dir = dataDir();
    const port = await freePort();
    const started = await run({ DATA_DIR: dir, PORT: String(port) }, { until: 'The API explorer is at' });
    try {
      const output = started.output();
      expect(output).toContain(`http://localhost:${port}/api/oauth2/token`);
      expect(output).toContain(`Server listening at http://127.0.0.1:${port}`);
      expect(output).not.toContain('differs from the address listened on');
      // Log records carry ISO timestamps and level names.
      const listening = JSON.parse(output.split('\n').find((line) => line.includes('Server listening')) ?? '{}');
      expect(listening).toMatchObject({ level: 'info', time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });

      const base = `http://127.0.0.1:${port}`;
      const client = JSON.parse(readFileSync(join(dir, 'bootstrap-client.json'), 'utf8')) as { id: string; secret: string };
      const tokenReply = await fetch(`${base}/api/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret }),
      });
      const { access_token } = (await tokenReply.json()) as { access_token: string };
      const tenant = await fetch(`${base}/api/tenant`, {
        method: 'POST',
        headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'acme', name: 'Acme' }),
      });
      expect(tenant.status).toBe(201);
      const metadata = (await (await fetch(`${base}/.well-known/openid-credential-issuer/issuers/acme`)).json()) as {
        credential_issuer: string;
      };
      expect(metadata.credential_issuer).toBe(`http://localhost:${port}/issuers/acme`);
      // The explorer calls whatever address the document was read from.
      const openapi = (await (await fetch(`${base}/api/openapi.json`)).json()) as { servers: { url: string }[] };
      expect(openapi.servers).toEqual([{ url: '/' }]);
    } finally {
      await stop(started);
    }
  });

  it('warns when PUBLIC_URL names another port than the one listened on', async () => {
    const started = await run({ DATA_DIR: dataDir(), PORT: '0', PUBLIC_URL: 'http://localhost:1' });
    try {
      await expect.poll(() => started.output()).toContain('differs from the address listened on');
    } finally {
      await stop(started);
    }
  });

  it('warns once, naming HAIP, when production runs on a plain-http PUBLIC_URL; says nothing for https', async () => {
    const production = {
      NODE_ENV: 'production',
      MASTER_SECRET: 'm'.repeat(32),
      AUTH_CLIENT_ID: 'admin',
      AUTH_CLIENT_SECRET: 's'.repeat(16),
    };
    const port = await freePort();
    const http = await run({
      ...production,
      DATA_DIR: dataDir(),
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: `http://localhost:${port}`,
    });
    // Said once the service listens: wait for it, so that a missing warning fails here rather than racing the stop.
    await expect.poll(() => http.output(), { timeout: 3000 }).toContain('plain http');
    await stop(http);
    const warnings = http
      .output()
      .split('\n')
      .filter((line) => line.includes('plain http'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0] as string)).toMatchObject({
      level: 'warn',
      msg: expect.stringMatching(/^PUBLIC_URL http:\/\/localhost:\d+ is plain http: HAIP .* requires https, and wallets refuse .* on http/),
    });

    const https = await run({
      ...production,
      DATA_DIR: dataDir(),
      PORT: '0',
      PUBLIC_URL: 'https://issuer.example.com',
      TRUST_PROXY: 'true',
    });
    await stop(https);
    expect(https.output()).not.toContain('plain http');
  });

  it('says nothing about a different PUBLIC_URL behind a reverse proxy', async () => {
    const started = await run({ DATA_DIR: dataDir(), PORT: '0', PUBLIC_URL: 'https://issuer.example.com', TRUST_PROXY: 'true' });
    await stop(started);
    expect(started.output()).not.toContain('differs from the address listened on');
  });
});

describe('start-up failures: one line, a distinct exit code, no stack trace', () => {
  it('a port in use exits 71', async () => {
    const { server, port } = await occupy();
    try {
      const failure = await runUntilExit({ DATA_DIR: dataDir(), PORT: String(port) });
      expect(failure.code).toBe(71);
      expect(failure.output).toContain(`port ${port} is already in use on 127.0.0.1`);
      expect(failure.output).not.toMatch(STACK_TRACE);
    } finally {
      server.close();
    }
  });

  it('an unreachable PostgreSQL exits 69 naming host and port', async () => {
    const port = await freePort();
    const failure = await runUntilExit({
      DATA_DIR: dataDir(),
      PORT: '0',
      DB_TYPE: 'postgres',
      DB_HOST: '127.0.0.1',
      DB_PORT: String(port),
    });
    expect(failure.code).toBe(69);
    expect(failure.output).toContain(`cannot use PostgreSQL at 127.0.0.1:${port}/svc: ECONNREFUSED`);
    expect(failure.output).not.toMatch(STACK_TRACE);
  });

  it("an AUTH_CLIENT_ID that names a tenant's client exits 78, and the database keeps that client as it was", async () => {
    const dir = dataDir();
    const first = await run({ DATA_DIR: dir, PORT: '0' });
    const bootstrap = JSON.parse(readFileSync(join(dir, 'bootstrap-client.json'), 'utf8')) as { id: string; secret: string };
    const token = async (port: number, id: string, secret: string) => {
      const reply = await fetch(`http://127.0.0.1:${port}/api/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: id, client_secret: secret }),
      });
      return reply.status === 200 ? ((await reply.json()) as { access_token: string }).access_token : undefined;
    };
    const tenant = await fetch(`http://127.0.0.1:${first.port}/api/tenant`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await token(first.port, bootstrap.id, bootstrap.secret)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'acme', name: 'Acme', roles: ['issuance:manage'] }),
    });
    const { client } = (await tenant.json()) as { client: { clientId: string; secret: string } };
    await stop(first);

    const failure = await runUntilExit({
      DATA_DIR: dir,
      PORT: '0',
      AUTH_CLIENT_ID: client.clientId,
      AUTH_CLIENT_SECRET: 'another-secret-of-enough-length',
    });
    expect(failure.code).toBe(78);
    expect(failure.output).toContain(`svc: AUTH_CLIENT_ID: client '${client.clientId}' exists and belongs to tenant 'acme'`);
    expect(failure.output).not.toMatch(STACK_TRACE);

    // The tenant's client still gets tokens with its own secret.
    const again = await run({ DATA_DIR: dir, PORT: '0' });
    try {
      expect(await token(again.port, client.clientId, client.secret)).toBeDefined();
    } finally {
      await stop(again);
    }
  });

  it('PORT=abc exits 78 saying a whole number is expected', async () => {
    const failure = await runUntilExit({ DATA_DIR: dataDir(), PORT: 'abc' });
    expect(failure.code).toBe(78);
    expect(failure.output).toContain('PORT: must be a whole number (got "abc")');
  });

  it('several invalid keys exit 78 with one line naming each of them', async () => {
    const failure = await runUntilExit({ DATA_DIR: dataDir(), PORT: 'abc', STATUS_BITS: '3', JWT_EXPIRES_IN: 'soon' });
    expect(failure.code).toBe(78);
    const lines = failure.output.trim().split('\n');
    expect(lines.at(-1)).toMatch(
      /^svc: invalid configuration: PORT: must be a whole number \(got "abc"\); JWT_EXPIRES_IN: must be a number with a unit [^;]*; STATUS_BITS: [^;]+ \(got "3"\)$/,
    );
    expect(lines.filter((line) => /PORT|STATUS_BITS|JWT_EXPIRES_IN|configuration/i.test(line))).toHaveLength(1);
  });

  it('DATABASE_URL with DB_TYPE sqlite is refused rather than silently ignored', async () => {
    const failure = await runUntilExit({ DATA_DIR: dataDir(), PORT: '0', DATABASE_URL: 'postgres://svc:pw@db.internal:5432/svc' });
    expect(failure.code).toBe(78);
    expect(failure.output).toContain('DATABASE_URL: set, but DB_TYPE is sqlite');
    expect(failure.output).not.toContain('pw@db.internal');
  });

  it('never repeats the value of a secret key', async () => {
    const failure = await runUntilExit({ DATA_DIR: dataDir(), PORT: '0', MASTER_SECRET: 'short-but-real-secret' });
    expect(failure.code).toBe(78);
    expect(failure.output).toContain('MASTER_SECRET: must be at least 32 characters');
    expect(failure.output).not.toContain('short-but-real-secret');
  });
});
