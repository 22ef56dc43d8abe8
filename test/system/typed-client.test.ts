// The typed client in clients/typescript: its committed files match the OpenAPI document the service
// serves (CI fails when a route changes without `npm run client:generate`), and it drives the real
// server with typed bodies, replies and problems.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSvcClient } from '../../clients/typescript/index.js';
import { clientFiles } from '../../scripts/client-files.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startService();
});
afterAll(() => svc.stop());

describe('typed client', () => {
  it('is current with the OpenAPI document the service serves (npm run client:generate)', async () => {
    const document = (await svc.raw('GET', '/api/openapi.json')).body;
    const files = await clientFiles(document);
    for (const [name, text] of Object.entries(files)) {
      const committed = readFileSync(new URL(`../../clients/typescript/${name}`, import.meta.url), 'utf8');
      expect(committed === text, `clients/typescript/${name} is out of date: run npm run client:generate`).toBe(true);
    }
  });

  it('creates and reads a tenant, and reports problems with their status, detail and fields', async () => {
    const token = await svc.rootToken();
    const client = createSvcClient({ baseUrl: `${svc.url}/`, token: () => token });

    const created = await client.POST('/api/tenant', { body: { id: 'typed', name: 'Typed', roles: ['issuance:manage'] } });
    expect(created.response.status).toBe(201);
    expect(created.data).toMatchObject({ id: 'typed', name: 'Typed', status: 'active' });
    const read = await client.GET('/api/tenant/{id}', { params: { path: { id: 'typed' } } });
    expect(read.data?.name).toBe('Typed');

    const invalid = await client.POST('/api/tenant', { body: { id: 'bad id!', name: '' } });
    expect(invalid.response.status).toBe(400);
    expect(invalid.data).toBeUndefined();
    expect(JSON.stringify(invalid.error)).toContain('body.id');

    const anonymous = createSvcClient({ baseUrl: svc.url });
    expect((await anonymous.GET('/api/tenant')).response.status).toBe(401);
  });
});
