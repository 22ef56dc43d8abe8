// Authentication and authorisation of the management API. Every /api route declares its access
// rule in `config.access`; a route that forgets to is refused at start-up, not left open.
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import type { Principal, PrincipalResolver, RequestContext } from '../auth/principal.js';
import type { Role } from '../auth/roles.js';
import { InvalidTokenError, type TokenVerifier, type VerifiedToken } from '../auth/tokens.js';
import { isManagementPath } from './errors.js';
import { MANAGEMENT_SECURITY } from './openapi.js';
import { forbidden, Problem } from './problem.js';

export type Access =
  | { public: true }
  | {
      /** Any one of these roles grants access; an empty list admits every authenticated client. */
      roles: readonly Role[];
      /** 'required': the caller must belong to a tenant, and the handler works inside it. */
      tenant?: 'required';
      /**
       * The access token comes in the `token` query parameter instead of the Authorization header
       * (a browser's EventSource cannot set headers). It is verified exactly like a bearer token.
       */
      tokenInQuery?: true;
    };

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    principal?: Principal;
    /** Set with `principal`: lets a long-lived response (an event stream) end when its access does. */
    grant?: Grant;
  }
}

/** The access a request was given, for a response that outlives the moment it was checked. */
export interface Grant {
  /** When the access token expires, in milliseconds since the epoch. */
  expiresAt: number;
  /**
   * Judges the token again as a new request would be judged (expired, client deleted or re-created,
   * secret rotated, roles taken away): false once it would be refused. Rejects only when the judging
   * itself fails (the database out of reach, say).
   */
  stillHeld(): Promise<boolean>;
}

/** What deciding access reads: the token's verifier, the current client, and (exchanged tokens) the tenant. */
export interface AccessDeps {
  verifier: TokenVerifier;
  resolve: PrincipalResolver;
  /** Whether the tenant exists and is active: an administrator's exchanged token dies with its tenant. */
  tenantActive(tenantId: string): Promise<boolean>;
}

const REALM = 'svc';

export function unauthorized(detail: string, error?: 'invalid_token' | 'invalid_request') {
  const challenge = error ? `Bearer realm="${REALM}", error="${error}", error_description="${detail}"` : `Bearer realm="${REALM}"`;
  return new Problem(401, 'Unauthorized', detail, {}, { 'www-authenticate': challenge });
}

function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization;
  if (!header) throw unauthorized('an Authorization: Bearer access token is required');
  const match = /^Bearer\s+([A-Za-z0-9\-._~+/]+=*)$/i.exec(header);
  if (!match?.[1]) throw unauthorized('the Authorization header is not a Bearer token', 'invalid_request');
  return match[1];
}

function queryToken(request: FastifyRequest): string {
  const token = (request.query as Record<string, unknown> | undefined)?.token;
  if (token === undefined || token === '') throw unauthorized('an access token is required in the token query parameter');
  if (typeof token !== 'string' || !/^[A-Za-z0-9\-._~+/]+=*$/.test(token)) {
    throw unauthorized('the token query parameter is not one access token', 'invalid_request');
  }
  return token;
}

