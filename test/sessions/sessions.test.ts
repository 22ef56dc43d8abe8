// The session management API: listing with paging, sorting and filters, reading, deleting, logs,
// tenant isolation, and what of a session's data reaches a caller (and the disk).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewSession } from '../../src/sessions/service.js';
import { fieldsOf, problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let acme: string;
let other: string;
beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  other = (await svc.tenant('other')).token;
});
afterAll(() => svc.stop());

const sessions = () => svc.running.services.sessions;
const create = (input: Partial<NewSession> = {}) =>
  sessions().create({ tenantId: 'acme', kind: 'issuance', clientId: 'acme-admin', lifetimeSeconds: 600, ...input });

describe('listing', () => {
  const ids: Record<string, string> = {};
  let token: string;
  beforeAll(async () => {
    // Seven sessions in a tenant of their own, with known times, kinds and statuses.
    token = (await svc.tenant('lister')).token;
    const plan = [
      ['a', 'issuance', 'active', '2030-01-01T00:00:01.000Z', '2030-01-02T00:00:07.000Z', '2999-01-01T00:00:03.000Z'],
      ['b', 'presentation', 'completed', '2030-01-01T00:00:02.000Z', '2030-01-02T00:00:06.000Z', '2999-01-01T00:00:01.000Z'],
      ['c', 'issuance', 'fetched', '2030-01-01T00:00:03.000Z', '2030-01-02T00:00:05.000Z', '2999-01-01T00:00:07.000Z'],
      ['d', 'presentation', 'failed', '2030-01-01T00:00:04.000Z', '2030-01-02T00:00:04.000Z', '2999-01-01T00:00:02.000Z'],
      ['e', 'issuance', 'completed', '2030-01-01T00:00:05.000Z', '2030-01-02T00:00:03.000Z', '2999-01-01T00:00:06.000Z'],
      // Still active in its row, but past its expiry: readers see it expired.
      ['f', 'presentation', 'active', '2030-01-01T00:00:06.000Z', '2030-01-02T00:00:02.000Z', '2000-01-01T00:00:00.000Z'],
      ['g', 'issuance', 'expired', '2030-01-01T00:00:07.000Z', '2030-01-02T00:00:01.000Z', '2000-01-01T00:00:01.000Z'],
    ] as const;
    for (const [name, kind, status, created, updated, expires] of plan) {
      const session = await sessions().create({ tenantId: 'lister', kind, clientId: null, lifetimeSeconds: 600 });
      await svc.db
        .updateTable('sessions')
        .set({ status, created_at: created, updated_at: updated, expires_at: expires })
        .where('id', '=', session.id)
        .execute();
      ids[name] = session.id;
    }
  });

  const list = async (query = '') => {
    const reply = await svc.raw('GET', `/api/session${query}`, { token });
    expect(reply.status, reply.text).toBe(200);
    return reply.body;
  };
  const names = (page: any) => page.items.map((s: any) => Object.entries(ids).find(([, id]) => id === s.id)?.[0]);

  it('pages newest first by default, 25 to a page, with the page numbers', async () => {
    const page = await list();
    expect(page).toMatchObject({ total: 7, page: 1, pageSize: 25, totalPages: 1 });
    expect(names(page)).toEqual(['g', 'f', 'e', 'd', 'c', 'b', 'a']);
  });

  it('returns the requested page and the count of pages', async () => {
    const first = await list('?pageSize=3');
    expect(first).toMatchObject({ total: 7, page: 1, pageSize: 3, totalPages: 3 });
    expect(names(first)).toEqual(['g', 'f', 'e']);
    expect(names(await list('?pageSize=3&page=2'))).toEqual(['d', 'c', 'b']);
    expect(names(await list('?pageSize=3&page=3'))).toEqual(['a']);
    const beyond = await list('?pageSize=3&page=4');
    expect(beyond).toMatchObject({ items: [], total: 7, page: 4, totalPages: 3 });
  });

  it('sorts by each documented key in both directions', async () => {
    expect(names(await list('?sortBy=createdAt&sortOrder=asc'))).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect(names(await list('?sortBy=updatedAt&sortOrder=asc'))).toEqual(['g', 'f', 'e', 'd', 'c', 'b', 'a']);
    expect(names(await list('?sortBy=updatedAt'))).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect(names(await list('?sortBy=expiresAt&sortOrder=desc'))).toEqual(['c', 'e', 'a', 'd', 'b', 'g', 'f']);
    // Sorted by the status readers see: f is past its expiry, so it sorts with the expired ones.
    const byStatus = await list('?sortBy=status&sortOrder=asc');
    expect(byStatus.items.map((s: any) => s.status)).toEqual([
      'active',
      'completed',
      'completed',
      'expired',
      'expired',
      'failed',
      'fetched',
    ]);
    const down = await list('?sortBy=status&sortOrder=desc');
    expect(down.items.map((s: any) => s.status)).toEqual(['fetched', 'failed', 'expired', 'expired', 'completed', 'completed', 'active']);
  });

  it('filters by status as readers see it, and by type', async () => {
    expect(names(await list('?status=completed'))).toEqual(['e', 'b']);
    expect(names(await list('?status=active'))).toEqual(['a']);
    expect(names(await list('?status=expired'))).toEqual(['g', 'f']);
    expect((await list('?status=expired')).items.map((s: any) => s.status)).toEqual(['expired', 'expired']);
    expect(names(await list('?type=presentation'))).toEqual(['f', 'd', 'b']);
    expect((await list('?type=presentation')).items.map((s: any) => s.type)).toEqual(['presentation', 'presentation', 'presentation']);
    const both = await list('?type=issuance&status=completed&pageSize=1');
    expect(both).toMatchObject({ total: 1, totalPages: 1 });
    expect(names(both)).toEqual(['e']);
    expect(await list('?type=presentation&status=fetched')).toMatchObject({ items: [], total: 0, totalPages: 0 });
  });

  it.each([
    ['page=0', 'query.page'],
    ['pageSize=0', 'query.pageSize'],
    ['pageSize=101', 'query.pageSize'],
    ['page=two', 'query.page'],
    ['sortBy=name', 'query.sortBy'],
    ['sortOrder=up', 'query.sortOrder'],
    ['status=done', 'query.status'],
    ['type=verification', 'query.type'],
  ])('answers 400 naming the field for %s', async (query, field) => {
    const reply = await svc.call('GET', `/api/session?${query}`, { token });
    expect(reply.status).toBe(400);
    expect(reply.headers.get('content-type')).toContain('application/problem+json');
    expect(fieldsOf(reply)).toContain(field);
  });

  it('refuses unknown query parameters', async () => {
    const reply = await svc.call('GET', '/api/session?colour=red', { token });
    expect(reply.status).toBe(400);
    expect(problemOf(reply).detail).toContain('colour');
  });

  it("lists only the caller's tenant", async () => {
    const mine = await create();
    const reply = await svc.call('GET', '/api/session?pageSize=100', { token: other });
    expect(reply.body.items.map((s: any) => s.id)).not.toContain(mine.id);
    expect((await svc.call('GET', '/api/session?pageSize=100', { token: acme })).body.items.map((s: any) => s.id)).toContain(mine.id);
  });
});

