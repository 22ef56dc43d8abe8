// The documentation: the README stays short, every relative link of README.md and docs/ reaches a file
// and, into a page, a heading; `npm run docs` builds the site whose links between pages work; the
// service serves it at /docs, only from its folder, whatever the path says.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSite, SITE } from '../../scripts/docs/build.js';
import { anchorsOf, isExternal, linksOf, pageFiles, repoRoot } from '../../scripts/docs/markdown.js';
import { docsRoutes } from '../../src/docs/routes.js';
import { installErrorHandling } from '../../src/platform/http/errors.js';
import { startService, type TestService } from '../support/service.js';

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');

describe('README and docs/ as markdown', () => {
  it('the README has at most 250 lines, with the two set-up commands and the walkthrough', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
    expect(readme).toContain('```sh\nnpm ci && npm start\n```');
    expect(readme).toContain('```sh\nnpm ci && npm test\n```');
    expect(readme).toContain('<!-- walkthrough:start -->');
  });

  it('every relative link reaches a file, and a link into a page a heading of it', () => {
    const pages = pageFiles();
    expect(pages).toContain('docs/index.md');
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      for (const href of linksOf(read(page))) {
        if (isExternal(href)) continue;
        checked++;
        const [path = '', anchor] = href.split('#', 2);
        const target = path === '' ? page : posix.normalize(posix.join(posix.dirname(page), path));
        if (target.startsWith('..') || !existsSync(join(repoRoot, target))) {
          broken.push(`${page}: ${href} (no file ${target})`);
          continue;
        }
        if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(read(target)).has(anchor)) {
          broken.push(`${page}: ${href} (no heading #${anchor} in ${target})`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(40);
  });

  it('finds a broken link and a missing anchor (the check can fail)', () => {
    expect(linksOf('see [a](nowhere.md#x), `[not](a-link.md)` and [b](https://example.com)')).toEqual([
      'nowhere.md#x',
      'https://example.com',
    ]);
    expect(anchorsOf('# Title\n\n## `KEY` and [link](x.md)\n\n```sh\n# not a heading\n```\n## Title\n')).toEqual(
      new Set(['title', 'key-and-link', 'title-1']),
    );
  });
});

describe('the built site (npm run docs)', () => {
  let built: string[];
  beforeAll(() => {
    built = buildSite();
  });

  it('builds every page, by the npm script too, in a few seconds', () => {
    expect(built).toEqual(expect.arrayContaining(['index.html', 'readme.html', 'architecture.html', 'api/management.html']));
    const started = performance.now();
    const output = execFileSync('npm', ['run', '--silent', 'docs'], { cwd: repoRoot, encoding: 'utf8' });
    expect(output).toMatch(/^docs: \d+ pages in dist\/docs\//);
    expect(performance.now() - started).toBeLessThan(20_000);
  });

  it('titles each page by its first heading', () => {
    const titleOf = (page: string) => /<title>([^<]*)<\/title>/.exec(readFileSync(join(repoRoot, SITE, page), 'utf8'))?.[1];
    expect(titleOf('index.html')).toBe('svc documentation · svc');
    expect(titleOf('readme.html')).toBe('svc · svc');
    expect(titleOf('operations.html')).toBe('Operations · svc');
  });

  it('links between its pages reach a built file and, with an anchor, an id in it', () => {
    const site = join(repoRoot, SITE);
    const broken: string[] = [];
    let internal = 0;
    for (const page of built) {
      const html = readFileSync(join(site, page), 'utf8');
      for (const [, href] of html.matchAll(/href="([^"]+)"/g)) {
        if (isExternal(href as string)) continue;
        const [path = '', anchor] = (href as string).split('#', 2);
        const target = path === '' ? page : posix.normalize(posix.join(posix.dirname(page), path));
        // Links out of the site reach the repository from dist/docs/ (read from a checkout).
        if (target.startsWith('..')) {
          if (!existsSync(join(site, target))) broken.push(`${page}: ${href}`);
          continue;
        }
        internal++;
        const file = join(site, target);
        if (!existsSync(file) || statSync(file).isDirectory()) {
          broken.push(`${page}: ${href} (no file)`);
          continue;
        }
        if (anchor && !readFileSync(file, 'utf8').includes(`id="${anchor}"`)) broken.push(`${page}: ${href} (no id)`);
      }
    }
    expect(broken).toEqual([]);
    expect(internal).toBeGreaterThanOrEqual(60);
  });
});

/** A request whose path is sent as written: fetch would resolve '..' before sending it. */
function rawGet(base: string, path: string, method = 'GET'): Promise<{ status: number; type: string; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, path, method }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('/docs on the service', () => {
  let service: TestService;
  beforeAll(async () => {
    buildSite();
    service = await startService();
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('sends /docs to /docs/, the home page', async () => {
    const moved = await rawGet(service.url, '/docs');
    expect(moved.status).toBe(301);
    const home = await rawGet(service.url, '/docs/');
    expect(home).toMatchObject({ status: 200, type: 'text/html; charset=utf-8' });
    expect(home.body).toContain('<h1 id="svc-documentation">svc documentation</h1>');
    expect(home.body).toContain('href="api/management.html"');
  });

  it('serves pages, the style sheet and the JSON Schemas with their types, and no script may run', async () => {
    const page = await service.raw('GET', '/docs/api/management.html');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1 id="using-the-management-api">Using the management API</h1>');
    expect(page.headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src 'self'/);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await rawGet(service.url, '/docs/style.css')).type).toBe('text/css; charset=utf-8');
    const schema = await rawGet(service.url, '/docs/config-files/tenant.schema.json');
    expect(schema.type).toBe('application/json; charset=utf-8');
    expect(JSON.parse(schema.body)).toEqual(JSON.parse(read('docs/config-files/tenant.schema.json')));
    expect((await rawGet(service.url, '/docs/config-files/')).body).toContain('tenant.schema.json');
  });

  it.each([
    '/docs/../package.json',
    '/docs/%2e%2e/package.json',
    '/docs/..%2fpackage.json',
    '/docs/api/..%2f..%2f..%2fpackage.json',
    '/docs/.%2e/.%2e/package.json',
    '/docs/%2fetc%2fpasswd',
    '/docs/..\\..\\package.json',
    '/docs/api/%00.html',
    '/docs/../../src/main.ts',
    '/docs/.hidden.html',
    '/docs/nowhere.html',
    '/docs/index.md',
  ])('refuses %s, reading nothing outside the site', async (path) => {
    const reply = await rawGet(service.url, path);
    expect([400, 404]).toContain(reply.status);
    expect(reply.body).not.toContain('"name": "svc"');
    expect(reply.body).not.toContain('root:');
  });

  it('answers GET only, and leaves the API document and the console where they were', async () => {
    expect((await rawGet(service.url, '/docs/index.html', 'POST')).status).toBe(404);
    expect((await rawGet(service.url, '/docs/index.html', 'DELETE')).status).toBe(404);
    expect((await service.raw('GET', '/api/openapi.json')).status).toBe(200);
    const openapi = (await service.raw('GET', '/api/openapi.json')).body as { paths: Record<string, unknown> };
    expect(Object.keys(openapi.paths).filter((path) => path.startsWith('/docs'))).toEqual([]);
    expect([200, 503]).toContain((await service.raw('GET', '/console')).status);
  });
});

describe('/docs before the site is built', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-docs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers 503 "not built", not 404', async () => {
    const app = Fastify({ logger: false });
    installErrorHandling(app);
    docsRoutes(app, `${dir}/`);
    const reply = await app.inject({ method: 'GET', url: '/docs/setup.html' });
    expect(reply.statusCode).toBe(503);
    expect(reply.body).toMatch(/npm run docs/);
  });
});