/** Text for the OpenAPI description of an operation, so the role matrix is documented where it applies. */
export function describeAccess(access: Access): string {
  if ('public' in access) return 'Public: no access token.';
  const roles = access.roles.length
    ? `Requires one of the roles: ${access.roles.map((r) => `\`${r}\``).join(', ')}.`
    : 'Any authenticated client.';
  const tenant = access.tenant === 'required' ? " Tenant-scoped: works inside the caller's tenant." : '';
  const query = access.tokenInQuery
    ? ' Token in query: the access token goes in the `token` query parameter; no Authorization header.'
    : '';
  return `${roles}${tenant}${query}`;
}

export function installAccessControl(app: FastifyInstance, deps: AccessDeps) {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!isManagementPath(route.url) || route.url === '/api' || route.url.startsWith('/api/static')) return;
    const access = route.config?.access;
    if (!access) throw new Error(`route ${route.method} ${route.url} declares no access rule`);
    route.schema ??= {};
    const schema = route.schema as { description?: string; security?: unknown };
    // A GET route and its automatic HEAD route share one schema: describe the access once.
    const rule = describeAccess(access);
    if (!schema.description?.endsWith(rule)) schema.description = [schema.description, rule].filter(Boolean).join('\n\n');
    if (!('public' in access)) schema.security = access.tokenInQuery ? [{ queryToken: [] }] : MANAGEMENT_SECURITY;
  });

  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.access;
    if (!access || 'public' in access) return;
    const { principal, expiresAt } = await authenticate(request, access, deps);
    authorize(principal, access);
    request.principal = principal;
    request.grant = { expiresAt, stillHeld: () => stillHeld(request, access, deps, principal) };
  });
}

async function stillHeld(
  request: FastifyRequest,
  access: Exclude<Access, { public: true }>,
  deps: AccessDeps,
  granted: Principal,
): Promise<boolean> {
  try {
    const { principal } = await authenticate(request, access, deps);
    authorize(principal, access);
    return principal.tenantId === granted.tenantId;
  } catch (err) {
    if (err instanceof Problem) return false;
    throw err;
  }
}

async function authenticate(request: FastifyRequest, access: { tokenInQuery?: true }, deps: AccessDeps) {
  const token = access.tokenInQuery ? queryToken(request) : bearerToken(request);
  let verified: VerifiedToken;
  try {
    verified = await deps.verifier.verify(token);
  } catch (err) {
    if (err instanceof InvalidTokenError) throw unauthorized(err.message, 'invalid_token');
    throw err;
  }
  if (verified.principal) return { principal: verified.principal, expiresAt: verified.expiresAt };
  // The client's current row is authoritative: deleting a client or changing its roles takes effect at once.
  const current = await deps.resolve(verified.clientId, verified.tokenGeneration);
  if (!current) throw unauthorized('the client of this access token no longer exists', 'invalid_token');
  // A client re-created under the same id, or given a new secret, is not the one the token was issued to.
  if (current.tokenGeneration !== verified.tokenGeneration) {
    throw unauthorized('the access token was issued before its client was re-created or its secret replaced', 'invalid_token');
  }
  if (verified.actingIn)
    return { principal: await actingPrincipal(current.principal, verified.actingIn, deps), expiresAt: verified.expiresAt };
  return { principal: current.principal, expiresAt: verified.expiresAt };
}

/**
 * A service administrator in a tenant, by an exchanged token: honoured while the administrator
 * still manages tenants (its own token's checks above held) and the tenant is still there.
 */
async function actingPrincipal(admin: Principal, actingIn: { tenantId: string; roles: Role[] }, deps: AccessDeps): Promise<Principal> {
  if (admin.tenantId !== null || !admin.roles.includes('tenants:manage')) {
    throw unauthorized('the administrator of this exchanged access token no longer manages tenants', 'invalid_token');
  }
  if (!(await deps.tenantActive(actingIn.tenantId))) {
    throw unauthorized(`the tenant '${actingIn.tenantId}' of this access token no longer exists or is not active`, 'invalid_token');
  }
  return { clientId: admin.clientId, tenantId: actingIn.tenantId, roles: actingIn.roles, actingAdmin: admin.clientId };
}

function authorize(principal: Principal, access: Exclude<Access, { public: true }>) {
  // Checked before the roles: a service client lacks every tenant role, and "requires the role
  // issuance:manage" would send its user looking for a role it can never be given.
  if (access.tenant === 'required' && !principal.tenantId) {
    throw forbidden(
      'this is a tenant operation: use a token of a client of the tenant (this client belongs to no tenant; it manages tenants and their clients)',
    );
  }
  if (access.roles.length && !access.roles.some((role) => principal.roles.includes(role))) {
    throw forbidden(`this operation requires one of the roles ${access.roles.join(', ')}`);
  }
}

export function contextOf(request: FastifyRequest): RequestContext {
  if (!request.principal) throw new Error('contextOf called on a route without authentication');
  return { principal: request.principal, requestId: request.id };
}

/** The caller's tenant on a route declared with `tenant: 'required'`. */
export function tenantOf(request: FastifyRequest): string {
  const tenantId = request.principal?.tenantId;
  if (!tenantId) throw new Error('tenantOf called on a route that does not require a tenant');
  return tenantId;
}
