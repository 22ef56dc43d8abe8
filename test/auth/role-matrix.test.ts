// Every management operation, read from the published OpenAPI document, called by clients that
// lack its role: the documented role list and the enforced one must agree, for future endpoints too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLES, type Role } from '../../src/platform/auth/roles.js';
import { problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
const tokensByRole = new Map<Role, string>();
beforeAll(async () => {
  svc = await startService();
  const admin = await svc.tenant('matrix');
  for (const role of ROLES.filter((r) => r !== 'tenants:manage'))
    tokensByRole.set(role, await svc.client(admin.token, `only-${role.replace(':', '-')}`, [role]));
  tokensByRole.set('tenants:manage', await svc.rootToken());
});
afterAll(() => svc.stop());

interface Operation {
  method: string;
  path: string;
  roles: Role[] | 'any' | 'public';
  tenantScoped: boolean;
  /** The token goes in the `token` query parameter (event streams), not the Authorization header. */
  tokenInQuery: boolean;
}

async function operations(): Promise<Operation[]> {
  const doc = (await svc.raw('GET', '/api/openapi.json')).body;
  const found: Operation[] = [];
  for (const [path, methods] of Object.entries<Record<string, { description?: string; security?: unknown }>>(doc.paths)) {
    if (!path.startsWith('/api/')) continue;
    for (const [method, op] of Object.entries(methods)) {
      const description = op.description ?? '';
      const listed = /Requires one of the roles: (.*?)\./.exec(description)?.[1];
      const roles = description.includes('Public: no access token.')
        ? 'public'
        : listed
          ? ([...listed.matchAll(/`([^`]+)`/g)].map((m) => m[1]) as Role[])
          : description.includes('Any authenticated client.')
            ? 'any'
            : undefined;
      if (!roles) throw new Error(`${method.toUpperCase()} ${path} documents no access rule`);
      found.push({
        method: method.toUpperCase(),
        path: path.replace(/\{[^}]+\}/g, 'x'),
        roles,
        tenantScoped: description.includes('Tenant-scoped'),
        tokenInQuery: description.includes('Token in query'),
      });
    }
  }
  return found;
}

/** Calls an operation with `token` where the operation takes it. */
function callAs(op: Operation, token?: string) {
  const body = ['POST', 'PUT', 'PATCH'].includes(op.method) ? {} : undefined;
  if (op.tokenInQuery) return svc.raw(op.method, token === undefined ? op.path : `${op.path}?token=${token}`, { body });
  return svc.raw(op.method, op.path, { token, body });
}

describe('role matrix', () => {
  it('documents an access rule on every management operation', async () => {
    const ops = await operations();
    expect(ops.length).toBeGreaterThan(20);
    // The front-end configuration is read before anyone logs in (it says how to log in). The chained
    // authorization server lives under /api (where the spec puts its PAR endpoint) but is wallet-facing.
    expect(ops.filter((o) => o.roles === 'public').map((o) => o.path)).toEqual([
      '/api/frontend-config',
      '/api/oauth2/token',
      '/api/issuers/x/chained-as-vp/par',
      '/api/issuers/x/chained-as-vp/authorize',
      '/api/issuers/x/chained-as-vp/callback',
      '/api/issuers/x/chained-as-vp/token',
    ]);
  });

  it('answers 403 to a client lacking every role an operation accepts', async () => {
    const failures: string[] = [];
    for (const op of await operations()) {
      if (op.roles === 'public' || op.roles === 'any') continue;
      const accepted = op.roles;
      for (const [role, token] of tokensByRole) {
        if (accepted.includes(role)) continue;
        const reply = await callAs(op, token);
        if (reply.status !== 403) failures.push(`${op.method} ${op.path} as ${role}: ${reply.status}`);
        else expect(reply.headers.get('content-type')).toContain('application/problem+json');
      }
    }
    expect(failures).toEqual([]);
  });

  it('answers 403 on tenant-scoped operations to a client without a tenant', async () => {
    const root = await svc.rootToken();
    const scoped = (await operations()).filter((o) => o.tenantScoped);
    expect(scoped.length).toBeGreaterThan(0);
    for (const op of scoped) {
      const reply = await callAs(op, root);
      expect(reply.status, `${op.method} ${op.path}`).toBe(403);
      // The reason names the real fix (a tenant's client), not a role the service client cannot get.
      expect(problemOf(reply).detail, `${op.method} ${op.path}`).toContain(
        'this is a tenant operation: use a token of a client of the tenant',
      );
    }
  });

  it('answers 401 to every non-public operation without a token', async () => {
    for (const op of await operations()) {
      if (op.roles === 'public') continue;
      const reply = await callAs(op);
      expect(reply.status, `${op.method} ${op.path}`).toBe(401);
    }
  });

  it('takes the token only where the operation documents it: the query for event streams, else the header', async () => {
    const ops = await operations();
    expect(ops.filter((o) => o.tokenInQuery).map((o) => `${o.method} ${o.path}`)).toEqual(['GET /api/session/x/events']);
    const token = tokensByRole.get('issuance:manage') as string;
    for (const op of ops) {
      if (op.roles === 'public') continue;
      const misplaced = op.tokenInQuery
        ? await svc.raw(op.method, op.path, { token })
        : await svc.raw(op.method, `${op.path}?token=${token}`, { body: ['POST', 'PUT', 'PATCH'].includes(op.method) ? {} : undefined });
      expect(misplaced.status, `${op.method} ${op.path}`).toBe(401);
    }
  });

  it('documents the event stream with its own security scheme', async () => {
    const doc = (await svc.raw('GET', '/api/openapi.json')).body;
    expect(doc.components.securitySchemes.queryToken).toMatchObject({ type: 'apiKey', in: 'query', name: 'token' });
    expect(doc.paths['/api/session/{id}/events'].get.security).toEqual([{ queryToken: [] }]);
    expect(doc.paths['/api/session/{id}'].get.security).toEqual([{ oauth2: [] }, { bearer: [] }]);
    // Once per operation, though a GET shares its schema with the automatic HEAD route.
    expect(doc.paths['/api/session/{id}'].get.description.match(/Requires one of the roles/g)).toHaveLength(1);
  });
});
