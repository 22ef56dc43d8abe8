// The endpoints the integrator's page posts a wallet's answer to from the browser (the DC API and the
// Annex C responses) answer CORS requests for the one origin the session was created for, and for
// nothing else: the preflight, and the allow-origin header on the answer.
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import type { App } from '../platform/http/types.js';

/** The origin a session's page runs at (the offer's expected origin), undefined when it has none. */
export type BrowserOrigin = (handle: string) => Promise<string | undefined>;

/** Allows `origin` to read the answer when it is the session's expected origin. */
export async function allowSessionOrigin(browserOrigin: BrowserOrigin, handle: string, origin: string | undefined, reply: FastifyReply) {
  const expected = await browserOrigin(handle);
  if (origin && expected && origin === expected) reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
}

/** The CORS preflight of a POST at `path` (with a :handle parameter) from the session's page. */
export function sessionOriginPreflight(
  app: App,
  path: string,
  schema: { tags: string[]; params: z.ZodObject<{ handle: z.ZodString }> },
  browserOrigin: BrowserOrigin,
) {
  app.options(
    path,
    { schema: { tags: schema.tags, summary: 'CORS preflight for the page of the session origin', params: schema.params } },
    async (request, reply) => {
      await allowSessionOrigin(browserOrigin, request.params.handle, request.headers.origin, reply);
      return reply
        .header('access-control-allow-methods', 'POST')
        .header('access-control-allow-headers', 'content-type')
        .header('access-control-max-age', '600')
        .code(204)
        .send();
    },
  );
}