describe('one session', () => {
  it('has the spec fields, with the tenant, defaults, public metadata and decrypted personal data', async () => {
    const session = await create({
      public: { offerUrl: 'openid-credential-offer://?credential_offer_uri=x', credentialConfigurationIds: ['pid'], useDcApi: true },
      private: { credentialPayload: { given_name: 'Erika' }, credentials: [{ format: 'dc+sd-jwt' }] },
    });
    const reply = await svc.call('GET', `/api/session/${session.id}`, { token: acme });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      id: session.id,
      type: 'issuance',
      status: 'active',
      createdAt: session.createdAt,
      updatedAt: session.updatedAt,
      expiresAt: session.expiresAt,
      useDcApi: true,
      tenantId: 'acme',
      tenant: { id: 'acme', name: 'Tenant acme', description: null, status: 'active' },
      notifications: [],
      txCodeFailedAttempts: 0,
      consumed: false,
      consumedAt: null,
      anonymized: false,
      offerUrl: 'openid-credential-offer://?credential_offer_uri=x',
      credentialConfigurationIds: ['pid'],
      credentialPayload: { given_name: 'Erika' },
      credentials: [{ format: 'dc+sd-jwt' }],
    });
  });

  it('follows consumption, failures and errors', async () => {
    const session = await create({ kind: 'presentation', public: { notifications: [{ event: 'credential_accepted' }] } });
    await sessions().countTxCodeFailure('acme', session.id, 5);
    await sessions().update('acme', session.id, { consumed: true });
    await sessions().update('acme', session.id, { status: 'failed', errorReason: 'the wallet declined' });
    const reply = await svc.call('GET', `/api/session/${session.id}`, { token: acme });
    expect(reply.body).toMatchObject({
      type: 'presentation',
      status: 'failed',
      errorReason: 'the wallet declined',
      consumed: true,
      consumedAt: expect.any(String),
      txCodeFailedAttempts: 1,
      useDcApi: false,
      notifications: [{ event: 'credential_accepted' }],
    });
  });

  it('never shows secrets a flow keeps with the session, nor fields of the wrong type', async () => {
    const session = await create({
      public: {
        walletNonce: 'SECRET-wallet-nonce',
        vp_nonce: 'SECRET-vp-nonce',
        responseCode: 'SECRET-response-code',
        parsedWebhook: { url: 'https://hook.example', auth: { type: 'apiKey', config: { value: 'SECRET-webhook-key' } } },
        offerUrl: 42,
      },
      private: {
        preAuthorizedCode: 'SECRET-pre-auth',
        txCode: 'SECRET-tx-code',
        authorization_code: 'SECRET-auth-code',
        refresh_token: 'SECRET-refresh',
        offer: {
          credential_issuer: 'https://issuer.example/issuers/acme',
          grants: {
            'urn:ietf:params:oauth:grant-type:pre-authorized_code': { 'pre-authorized_code': 'SECRET-in-offer', tx_code: { length: 6 } },
          },
        },
      },
    });
    const reply = await svc.call('GET', `/api/session/${session.id}`, { token: acme });
    expect(reply.status).toBe(200);
    expect(reply.text).not.toContain('SECRET');
    expect(reply.body.offerUrl).toBeUndefined();
    expect(reply.body.offer).toEqual({
      credential_issuer: 'https://issuer.example/issuers/acme',
      grants: { 'urn:ietf:params:oauth:grant-type:pre-authorized_code': { tx_code: { length: 6 } } },
    });
    const listed = await svc.call('GET', '/api/session?pageSize=100', { token: acme });
    expect(listed.text).not.toContain('SECRET');
  });

  it('keeps personal data encrypted at rest', async () => {
    const session = await create({ private: { credentialPayload: { family_name: 'Mustermann-7f3a' } } });
    const row = await svc.db.selectFrom('sessions').selectAll().where('id', '=', session.id).executeTakeFirstOrThrow();
    expect(row.private_data).toBeTruthy();
    expect(JSON.stringify(row)).not.toContain('Mustermann');
    const reply = await svc.call('GET', `/api/session/${session.id}`, { token: acme });
    expect(reply.body.credentialPayload).toEqual({ family_name: 'Mustermann-7f3a' });
  });

  it('answers 404 for an unknown id', async () => {
    const reply = await svc.call('GET', '/api/session/no-such-session', { token: acme });
    expect(reply.status).toBe(404);
    expect(reply.headers.get('content-type')).toContain('application/problem+json');
  });
});

