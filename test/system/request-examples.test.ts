// Every request body of the management API has an example in the OpenAPI document (what the API
// explorer's "Try it out" starts with), and each example, sent as it stands to a running service in
// the order a new tenant would make its objects, is answered 2xx. Path parameters name the objects
// the examples before made; ids the service generates (a user's, a status list's, a session's) are
// taken from its answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_TENANT_ROLES, startService, type TestService } from '../support/service.js';

type Operation = { requestBody?: { content: Record<string, { example?: unknown }> } };
let svc: TestService;
let paths: Record<string, Record<string, Operation>>;

beforeAll(async () => {
  svc = await startService();
  paths = (await svc.raw('GET', '/api/openapi.json')).body.paths;
}, 60_000);
afterAll(() => svc?.stop());

/**
 * Management operations whose example is not sent for its effect, why, and what the service answers
 * when it is sent in the tenant the examples made: the input checks pass, and the refusal is about
 * what the example would reach (a registrar, a server elsewhere, a wallet's transaction).
 */
const NOT_SENT: Record<string, { why: string; answer: number; detail?: RegExp }> = {
  'POST /api/verifier/config/issuer-metadata/resolve': { why: "fetches an issuer's metadata from elsewhere", answer: 502 },
  'POST /api/issuer/deferred/{transactionId}/complete': { why: 'completes a deferred issuance a wallet started', answer: 404 },
  'PUT /api/federation/subordinates/{id}': { why: 'replaces a subordinate by the id the service made for it', answer: 404 },
  'POST /api/verifier/result': { why: 'releases the result of a presentation a wallet answered through a redirect', answer: 404 },
  'POST /api/registrar/config': { why: 'logs in at the registrar it names', answer: 400, detail: /^body\.oidcUrl: no such host/ },
  'PATCH /api/registrar/config': { why: 'changes a registrar configuration', answer: 404 },
  'POST /api/registrar/access-certificate': { why: 'asks the registrar', answer: 409 },
  'POST /api/schema-metadata/publish': { why: 'submits to the registrar', answer: 404 },
  'POST /api/schema-metadata/sign': { why: 'submits to the registrar', answer: 404 },
  'POST /api/schema-metadata/publish-version': { why: 'submits to the registrar', answer: 404 },
  'POST /api/schema-metadata/sign-version': { why: 'submits to the registrar', answer: 404 },
  'PATCH /api/schema-metadata/{id}/versions/{version}/deprecation': { why: 'changes an entry at the registrar', answer: 404 },
  'PATCH /api/schema-metadata/{id}/versions/{version}': { why: 'changes an entry at the registrar', answer: 404 },
  'POST /api/verifier/config/schema-metadata/resolve': { why: 'fetches schema metadata from elsewhere', answer: 502 },
  'POST /api/verifier/config/schema-metadata/resolve-jwt': {
    why: 'needs schema metadata signed by a key a registrar certified',
    answer: 400,
    detail: /^body\.signedJwt: (?!typ)/,
  },
};
/** Operations under /api that are part of a wallet protocol, not of the management API: their bodies are protocol messages. */
const PROTOCOL = ['POST /api/issuers/{tenantId}/chained-as-vp/par', 'POST /api/issuers/{tenantId}/chained-as-vp/token'];

interface World {
  root: string;
  admin?: string;
  ids: Record<string, string>;
}
interface Step {
  operation: string;
  /** Whose token: the service client's, the tenant admin's, or none. */
  as: 'root' | 'admin' | 'none';
  params?: (world: World) => Record<string, string>;
  /** A value of the example that the service generates, taken from an earlier answer. */
  generated?: (example: Record<string, unknown>, world: World) => Record<string, unknown>;
  after?: (answer: Record<string, unknown>, world: World) => Promise<void>;
  /** An id the service generated, kept from the answer (its `field`) under the name `as`. */
  remember?: { as: string; field: string };
}

