// The tenant's session storage configuration: effective values over the global defaults,
// validation, partial updates, reset, audit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldsOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let acme: string;
beforeAll(async () => {
  svc = await startService({ SESSION_TTL: '7200', SESSION_CLEANUP_MODE: 'anonymize' });
  acme = (await svc.tenant('acme')).token;
});
afterAll(() => svc.stop());

const get = async (token = acme) => {
  const reply = await svc.call('GET', '/api/session-config', { token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
};
const put = (body: unknown, token = acme) => svc.raw('PUT', '/api/session-config', { token, body });

describe('session storage configuration', () => {
  it('starts with the global defaults, and says so', async () => {
    expect(await get()).toEqual({ ttlSeconds: 7200, cleanupMode: 'anonymize', usesGlobalDefault: { ttlSeconds: true, cleanupMode: true } });
  });

  it('sets fields one at a time, keeping the others, and answers the configuration in effect', async () => {
    let reply = await put({ ttlSeconds: 600 });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ttlSeconds: 600, cleanupMode: 'anonymize', usesGlobalDefault: { ttlSeconds: false, cleanupMode: true } });
    reply = await put({ cleanupMode: 'full' });
    expect(reply.body).toEqual({ ttlSeconds: 600, cleanupMode: 'full', usesGlobalDefault: { ttlSeconds: false, cleanupMode: false } });
    expect(await get()).toEqual(reply.body);
    // The tenant shows the same overrides.
    const tenant = await svc.call('GET', '/api/tenant/acme', { token: await svc.rootToken() });
    expect(tenant.body.sessionConfig).toEqual({ ttlSeconds: 600, cleanupMode: 'full' });
  });

  it('resets a field to the global default with null', async () => {
    await put({ ttlSeconds: 900, cleanupMode: 'full' });
    const reply = await put({ ttlSeconds: null });
    expect(reply.body).toEqual({ ttlSeconds: 7200, cleanupMode: 'full', usesGlobalDefault: { ttlSeconds: true, cleanupMode: false } });
    expect((await put({ cleanupMode: null })).body.usesGlobalDefault).toEqual({ ttlSeconds: true, cleanupMode: true });
  });

  it('resets everything with DELETE', async () => {
    await put({ ttlSeconds: 300, cleanupMode: 'full' });
    const reply = await svc.call('DELETE', '/api/session-config', { token: acme });
    expect(reply.status).toBe(204);
    expect(await get()).toEqual({ ttlSeconds: 7200, cleanupMode: 'anonymize', usesGlobalDefault: { ttlSeconds: true, cleanupMode: true } });
    const row = await svc.db.selectFrom('tenants').select('session_config').where('id', '=', 'acme').executeTakeFirstOrThrow();
    expect(row.session_config).toBeNull();
  });

  it.each([
    ['ttlSeconds below 60', { ttlSeconds: 59 }, 'body.ttlSeconds'],
    ['a fractional ttlSeconds', { ttlSeconds: 60.5 }, 'body.ttlSeconds'],
    ['ttlSeconds as text', { ttlSeconds: '600' }, 'body.ttlSeconds'],
    ['an unknown cleanupMode', { cleanupMode: 'shred' }, 'body.cleanupMode'],
    ['an unknown field', { retention: 5 }, 'body.retention'],
  ])('answers 400 naming the field for %s, and changes nothing', async (_, body, field) => {
    await put({ ttlSeconds: 120, cleanupMode: 'full' });
    const reply = await put(body);
    expect(reply.status).toBe(400);
    expect(reply.headers.get('content-type')).toContain('application/problem+json');
    expect(fieldsOf(reply)).toContain(field);
    expect(await get()).toMatchObject({ ttlSeconds: 120, cleanupMode: 'full' });
  });

  it('accepts exactly 60 seconds', async () => {
    expect((await put({ ttlSeconds: 60 })).body.ttlSeconds).toBe(60);
  });

  it('is per tenant', async () => {
    const other = (await svc.tenant('other')).token;
    await put({ ttlSeconds: 3600 });
    expect(await get(other)).toMatchObject({ ttlSeconds: 7200, usesGlobalDefault: { ttlSeconds: true } });
    await put({ ttlSeconds: 61 }, other);
    expect((await get()).ttlSeconds).toBe(3600);
  });

  it('records every change in the audit log of the tenant', async () => {
    await svc.call('DELETE', '/api/session-config', { token: acme });
    await put({ ttlSeconds: 240 });
    const entries = (await svc.call('GET', '/api/admin/audit-logs', { token: acme })).body.filter(
      (e: any) => e.actionType === 'session_config.updated',
    );
    expect(entries[0]).toMatchObject({
      tenantId: 'acme',
      actorId: 'acme-admin',
      changedFields: ['ttlSeconds'],
      before: { ttlSeconds: null, cleanupMode: null },
      after: { ttlSeconds: 240, cleanupMode: null },
    });
    expect(entries[1]).toMatchObject({ after: { ttlSeconds: null, cleanupMode: null } });
  });

  it('needs issuance:manage or presentation:manage', async () => {
    const verifier = await svc.client(acme, 'acme-verifier', ['presentation:manage']);
    const requester = await svc.client(acme, 'acme-requester', ['presentation:request']);
    expect((await svc.call('GET', '/api/session-config', { token: verifier })).status).toBe(200);
    expect((await svc.call('GET', '/api/session-config', { token: requester })).status).toBe(403);
    expect((await put({ ttlSeconds: 120 }, requester)).status).toBe(403);
    expect((await svc.call('DELETE', '/api/session-config', { token: requester })).status).toBe(403);
  });
});
