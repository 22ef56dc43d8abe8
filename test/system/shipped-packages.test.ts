// What ships of other people's code, as the build declares it: the SBOM it writes (read beside npm's
// own list of the production tree), package.json's dependencies, and the image's node_modules (only
// the packages the service loads at run time), which must be enough for the compiled service to
// answer the requests that load them.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { auditReport } from '../../scripts/audit.mjs';
import { RUN_TIME_PACKAGES, runtimeSettings } from '../../scripts/build.mjs';
import { copyRunTimePackages } from '../../scripts/shipped-packages.mjs';
import { freshDatabase } from '../support/database.js';
import { request } from '../support/http.js';
import { root, run, stop } from '../support/process.js';
import { ALL_TENANT_ROLES, ROOT_ID } from '../support/service.js';

interface Component {
  'bom-ref': string;
  group?: string;
  name: string;
  version: string;
  purl: string;
}
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));
const sbom = readJson(join(root, 'dist', 'sbom.cdx.json'));
const pkg = readJson(join(root, 'package.json'));
const fullName = (c: Component) => (c.group ? `${c.group}/${c.name}` : c.name);
const installedVersion = (name: string) => readJson(join(root, 'node_modules', name, 'package.json')).version as string;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the SBOM the build writes (dist/sbom.cdx.json)', () => {
  it('is CycloneDX 1.6 naming the service with the SHA-256 of its bundle files', () => {
    expect(sbom).toMatchObject({ bomFormat: 'CycloneDX', specVersion: '1.6', version: 1 });
    const sha256 = (file: string) =>
      createHash('sha256')
        .update(readFileSync(join(root, 'dist', file)))
        .digest('hex');
    expect(sbom.metadata.component).toMatchObject({
      type: 'application',
      name: 'svc',
      version: pkg.version,
      hashes: [
        { alg: 'SHA-256', content: sha256('main.js') },
        { alg: 'SHA-256', content: sha256('service.js') },
      ],
    });
  });

  it('lists the bundled libraries and the run-time ones at their installed versions, by package URL', () => {
    const components = sbom.components as Component[];
    for (const name of [
      'fastify',
      'zod',
      'kysely',
      'jose',
      'pg',
      '@sd-jwt/sd-jwt-vc',
      '@owf/mdoc',
      '@aws-sdk/client-kms',
      'preact',
      ...RUN_TIME_PACKAGES,
    ]) {
      const found = components.find((c) => fullName(c) === name && c.version === installedVersion(name));
      expect(found, name).toBeDefined();
    }
    for (const c of components) {
      const scope = c.group ? `${encodeURIComponent(c.group)}/` : '';
      expect(c.purl).toBe(`pkg:npm/${scope}${c.name}@${c.version}`);
      expect(c['bom-ref']).toBe(c.purl);
    }
    expect(new Set(components.map((c) => c.purl)).size).toBe(components.length);
    // Test libraries and tools are not shipped.
    for (const name of ['vitest', 'oidc-provider', 'esbuild', 'typescript'])
      expect(
        components.some((c) => fullName(c) === name),
        name,
      ).toBe(false);
  });

  it("names only packages of npm's own production tree (`npm ls --omit=dev`), and every dependency of package.json", () => {
    // One line per installed package: <folder>:<name>@<version>[:...]. Its exit status is not read: a
    // checkout whose node_modules is a link to another's makes npm call every package extraneous,
    // and still list it.
    const listed = spawnSync('npm', ['ls', '--omit=dev', '--all', '--parseable', '--long'], { cwd: root, encoding: 'utf8' }).stdout;
    expect(listed).toContain(`:fastify@${installedVersion('fastify')}`);
    const production = new Set(listed.split('\n').map((line) => line.split(':')[1]));
    const ours = (sbom.components as Component[]).map((c) => `${fullName(c)}@${c.version}`);
    expect(ours.filter((entry) => !production.has(entry))).toEqual([]);
    const shippedNames = new Set((sbom.components as Component[]).map(fullName));
    expect(Object.keys(pkg.dependencies).filter((name) => !shippedNames.has(name))).toEqual([]);
    expect(Object.keys(pkg.devDependencies).filter((name) => shippedNames.has(name))).toEqual([]);
  });
});

