// The rate limits put on the routes of their classes (classes.ts): a route-level onRequest hook, so
// that the other routes pay nothing and a refused request is answered before its body is read.
// Every limited request is counted per address (with the tenant, so that one address's burst at one
// tenant takes nothing from its quota at another) and, where the route names a tenant, per tenant.
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler, RouteOptions } from 'fastify';
import { Problem } from '../http/problem.js';
import type { App } from '../http/types.js';
import { RATE_LIMIT_CLASSES, type Rate, type RateLimitClass, rateLimitKey } from './classes.js';
import type { RateLimiter, Verdict } from './limiter.js';

/** The limits of a class as the operator set them: the ceiling of what a tenant may choose. */
export interface ClassLimits {
  perAddress: Rate;
  perTenant?: Rate;
}

/** A tenant's own, lower request counts (issuer settings, rateLimits), in the operator's windows. */
export interface TenantLimits {
  perAddress?: number;
  perTenant?: number;
}

export interface RateLimitDeps {
  limiter: RateLimiter;
  limits: ReadonlyMap<RateLimitClass, ClassLimits>;
  /** The tenant's own limits of a class, if it lowered them (cached: no database read per request). */
  tenantLimits: (tenantId: string) => Promise<ReadonlyMap<RateLimitClass, TenantLimits>>;
}

const routeClasses = new Map<string, RateLimitClass>(
  Object.entries(RATE_LIMIT_CLASSES).flatMap(([name, spec]) => spec.routes.map((route) => [route, name as RateLimitClass] as const)),
);

export function installRateLimits(app: App, deps: RateLimitDeps) {
  app.addHook('onRoute', (route: RouteOptions) => {
    const name = routeClasses.get(route.url);
    if (!name) return;
    const limits = deps.limits.get(name);
    if (!limits) return;
    const hook = limitHook(name, limits, deps);
    route.onRequest = [...(route.onRequest ? [route.onRequest].flat() : []), hook];
    describeLimit(route, name, limits);
  });
}

/**
 * The OpenAPI description says the route is limited, naming the configuration keys rather than their
 * values (the committed typed client must not depend on where it was generated). A GET and its HEAD
 * route share one schema: said once.
 */
function describeLimit(route: RouteOptions, name: RateLimitClass, limits: ClassLimits) {
  const perTenant = limits.perTenant
    ? ` and per tenant (${rateLimitKey(name)}_PER_TENANT, lowered in the issuer settings' rateLimits)`
    : '';
  const rule =
    `Rate limited (class ${name}): per address (${rateLimitKey(name)})${perTenant}; ` +
    'beyond, 429 with Retry-After; every answer carries RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers).';
  route.schema ??= {};
  const schema = route.schema as { description?: string };
  if (!schema.description?.endsWith(rule)) schema.description = [schema.description, rule].filter(Boolean).join('\n\n');
}

function limitHook(name: RateLimitClass, operator: ClassLimits, deps: RateLimitDeps): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const tenantId = tenantOf(request);
    const own = tenantId === undefined ? undefined : (await deps.tenantLimits(tenantId)).get(name);
    const perAddress = lowered(operator.perAddress, own?.perAddress);
    const byAddress = await deps.limiter.admit(`${name}:a:${JSON.stringify([tenantId ?? null, request.ip])}`, perAddress);
    if (!byAddress.admitted) return refuse(reply, name, perAddress, byAddress, 'from this address');
    if (tenantId !== undefined && operator.perTenant) {
      const perTenant = lowered(operator.perTenant, own?.perTenant);
      const byTenant = await deps.limiter.admit(`${name}:t:${JSON.stringify(tenantId)}`, perTenant);
      if (!byTenant.admitted) return refuse(reply, name, perTenant, byTenant, 'to this tenant');
      // The header reports the limit nearest to being reached.
      if (byTenant.remaining < byAddress.remaining) return advertise(reply, name, perTenant, byTenant);
    }
    advertise(reply, name, perAddress, byAddress);
  };
}

function tenantOf(request: FastifyRequest): string | undefined {
  const params = request.params as Record<string, string | undefined> | undefined;
  return params && Object.hasOwn(params, 'tenantId') ? params.tenantId : undefined;
}

const lowered = (operator: Rate, own: number | undefined): Rate =>
  own === undefined || own >= operator.requests ? operator : { requests: own, windowSeconds: operator.windowSeconds };

/**
 * The RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers): the policy named
 * by its class, its quota (q) and window (w); the requests remaining (r) and the seconds until the
 * window ends (t). Sent on every answer of a limited route: two short strings, nothing read.
 */
function advertise(reply: FastifyReply, name: RateLimitClass, limit: Rate, verdict: Verdict) {
  reply.header('ratelimit-policy', `"${name}";q=${limit.requests};w=${limit.windowSeconds}`);
  reply.header('ratelimit', `"${name}";r=${verdict.remaining};t=${verdict.resetSeconds}`);
}

/** 429 with Retry-After; the error handler writes it in the route's shape (OAuth error JSON at these endpoints). */
function refuse(reply: FastifyReply, name: RateLimitClass, limit: Rate, verdict: Verdict, whose: string): never {
  advertise(reply, name, limit, verdict);
  throw new Problem(
    429,
    'Too Many Requests',
    `too many ${name.replace('_', ' ')} requests ${whose} (${limit.requests} per ${limit.windowSeconds} s); retry in ${verdict.resetSeconds} s`,
    {},
    { 'retry-after': String(verdict.resetSeconds) },
  );
}
