// The console's files as the service serves them: a console that was not built is 503 "not built";
// a file that is there but cannot be read is a server error, not "not built".
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { consoleRoutes } from '../../src/console/routes.js';
import { installErrorHandling } from '../../src/platform/http/errors.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The console routes over a folder made by `lay`, behind the service's error handling. */
async function serving(lay: (dir: string) => void) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-console-'));
  dirs.push(dir);
  lay(dir);
  const app = Fastify({ logger: false });
  installErrorHandling(app);
  consoleRoutes(app, dir);
  await app.ready();
  return app;
}

describe('console files', () => {
  it('serves a built file', async () => {
    const app = await serving((dir) => writeFileSync(join(dir, 'app.js'), 'console.log(1)'));
    const reply = await app.inject({ method: 'GET', url: '/console/app.js' });
    expect(reply.statusCode).toBe(200);
    expect(reply.body).toBe('console.log(1)');
  });

  it('answers 503 "not built" when the file is missing', async () => {
    const app = await serving(() => {});
    const reply = await app.inject({ method: 'GET', url: '/console/app.js' });
    expect(reply.statusCode).toBe(503);
    expect(reply.body).toMatch(/the console is not built/);
  });

  it('answers 500, not "not built", when the file is there but cannot be read', async () => {
    // A directory where the file should be: reading it fails with EISDIR.
    const app = await serving((dir) => mkdirSync(join(dir, 'app.js')));
    const reply = await app.inject({ method: 'GET', url: '/console/app.js' });
    expect(reply.statusCode).toBe(500);
    expect(reply.body).not.toMatch(/not built/);
  });
});
