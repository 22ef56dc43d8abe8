// One error handler for both surfaces: problem details under /api, OAuth-style
// {error, error_description} on the public protocol surface. Bad input never becomes a 500.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { maskCredentials } from './logging.js';
import { type FieldError, OAuthError, Problem } from './problem.js';

export const PROBLEM_TYPE = 'application/problem+json';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** 'oauth': every error of the route is sent as {error, error_description}, as OAuth clients expect. */
    errorFormat?: 'oauth';
  }
}

export function isManagementPath(url: string): boolean {
  return url === '/api' || url.startsWith('/api/') || url.startsWith('/api?');
}

/**
 * A 100,000-element array of wrong items has 100,000 issues; listing them all would make a reply of
 * tens of megabytes. The first few tell the caller what is wrong.
 */
export const MAX_FIELD_ERRORS = 20;

function validationFieldErrors(err: FastifyError): { fields: FieldError[]; more: number } {
  if (!hasZodFastifySchemaValidationErrors(err)) return { fields: [], more: 0 };
  // Fastify calls the query string 'querystring'; fields are named as callers know them: query.limit.
  const where = err.validationContext === 'querystring' ? 'query' : (err.validationContext ?? 'body');
  const fields = err.validation.slice(0, MAX_FIELD_ERRORS).map((issue) => {
    const { instancePath, message, params } = issue;
    const path = instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');
    const unknownKeys = (params as { keys?: string[] }).keys;
    const field = [where, path].filter(Boolean).join('.');
    if (unknownKeys?.length) {
      return { field: unknownKeys.map((k) => `${field}.${k}`).join(', '), message: `unknown field(s) ${unknownKeys.join(', ')}` };
    }
    return { field, message: message ?? 'is invalid' };
  });
  return { fields, more: err.validation.length - fields.length };
}

/** Maps any thrown error to a problem; unknown errors become a 500 that reveals nothing. */
export function toProblem(err: FastifyError | Error): Problem {
  if (err instanceof Problem) return err;
  const fastifyError = err as FastifyError;
  const { fields, more } = validationFieldErrors(fastifyError);
  if (fields.length) {
    const detail = fields.map((f) => `${f.field}: ${f.message}`).join('; ');
    return new Problem(400, 'Bad Request', more ? `${detail}; and ${more} more` : detail, { errors: fields });
  }
  const status = fastifyError.statusCode;
  if (status && status >= 400 && status < 500) {
    return new Problem(status, titleFor(status), fastifyError.message);
  }
  return new Problem(500, 'Internal Server Error', 'an unexpected error occurred; the request id identifies it in the logs');
}

function titleFor(status: number): string {
  return (
    {
      400: 'Bad Request',
      401: 'Unauthorized',
      403: 'Forbidden',
      404: 'Not Found',
      405: 'Method Not Allowed',
      409: 'Conflict',
      410: 'Gone',
      413: 'Payload Too Large',
      415: 'Unsupported Media Type',
      429: 'Too Many Requests',
    }[status] ?? 'Error'
  );
}

/** A problem as protocol endpoints answer it: as OAuth does; their own steps choose precise error codes. */
export function oauthErrorBody(problem: Problem) {
  const error = problem.status >= 500 ? 'server_error' : ((problem.extra.error as string | undefined) ?? 'invalid_request');
  return { error, error_description: problem.detail ?? problem.title };
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: Problem) {
  reply.headers(problem.headers);
  if (problem instanceof OAuthError || !isManagementPath(request.url) || request.routeOptions.config?.errorFormat === 'oauth') {
    return reply.code(problem.status).send(oauthErrorBody(problem));
  }
  return reply
    .code(problem.status)
    .type(PROBLEM_TYPE)
    .send({
      type: 'about:blank',
      title: problem.title,
      status: problem.status,
      detail: problem.detail,
      instance: maskCredentials(request.url),
      requestId: request.id,
      ...problem.extra,
    });
}

export function installErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const problem = toProblem(err);
    if (problem.status >= 500) request.log.error({ err }, 'request failed');
    return sendProblem(request, reply, problem);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(request, reply, new Problem(404, 'Not Found', `no route for ${request.method} ${request.url.split('?')[0]}`)),
  );
}
