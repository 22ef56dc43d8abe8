// The web console (console/, built into dist/console by `npm start` and `npm run build`) served at
// /console. It is a static page on the public management API: its files are public, what it shows
// comes from API calls made with the token of whoever logged in. A strict Content-Security-Policy
// lets the page run its own script and talk to this origin only.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Problem } from '../platform/http/problem.js';

/** External mode: the page also calls the provider's token endpoint (its public address), to exchange the login's code. */
function contentSecurityPolicy(provider?: { publicTokenEndpoint: string }) {
  const connect = provider ? `'self' ${new URL(provider.publicTokenEndpoint).origin}` : "'self'";
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src ${connect}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * Each file's type and caching. The page and its code are revalidated on every load, so a new build
 * is picked up at once; the icon changes hardly ever and browsers ask for it on every page, so it is
 * kept for a week.
 */
const REVALIDATED = 'no-cache';
const FILES = new Map<string, { type: string; cache: string }>([
  ['index.html', { type: 'text/html; charset=utf-8', cache: REVALIDATED }],
  ['app.js', { type: 'text/javascript; charset=utf-8', cache: REVALIDATED }],
  ['styles.css', { type: 'text/css; charset=utf-8', cache: REVALIDATED }],
  ['favicon.svg', { type: 'image/svg+xml', cache: 'public, max-age=604800' }],
]);

export function consoleRoutes(app: FastifyInstance, dir: string, provider?: { publicTokenEndpoint: string }) {
  const policy = contentSecurityPolicy(provider);
  const route = { config: { access: { public: true as const } }, schema: { hide: true } };
  const serve = async (name: string, reply: FastifyReply) => {
    const file = FILES.get(name);
    if (file === undefined) throw new Problem(404, 'Not Found', `the console has no file '${name}'`);
    let contents: Buffer;
    try {
      contents = await readFile(join(dir, name));
    } catch (err) {
      // Only a missing file means the console was not built; any other failure (permissions, a
      // directory in its place) is an error of its own and is answered and logged as one.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      throw new Problem(503, 'Service Unavailable', 'the console is not built: npm start and npm run build build it (dist/console)');
    }
    return reply
      .header('content-type', file.type)
      .header('cache-control', file.cache)
      .header('content-security-policy', policy)
      .header('x-frame-options', 'DENY')
      .send(contents);
  };
  // /console and /console/ (the router ignores a trailing slash) are the page; its files are named absolutely.
  app.get('/console', route, (_request, reply) => serve('index.html', reply));
  app.get<{ Params: { file: string } }>('/console/:file', route, (request, reply) => serve(request.params.file, reply));
}
