// Limits on status list storage: the largest capacity (STATUS_MAX_CAPACITY) of a list and of a
// tenant's configuration, and the number of lists a tenant creates (STATUS_MAX_LISTS_PER_TENANT).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let root: string;

beforeAll(async () => {
  svc = await startService({ STATUS_MAX_CAPACITY: '50000', STATUS_MAX_LISTS_PER_TENANT: '3' });
  root = await svc.rootToken();
});
afterAll(() => svc.stop());

const lists = async (token: string) => (await svc.raw('GET', '/api/status-lists', { token })).body as { id: string }[];

function expectRefused(reply: { status: number; body: unknown }, field: string) {
  expect(reply.status).toBe(400);
  expect(problemOf(reply).errors).toEqual([{ field, message: 'must be at most 50000 (STATUS_MAX_CAPACITY)' }]);
}

describe('capacity', () => {
  it('of a list is at most STATUS_MAX_CAPACITY', async () => {
    const { token } = await svc.tenant('capacity');
    // The report: 100,000,000 entries of 8 bits, 100 MB in one row.
    expectRefused(await svc.call('POST', '/api/status-lists', { token, body: { capacity: 100_000_000, bits: 8 } }), 'capacity');
    expectRefused(await svc.call('POST', '/api/status-lists', { token, body: { capacity: 50_001 } }), 'capacity');
    expect(await lists(token)).toEqual([]);
    const largest = await svc.call('POST', '/api/status-lists', { token, body: { capacity: 50_000, bits: 8 } });
    expect(largest.status, largest.text).toBe(201);
    expect(largest.body.capacity).toBe(50_000);
  });

  it("of a tenant's configuration is at most STATUS_MAX_CAPACITY, however it is set", async () => {
    const { token } = await svc.tenant('capacity-config');
    expectRefused(await svc.call('PUT', '/api/status-list-config', { token, body: { capacity: 50_001 } }), 'capacity');
    const body = { id: 'capacity-new', name: 'New', statusListConfig: { capacity: 50_001 } };
    expectRefused(await svc.call('POST', '/api/tenant', { token: root, body }), 'statusListConfig.capacity');
    expect((await svc.call('GET', '/api/tenant/capacity-new', { token: root })).status).toBe(404);
    const patch = { statusListConfig: { capacity: 50_001 } };
    expectRefused(await svc.call('PATCH', '/api/tenant/capacity-config', { token: root, body: patch }), 'statusListConfig.capacity');
    expect((await svc.call('GET', '/api/status-list-config', { token })).body.capacity).toBe(10_000);

    const put = await svc.call('PUT', '/api/status-list-config', { token, body: { capacity: 50_000 } });
    expect(put.status, put.text).toBe(200);
    expect(put.body.capacity).toBe(50_000);
    // A capacity stored before the limit was lowered gives way to it.
    await svc.db
      .updateTable('tenants')
      .set({ status_list_config: JSON.stringify({ capacity: 80_000 }) })
      .where('id', '=', 'capacity-config')
      .execute();
    expect((await svc.call('GET', '/api/status-list-config', { token })).body.capacity).toBe(50_000);
    const created = await svc.call('POST', '/api/status-lists', { token, body: {} });
    expect(created.status, created.text).toBe(201);
    expect(created.body.capacity).toBe(50_000);
  });
});

describe('lists per tenant', () => {
  it('are created up to STATUS_MAX_LISTS_PER_TENANT (409 beyond), and a deleted one makes room', async () => {
    const { token } = await svc.tenant('count');
    const create = () => svc.call('POST', '/api/status-lists', { token, body: {} });
    for (let i = 0; i < 3; i++) expect((await create()).status).toBe(201);
    const refused = await create();
    expect(refused.status).toBe(409);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(problemOf(refused).detail).toContain('STATUS_MAX_LISTS_PER_TENANT');
    expect(await lists(token)).toHaveLength(3);
    // Another tenant has its own allowance.
    expect((await svc.call('POST', '/api/status-lists', { token: (await svc.tenant('count-other')).token, body: {} })).status).toBe(201);

    const [first] = await lists(token);
    expect((await svc.call('DELETE', `/api/status-lists/${first?.id}`, { token })).status).toBe(204);
    expect((await create()).status).toBe(201);
    expect((await create()).status).toBe(409);
  });

  it('do not stop issuance: a list opened because all are full is not refused, but counts', async () => {
    const { token } = await svc.tenant('rollover');
    expect((await svc.call('PUT', '/api/status-list-config', { token, body: { capacity: 100 } })).status).toBe(200);
    const entries = await svc.running.services.statusLists.allocate('rollover', { credentialConfigurationId: 'pid', count: 401 });
    expect(new Set(entries.map((e) => e.listId)).size).toBe(5);
    expect(await lists(token)).toHaveLength(5);
    expect((await svc.call('POST', '/api/status-lists', { token, body: {} })).status).toBe(409);
  });
});
