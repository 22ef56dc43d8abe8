import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest, FastifyServerOptions } from 'fastify';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Takes a well-formed X-Request-Id from the caller (so a trace crosses services), else makes one. */
export const requestIds: Pick<FastifyServerOptions, 'genReqId' | 'requestIdHeader'> = {
  requestIdHeader: false,
  genReqId: (req) => {
    const given = req.headers['x-request-id'];
    return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  },
};

/**
 * Query parameters that carry credentials (the event stream takes its token so; the authorization
 * endpoint a pushed request's request_uri; the chained authorization server's callback the upstream
 * provider's authorization code and the single-use state that finds the login) never reach a log or
 * an error body.
 */
export const maskCredentials = (url: string) =>
  url.replace(/([?&](?:token|access_token|client_secret|request_uri|code|state)=)[^&]*/gi, '$1[redacted]');

/**
 * Path parameters that are bearer values, by the name routes give them: whoever knows the handle of
 * an offer by reference gets its pre-authorized code, and whoever knows a presentation request's
 * handle fetches the request and may answer it.
 */
const BEARER_PARAMS = new Set(['handle']);

/** The URL as the access log shows it: bearer path segments of its route and credential query parameters redacted. */
export function loggedUrl(req: Pick<FastifyRequest, 'url' | 'routeOptions'>): string {
  const route = req.routeOptions?.url;
  if (!route?.includes(':')) return maskCredentials(req.url);
  const queryAt = req.url.search(/[?#]/);
  const path = queryAt < 0 ? req.url : req.url.slice(0, queryAt);
  const rest = queryAt < 0 ? '' : req.url.slice(queryAt);
  // A :param stands for exactly one segment, so the route's segments line up with the path's.
  const segments = path.split('/');
  route.split('/').forEach((part, i) => {
    if (part.startsWith(':') && BEARER_PARAMS.has(part.slice(1)) && i < segments.length) segments[i] = '[redacted]';
  });
  return maskCredentials(segments.join('/') + rest);
}

export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    // Readable by people and by log pipelines alike: "time":"2026-11-23T21:43:20.123Z","level":"info".
    // Log lines carry the system's time: a log is read against other systems' logs, not against a test's clock.
    timestamp: () => `,"time":"${new Date().toISOString()}"`,
    formatters: { level: (label) => ({ level: label }) },
    redact: ['req.headers.authorization', 'req.headers.cookie'],
    serializers: {
      req: (req: FastifyRequest) => ({ method: req.method, url: loggedUrl(req), remoteAddress: req.ip }),
    },
  };
}

/** Every answer names its request id, so a caller can quote it and an operator can find the log lines. */
export function echoRequestIds(app: FastifyInstance) {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
}