const STEPS: Step[] = [
  {
    operation: 'POST /api/tenant',
    as: 'root',
    after: async (answer, world) => {
      const client = answer.client as { clientId: string; secret: string };
      world.admin = await svc.token(client.clientId, client.secret);
    },
  },
  { operation: 'PATCH /api/tenant/{id}', as: 'root', params: () => ({ id: 'acme' }) },
  { operation: 'POST /api/client', as: 'admin' },
  { operation: 'PATCH /api/client/{id}', as: 'admin', params: () => ({ id: 'acme-offers' }) },
  { operation: 'POST /api/oauth2/token', as: 'none' },
  { operation: 'POST /api/user', as: 'admin', remember: { as: 'user', field: 'id' } },
  { operation: 'PATCH /api/user/{id}', as: 'admin', params: (world) => ({ id: world.ids.user as string }) },
  { operation: 'POST /api/key-chain', as: 'admin' },
  { operation: 'POST /api/key-chain/import', as: 'admin' },
  { operation: 'PATCH /api/key-chain/{id}', as: 'admin', params: () => ({ id: 'signer' }) },
  { operation: 'POST /api/issuer/attribute-providers', as: 'admin' },
  { operation: 'PATCH /api/issuer/attribute-providers/{id}', as: 'admin', params: () => ({ id: 'crm' }) },
  { operation: 'POST /api/issuer/webhook-endpoints', as: 'admin' },
  { operation: 'PATCH /api/issuer/webhook-endpoints/{id}', as: 'admin', params: () => ({ id: 'crm' }) },
  { operation: 'POST /api/issuer/credentials', as: 'admin' },
  { operation: 'PATCH /api/issuer/credentials/{id}', as: 'admin', params: () => ({ id: 'pid' }) },
  { operation: 'POST /api/verifier/config', as: 'admin' },
  { operation: 'PATCH /api/verifier/config/{id}', as: 'admin', params: () => ({ id: 'adult' }) },
  { operation: 'POST /api/trust-list', as: 'admin' },
  { operation: 'PUT /api/trust-list/{id}', as: 'admin', params: () => ({ id: 'issuers' }) },
  { operation: 'PUT /api/issuer/config', as: 'admin' },
  { operation: 'PUT /api/trust-config', as: 'admin' },
  { operation: 'POST /api/federation/subordinates', as: 'admin' },
  { operation: 'POST /api/federation/trust-mark-types', as: 'admin' },
  { operation: 'POST /api/federation/trust-marks', as: 'admin' },
  { operation: 'PUT /api/session-config', as: 'admin' },
  { operation: 'PUT /api/status-list-config', as: 'admin' },
  { operation: 'POST /api/status-lists', as: 'admin', remember: { as: 'list', field: 'id' } },
  { operation: 'PATCH /api/status-lists/{listId}', as: 'admin', params: (world) => ({ listId: world.ids.list as string }) },
  { operation: 'POST /api/issuer/offer', as: 'admin', remember: { as: 'session', field: 'session' } },
  { operation: 'POST /api/verifier/offer', as: 'admin' },
  {
    operation: 'POST /api/session/revoke',
    as: 'admin',
    generated: (example, world) => ({ ...example, sessionId: world.ids.session }),
  },
];

/** Every operation of the document with a JSON request body, as `METHOD /path`. */
function operationsWithBody(): string[] {
  return Object.entries(paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => operation.requestBody?.content['application/json'])
      .map(([method]) => `${method.toUpperCase()} ${path}`),
  );
}

const exampleOf = (operation: string) => {
  const [method, path] = operation.split(' ') as [string, string];
  return paths[path]?.[method.toLowerCase()]?.requestBody?.content['application/json']?.example;
};

describe('request body examples', () => {
  it('exist for every body of the management API', () => {
    const management = operationsWithBody().filter((op) => op.split(' ')[1]?.startsWith('/api/') && !PROTOCOL.includes(op));
    const missing = management.filter((op) => exampleOf(op) === undefined);
    expect(missing).toEqual([]);
    // Every example is either sent below or named with the reason it is not.
    const covered = new Set([...STEPS.map((s) => s.operation), ...Object.keys(NOT_SENT)]);
    expect(management.filter((op) => !covered.has(op))).toEqual([]);
  });

  it('are answered 2xx when sent as they stand, in the order a new tenant makes its objects; the rest fail only on what they reach', async () => {
    const world: World = { root: await svc.rootToken(), ids: {} };
    for (const step of STEPS) {
      const [method, template] = step.operation.split(' ') as [string, string];
      const example = exampleOf(step.operation) as Record<string, unknown>;
      expect(example, `${step.operation} has an example`).toBeDefined();
      const params = step.params?.(world) ?? {};
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] as string));
      const token = step.as === 'root' ? world.root : step.as === 'admin' ? world.admin : undefined;
      // The method and path come from the document at run time: no static type to check them against.
      const reply = await svc.raw(method, path, { token, body: step.generated ? step.generated(example, world) : example });
      expect(reply.status, `${step.operation}: ${reply.text}`).toBeGreaterThanOrEqual(200);
      expect(reply.status, `${step.operation}: ${reply.text}`).toBeLessThan(300);
      await step.after?.(reply.body, world);
      if (step.remember) world.ids[step.remember.as] = reply.body[step.remember.field];
    }

    // The examples not sent for their effect pass the input checks: what refuses them is what they
    // would reach. The admin gets the registrar's role for them (the tenant example does not grant it).
    const roles = await svc.call('PATCH', '/api/client/acme-admin', { token: world.root, body: { roles: ALL_TENANT_ROLES } });
    expect(roles.status, roles.text).toBe(200);
    for (const [operation, expected] of Object.entries(NOT_SENT)) {
      const [method, template] = operation.split(' ') as [string, string];
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'version' ? '1.0.0' : 'acme-staff-badge'));
      // Method and path are read from the document at run time, so the call is untyped.
      const reply = await svc.raw(method, path, { token: world.admin, body: exampleOf(operation) });
      expect(reply.status, `${operation}: ${reply.text}`).toBe(expected.answer);
      if (expected.detail) expect(reply.body.detail, operation).toMatch(expected.detail);
    }
  }, 60_000);
});