describe("the image's node_modules: the run-time packages alone", () => {
  it('are enough for the compiled service: validation, the OpenAPI document and its YAML, the explorer, claim patterns', async () => {
    const app = mkdtempSync(join(tmpdir(), 'svc-image-'));
    dirs.push(app);
    cpSync(join(root, 'dist'), join(app, 'dist'), { recursive: true });
    cpSync(join(root, 'package.json'), join(app, 'package.json'));
    copyRunTimePackages(RUN_TIME_PACKAGES, app);

    const database = await freshDatabase();
    const rootSecret = 'image-root-secret-0123456789abcdef';
    const { env, nodeFlags } = runtimeSettings();
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-image-data-'));
    dirs.push(dataDir);
    const started = await run(
      { ...env, ...database.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', AUTH_CLIENT_ID: ROOT_ID, AUTH_CLIENT_SECRET: rootSecret },
      { command: [process.execPath, ...nodeFlags, join(app, 'dist', 'main.js')] },
    );
    try {
      const base = `http://127.0.0.1:${started.port}`;
      const rootToken = await request(base, 'POST', '/api/oauth2/token', { body: { client_id: ROOT_ID, client_secret: rootSecret } });
      const invalid = await request(base, 'POST', '/api/tenant', { token: rootToken.body.access_token, body: { id: 'img', name: 42 } });
      expect(invalid.status).toBe(400);
      const tenant = await request(base, 'POST', '/api/tenant', {
        token: rootToken.body.access_token,
        body: { id: 'img', name: 'Image', roles: ALL_TENANT_ROLES },
      });
      expect(tenant.status, JSON.stringify(tenant.body)).toBe(201);
      const client = tenant.body.client as { clientId: string; secret: string };
      const tenantToken = await request(base, 'POST', '/api/oauth2/token', {
        body: { client_id: client.clientId, client_secret: client.secret },
      });
      expect(tenantToken.status).toBe(200);

      // re2js: a pattern is compiled when the configuration is saved.
      const refused = await request(base, 'POST', '/api/issuer/credentials', {
        token: tenantToken.body.access_token,
        body: {
          id: 'image',
          config: { format: 'dc+sd-jwt' },
          vct: 'urn:example:image',
          fields: [{ path: ['code'], type: 'string', constraints: { pattern: '^(a)\\1$' } }],
        },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.errors[0].message).toMatch(/^uses a backreference/);

      // json-schema-resolver, yaml, swagger-ui-dist.
      expect((await request(base, 'GET', '/api/openapi.json')).body.openapi).toBe('3.1.0');
      expect(await (await fetch(`${base}/api/yaml`)).text()).toMatch(/^openapi: 3\.1\.0$/m);
      const asset = await fetch(`${base}/api/static/swagger-ui-bundle.js`);
      expect(asset.status).toBe(200);
      expect((await asset.text()).length).toBeGreaterThan(100_000);
    } finally {
      await stop(started);
      await database.drop();
    }
  }, 60_000);
});

describe('the audit report (scripts/audit.mjs)', () => {
  it('lists each vulnerable package and fails on a critical advisory alone', () => {
    const report = (critical: number) =>
      JSON.stringify({
        auditReportVersion: 2,
        vulnerabilities: {
          fastify: {
            name: 'fastify',
            severity: critical ? 'critical' : 'moderate',
            range: '<5.0.1',
            via: [{ title: 'A flaw', url: 'https://github.com/advisories/GHSA-xxxx' }],
            fixAvailable: true,
          },
        },
        metadata: { vulnerabilities: { info: 0, low: 0, moderate: critical ? 0 : 1, high: 0, critical, total: 1 } },
      });
    const moderate = auditReport(report(0));
    expect(moderate.fails).toBe(false);
    expect(moderate.lines).toEqual([
      'npm audit --omit=dev: 1 vulnerable packages (0 info, 0 low, 1 moderate, 0 high, 0 critical)',
      '  moderate fastify <5.0.1: A flaw https://github.com/advisories/GHSA-xxxx (a fix is available)',
    ]);
    expect(auditReport(report(1)).fails).toBe(true);
  });

  it('says plainly that nothing was checked when the advisory database cannot be asked', () => {
    const unreachable = auditReport(
      JSON.stringify({ message: '405 Method Not Allowed - POST https://registry.example/-/npm/v1/security/advisories/bulk' }),
    );
    expect(unreachable).toEqual({
      lines: [
        'npm audit --omit=dev: the advisory database could not be asked (405 Method Not Allowed - POST https://registry.example/-/npm/v1/security/advisories/bulk); nothing was checked',
      ],
      fails: false,
    });
  });
});
