// The API explorer (Swagger UI) at /api and the OpenAPI document it shows, at /api/openapi.json (and
// at /api/json and /api/yaml, where earlier versions served it). Swagger UI's files come from the
// swagger-ui-dist package, read from disk at each request of a browser that has not cached them: the
// service keeps none of its 2.5 MB in memory, and loads no plugin for it at start.
import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Problem } from './problem.js';

const FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'oauth2-redirect.html': 'text/html; charset=utf-8',
  'oauth2-redirect.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<title>svc management API</title>
<link rel="stylesheet" type="text/css" href="/api/static/swagger-ui.css">
<link rel="stylesheet" type="text/css" href="/api/static/index.css">
<link rel="icon" type="image/png" href="/api/static/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="/api/static/favicon-16x16.png" sizes="16x16">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/api/static/swagger-ui-bundle.js" charset="UTF-8"></script>
<script src="/api/static/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
<script src="/api/static/swagger-initializer.js" charset="UTF-8"></script>
</body>
</html>
`;

// A script file, not inline: the page runs under the service's Content-Security-Policy (script-src 'self').
// No validator: Swagger UI would send the document to validator.swagger.io.
const INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/api/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout',
    validatorUrl: null,
    oauth2RedirectUrl: new URL('/api/static/oauth2-redirect.html', window.location.href).href,
  });
};
`;

/** Public routes, left out of the document they serve. */
const ROUTE = { config: { access: { public: true as const } }, schema: { hide: true } };

export function explorerRoutes(app: FastifyInstance) {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  app.get('/api', ROUTE, (_request, reply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(PAGE));
  app.get('/api/static/swagger-initializer.js', ROUTE, (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(INITIALIZER),
  );
  app.get<{ Params: { file: string } }>('/api/static/:file', ROUTE, (request, reply) => {
    const type = FILES[request.params.file];
    if (type === undefined) throw new Problem(404, 'Not Found', `the explorer has no file '${request.params.file}'`);
    // The files change only with the package: a browser keeps them for a day.
    return reply
      .type(type)
      .header('cache-control', 'public, max-age=86400')
      .send(createReadStream(join(dir, request.params.file)));
  });
  for (const url of ['/api/openapi.json', '/api/json']) app.get(url, ROUTE, () => app.swagger());
  app.get('/api/yaml', ROUTE, (_request, reply) => reply.type('application/yaml; charset=utf-8').send(app.swagger({ yaml: true })));
}
