// Malformed input to the operations that reach the identity provider's admin API in external mode
// (tenants, clients, users), against the fake Keycloak realm: none may answer 5xx, the provider's
// refusals included, and the realm must still work afterwards. test/system/fuzz.test.ts does the same
// for every operation in integrated mode.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExternalService, startExternalService } from '../support/external-service.js';
import { type FuzzRequest, Generator, pathCases, queryCases, type Schema } from '../support/fuzz-cases.js';

let ext: ExternalService;
let root: string;
let admin: string;
let userId: string;

beforeAll(async () => {
  ext = await startExternalService();
  root = await ext.rootToken();
  admin = (await ext.tenant('fuzz')).token;
  await ext.tenant('fuzz-target');
  await ext.client(admin, 'fuzz-client', ['issuance:offer']);
  const user = await ext.svc.raw('POST', '/api/user', { token: admin, body: { username: 'fuzz-user', roles: [] } });
  userId = user.body.id;
});
afterAll(() => ext?.stop());

const examples: Record<string, unknown> = {
  'POST /api/tenant': { id: 'fuzz-made', name: 'Fuzz made', roles: ['issuance:offer'] },
  'POST /api/client': { clientId: 'fuzz-made', tenantId: 'fuzz', roles: ['issuance:offer'] },
  'POST /api/user': { username: 'fuzz-made', roles: [] },
};

interface Operation {
  method: string;
  path: string;
  token: string;
  body?: Schema;
  query: string[];
  example: unknown;
}

async function operations(): Promise<{ operations: Operation[]; generator: Generator }> {
  const doc = (await ext.svc.raw('GET', '/api/openapi.json')).body;
  const generator = new Generator(doc.components?.schemas ?? {});
  const found: Operation[] = [];
  for (const [path, methods] of Object.entries<Record<string, any>>(doc.paths)) {
    if (!/^\/api\/(tenant|client|user)(\/|$)/.test(path)) continue;
    for (const [method, op] of Object.entries<any>(methods)) {
      const key = `${method.toUpperCase()} ${path}`;
      const body = op.requestBody?.content?.['application/json']?.schema as Schema | undefined;
      found.push({
        method: method.toUpperCase(),
        path,
        token: path.startsWith('/api/user') ? admin : root,
        body,
        query: (op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name),
        example: key in examples ? examples[key] : body ? generator.sample(body) : undefined,
      });
    }
  }
  return { operations: found, generator };
}

function casesFor(op: Operation, generator: Generator): FuzzRequest[] {
  const real: Record<string, string> = op.path.startsWith('/api/tenant')
    ? { id: 'fuzz-target' }
    : op.path.startsWith('/api/client')
      ? { id: 'fuzz-client' }
      : { id: userId };
  // A real id would let a DELETE remove what later operations are called on.
  const values = op.method === 'DELETE' ? {} : real;
  const filled = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? 'missing'));
  const cases = [...pathCases(op.path, values), ...queryCases(op.query).map((c) => ({ ...c, path: `${filled}${c.path}` }))];
  if (['POST', 'PUT', 'PATCH'].includes(op.method)) {
    cases.push(...generator.bodies(op.body ?? {}, op.example ?? {}, 1).map((c) => ({ ...c, path: filled })));
  }
  return cases;
}

describe('fuzzing the operations kept at the identity provider', () => {
  it('answers malformed input without a 5xx, and the clients and users still work', async () => {
    const { operations: ops, generator } = await operations();
    expect(ops.length).toBeGreaterThan(10);
    const failures: string[] = [];
    for (const op of ops) {
      for (const request of casesFor(op, generator)) {
        const headers = { ...request.headers, ...(!request.headers.authorization && { authorization: `Bearer ${op.token}` }) };
        const response = await fetch(`${ext.svc.url}${request.path}`, {
          method: op.method,
          headers,
          body: ['GET', 'HEAD', 'DELETE'].includes(op.method) ? undefined : request.body,
          signal: AbortSignal.timeout(20_000),
        });
        const text = await response.text();
        if (response.status >= 500) failures.push(`${op.method} ${op.path} [${request.name}]: ${response.status} ${text.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
    // Valid-looking bodies got past validation to the provider's admin API.
    expect(ext.op.realm?.calls.length).toBeGreaterThan(100);

    const made = await ext.client(admin, 'fuzz-after', ['issuance:offer']);
    expect((await ext.svc.call('GET', '/api/client', { token: made })).status).toBe(403);
    expect((await ext.svc.call('GET', `/api/user/${userId}`, { token: admin })).status).toBe(200);
  }, 120_000);
});
