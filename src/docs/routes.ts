// The documentation site (the build, or `npm run docs` alone, makes README.md and docs/ into dist/docs)
// served at /docs.
// Its files are public and static. A requested path is hostile: only a path made of plain names
// (letters, digits, '-', '_', '.', never a segment of dots alone) with a known extension is read, and
// it is read inside the site's folder, so '..', encoded or not, never leaves it.
import { readFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Problem } from '../platform/http/problem.js';

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

/** A segment of a served path: a plain name, not '.' or '..'. */
const SEGMENT = /^(?!\.+$)[A-Za-z0-9._-]{1,128}$/;

/** The built pages may style themselves from the site; nothing runs, nothing is sent anywhere. */
const POLICY = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The file a request path names inside the site, or undefined when the path is not one it serves. */
export function siteFile(dir: string, requested: string): { file: string; type: string } | undefined {
  // A folder (a last segment without an extension; the router may drop its trailing slash) is its index page.
  const trimmed = requested.replace(/\/$/, '');
  const path =
    trimmed === '' ? 'index.html' : trimmed.slice(trimmed.lastIndexOf('/') + 1).includes('.') ? trimmed : `${trimmed}/index.html`;
  const segments = path.split('/');
  if (segments.length > 8 || !segments.every((segment) => SEGMENT.test(segment))) return undefined;
  const type = TYPES[path.slice(path.lastIndexOf('.') + 1)];
  if (type === undefined) return undefined;
  const file = join(dir, ...segments);
  // Belt and braces: the segments above cannot climb, and the joined path must still be inside.
  if (!file.startsWith(dir.endsWith(sep) ? dir : dir + sep)) return undefined;
  return { file, type };
}

export function docsRoutes(app: FastifyInstance, dir: string) {
  const route = { config: { access: { public: true as const } }, schema: { hide: true } };
  const serve = async (requested: string, reply: FastifyReply) => {
    const found = siteFile(dir, requested);
    if (found === undefined) throw new Problem(404, 'Not Found', 'the documentation has no such page');
    let contents: Buffer;
    try {
      contents = await readFile(found.file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EISDIR') {
        // No home page at all: the site was not built, which says more than "no such page".
        const built = await readFile(join(dir, 'index.html')).then(
          () => true,
          () => false,
        );
        if (!built)
          throw new Problem(
            503,
            'Service Unavailable',
            'the documentation is not built: npm run build (or npm run docs alone) makes it (dist/docs)',
          );
        throw new Problem(404, 'Not Found', 'the documentation has no such page');
      }
      throw err;
    }
    return reply
      .header('content-type', found.type)
      .header('cache-control', 'no-cache')
      .header('content-security-policy', POLICY)
      .header('x-content-type-options', 'nosniff')
      .send(contents);
  };
  // /docs (and /docs/, the router ignores a trailing slash) sends the browser to /docs/, so that the
  // pages' relative links resolve inside the site.
  app.get('/docs', route, (request, reply) => {
    if (request.url.split('?')[0] === '/docs') return reply.redirect('/docs/', 301);
    return serve('', reply);
  });
  app.get<{ Params: { '*': string } }>('/docs/*', route, (request, reply) => serve(request.params['*'], reply));
}
