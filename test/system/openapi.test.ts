// The OpenAPI document as an integrator meets it in the explorer: "Authorize" with a client id and
// secret, the problem answers of each operation, described tags, wallet endpoints with their
// security, and request examples that the service accepts as they are.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let doc: any;
beforeAll(async () => {
  svc = await startService();
  doc = (await svc.raw('GET', '/api/openapi.json')).body;
});
afterAll(() => svc.stop());

type Operation = {
  security?: unknown[];
  parameters?: { in: string }[];
  requestBody?: any;
  responses: Record<string, any>;
  tags?: string[];
};
const operations = () =>
  Object.entries<Record<string, Operation>>(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method, op })),
  );

describe('OpenAPI document', () => {
  it('lets the explorer fetch a token with client credentials at the token endpoint', () => {
    expect(doc.components.securitySchemes.oauth2).toMatchObject({
      type: 'oauth2',
      flows: { clientCredentials: { tokenUrl: '/api/oauth2/token', scopes: {} } },
    });
    expect(doc.paths['/api/tenant'].post.security).toEqual([{ oauth2: [] }, { bearer: [] }]);
  });

  it('documents the problem answers of every protected management operation', () => {
    const missing: string[] = [];
    for (const { path, method, op } of operations()) {
      if (!path.startsWith('/api/') || !op.security?.length) continue;
      const expected = ['401', '403'];
      if (op.requestBody || op.parameters?.length) expected.push('400');
      if (op.parameters?.some((p) => p.in === 'path')) expected.push('404');
      if (['post', 'put', 'patch', 'delete'].includes(method)) expected.push('409');
      for (const status of expected) {
        const content = op.responses[status]?.content?.['application/problem+json'];
        if (!content) missing.push(`${method.toUpperCase()} ${path} ${status}`);
      }
    }
    expect(missing).toEqual([]);
    expect(doc.components.schemas.Problem.required).toEqual(['type', 'title', 'status', 'detail']);
  });

  it('describes every tag an operation uses', () => {
    const described = new Map<string, string>(doc.tags.map((t: { name: string; description: string }) => [t.name, t.description]));
    const used = new Set(operations().flatMap(({ op }) => op.tags ?? []));
    expect([...used].filter((tag) => !described.get(tag))).toEqual([]);
  });

  it("describes the wallet endpoints, and declares the wallet's access token where one is needed", () => {
    for (const { path, method, op } of operations()) {
      if (path.startsWith('/api') || !op.tags?.some((t) => t.startsWith('wallet:'))) continue;
      if (method === 'options') continue;
      const summary = `${method.toUpperCase()} ${path}`;
      expect((op as { summary?: string }).summary, summary).toBeTruthy();
    }
    for (const endpoint of ['credential', 'deferred-credential', 'notification']) {
      const op = doc.paths[`/issuers/{tenantId}/${endpoint}`].post;
      expect(op.security).toEqual([{ walletDpop: [] }, { walletAccessToken: [] }]);
      expect(op.description.length).toBeGreaterThan(40);
    }
    expect(doc.components.securitySchemes.walletDpop).toMatchObject({ type: 'http', scheme: 'DPoP' });
  });

  it('gives request examples that the service accepts as they are', async () => {
    // The explorer pre-fills a request body with its media type's example.
    const example = (path: string) => {
      const body = doc.paths[path].post.requestBody.content['application/json'].example;
      expect(body, path).toBeDefined();
      return body;
    };
    const tenant = example('/api/tenant');
    const created = await svc.raw('POST', '/api/tenant', { token: await svc.rootToken(), body: tenant });
    expect(created.status, created.text).toBe(201);
    const token = await svc.token(created.body.client.clientId, created.body.client.secret);
    for (const path of ['/api/issuer/credentials', '/api/issuer/offer', '/api/verifier/config', '/api/verifier/offer']) {
      const reply = await svc.raw('POST', path, { token, body: example(path) });
      expect(reply.status, `${path}: ${reply.text}`).toBeLessThan(300);
    }
  });
});