describe('logs', () => {
  it('lists the entries oldest first, with their details', async () => {
    const session = await create();
    await sessions().log(session.id, 'info', 'offer created', { credentialConfigurationIds: ['pid'] });
    await sessions().log(session.id, 'warn', 'wrong transaction code');
    await sessions().log(session.id, 'error', 'credential request refused', { error: 'invalid_proof' });
    const reply = await svc.call('GET', `/api/session/${session.id}/logs`, { token: acme });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual([
      { level: 'info', message: 'offer created', details: { credentialConfigurationIds: ['pid'] }, createdAt: expect.any(String) },
      { level: 'warn', message: 'wrong transaction code', details: null, createdAt: expect.any(String) },
      { level: 'error', message: 'credential request refused', details: { error: 'invalid_proof' }, createdAt: expect.any(String) },
    ]);
  });

  it('is an empty list for a session without entries', async () => {
    const session = await create();
    expect((await svc.call('GET', `/api/session/${session.id}/logs`, { token: acme })).body).toEqual([]);
  });
});

describe('deleting', () => {
  it('deletes the session with its logs and handles, and audits it', async () => {
    const session = await create();
    await sessions().log(session.id, 'info', 'offer created');
    await sessions().addHandle(session.id, 'pre-authorized_code', 'code-to-delete', '2999-01-01T00:00:00.000Z');
    const reply = await svc.call('DELETE', `/api/session/${session.id}`, { token: acme });
    expect(reply.status).toBe(204);
    expect(reply.text).toBe('');
    expect((await svc.call('GET', `/api/session/${session.id}`, { token: acme })).status).toBe(404);
    expect(await svc.db.selectFrom('session_logs').selectAll().where('session_id', '=', session.id).execute()).toEqual([]);
    expect(await svc.db.selectFrom('session_handles').selectAll().where('session_id', '=', session.id).execute()).toEqual([]);
    expect(await sessions().findByHandle('pre-authorized_code', 'code-to-delete')).toBeUndefined();
    expect((await svc.call('DELETE', `/api/session/${session.id}`, { token: acme })).status).toBe(404);

    const audit = await svc.call('GET', '/api/admin/audit-logs', { token: acme });
    expect(audit.body.find((e: any) => e.actionType === 'session.deleted' && e.before?.id === session.id)).toMatchObject({
      tenantId: 'acme',
      actorId: 'acme-admin',
      before: { id: session.id, type: 'issuance', status: 'active' },
    });
  });

  it('needs a manage role: an offer client may read but not delete', async () => {
    const offerer = await svc.client(acme, 'acme-offerer', ['issuance:offer']);
    const session = await create();
    expect((await svc.call('GET', `/api/session/${session.id}`, { token: offerer })).status).toBe(200);
    expect((await svc.call('DELETE', `/api/session/${session.id}`, { token: offerer })).status).toBe(403);
    expect((await svc.call('GET', `/api/session/${session.id}`, { token: acme })).status).toBe(200);
  });
});

describe("another tenant's session", () => {
  it('is not found, for reading, its logs and deleting alike, and stays in place', async () => {
    const session = await create({ private: { credentialPayload: { given_name: 'Private' } } });
    await sessions().log(session.id, 'info', 'offer created');
    for (const [method, path] of [
      ['GET', `/api/session/${session.id}`],
      ['GET', `/api/session/${session.id}/logs`],
      ['DELETE', `/api/session/${session.id}`],
    ] as const) {
      const reply = await svc.call(method, path, { token: other });
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(problemOf(reply).detail).toBe(`session '${session.id}' does not exist`);
    }
    expect((await svc.call('GET', `/api/session/${session.id}`, { token: acme })).status).toBe(200);
  });
});
