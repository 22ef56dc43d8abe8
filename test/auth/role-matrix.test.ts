// Every management operation, read from the published OpenAPI document, called by clients that
// lack its role: the documented role list and the enforced one must agree, for future endpoints too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLES, type Role } from '../../src/platform/auth/roles.js';
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
}

async function operations(): Promise<Operation[]> {
  const doc = (await svc.call('GET', '/api/openapi.json')).body;
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
      });
    }
  }
  return found;
}

describe('role matrix', () => {
  it('documents an access rule on every management operation', async () => {
    const ops = await operations();
    expect(ops.length).toBeGreaterThan(20);
    expect(ops.filter((o) => o.roles === 'public').map((o) => o.path)).toEqual(['/api/oauth2/token']);
  });

  it('answers 403 to a client lacking every role an operation accepts', async () => {
    const failures: string[] = [];
    for (const op of await operations()) {
      if (op.roles === 'public' || op.roles === 'any') continue;
      const accepted = op.roles;
      for (const [role, token] of tokensByRole) {
        if (accepted.includes(role)) continue;
        const reply = await svc.call(op.method, op.path, { token, body: ['POST', 'PUT', 'PATCH'].includes(op.method) ? {} : undefined });
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
      const reply = await svc.call(op.method, op.path, {
        token: root,
        body: ['POST', 'PUT', 'PATCH'].includes(op.method) ? {} : undefined,
      });
      expect(reply.status, `${op.method} ${op.path}`).toBe(403);
    }
  });

  it('answers 401 to every non-public operation without a token', async () => {
    for (const op of await operations()) {
      if (op.roles === 'public') continue;
      const reply = await svc.call(op.method, op.path);
      expect(reply.status, `${op.method} ${op.path}`).toBe(401);
    }
  });
});
