import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startService({ OBSERVABILITY_URL: 'https://telemetry.example.com/v1' });
});
afterAll(() => svc.stop());

describe('service endpoints', () => {
  it('reports liveness and readiness', async () => {
    expect((await svc.call('GET', '/health')).body).toEqual({ status: 'ok' });
    const ready = await svc.call('GET', '/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok', checks: { database: 'ok' } });
  });

  it('reports the version from package.json to an authenticated client', async () => {
    const reply = await svc.call('GET', '/api/version', { token: await svc.rootToken() });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ name: 'svc', version: '5.0.0', apiVersion: '5.0' });
    expect((await svc.call('GET', '/api/version')).status).toBe(401);
  });

  it('returns the front-end configuration, without a token: observability, how to log in and the public URL', async () => {
    const reply = await svc.call('GET', '/api/frontend-config');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      observability: { enabled: true, url: 'https://telemetry.example.com/v1' },
      auth: { mode: 'integrated', tokenUrl: '/api/oauth2/token' },
      publicUrl: svc.url,
    });
  });

  it('publishes an OpenAPI 3.1 document that documents the roles of each operation', async () => {
    const reply = await svc.raw('GET', '/api/openapi.json');
    expect(reply.status).toBe(200);
    expect(reply.body.openapi).toBe('3.1.0');
    const createTenant = reply.body.paths['/api/tenant'].post;
    expect(createTenant.description).toContain('`tenants:manage`');
    expect(createTenant.security).toEqual([{ oauth2: [] }, { bearer: [] }]);
    expect(reply.body.paths['/api/oauth2/token'].post.security).toBeUndefined();
    expect(reply.body.components.schemas.Tenant).toBeDefined();
  });

  it('serves the interactive explorer at /api', async () => {
    const reply = await svc.raw('GET', '/api');
    expect(reply.status).toBe(200);
    expect(reply.text).toContain('swagger');
  });

  it('echoes a caller-supplied request id and makes one otherwise', async () => {
    const given = await svc.call('GET', '/health', { headers: { 'x-request-id': 'trace-123' } });
    expect(given.headers.get('x-request-id')).toBe('trace-123');
    const made = await svc.call('GET', '/health', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers unknown management paths with a problem document naming the request', async () => {
    const reply = await svc.raw('GET', '/api/nothing-here', { headers: { 'x-request-id': 'req-404' } });
    expect(reply.status).toBe(404);
    expect(reply.headers.get('content-type')).toContain('application/problem+json');
    expect(reply.body).toMatchObject({ status: 404, title: 'Not Found', requestId: 'req-404' });
  });

  it('answers unknown protocol paths in the OAuth error shape', async () => {
    const reply = await svc.raw('GET', '/issuers/none/nothing');
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ error: 'invalid_request' });
  });

  it('rejects malformed JSON with a 400 problem, not a 500', async () => {
    const reply = await svc.raw('POST', '/api/tenant', { token: await svc.rootToken(), body: '{"id": ', headers: {} });
    expect(reply.status).toBe(400);
    expect(reply.headers.get('content-type')).toContain('application/problem+json');
  });

  it('sends security headers', async () => {
    const reply = await svc.call('GET', '/health');
    expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
    expect(reply.headers.get('strict-transport-security')).toBeTruthy();
  });
});
