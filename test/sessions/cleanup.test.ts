// The session-cleanup job: retention per tenant (delete or anonymize after ttlSeconds) and
// marking lapsed sessions as expired. The job runs every second here; the tests wait for it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewSession } from '../../src/sessions/service.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(() => svc.stop());

const sessions = () => svc.running.services.sessions;

/** Runs the scheduled jobs now, again every 100 ms, until `check` holds. */
async function eventually<T>(check: () => Promise<T | undefined | false>, timeoutMs = 8000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await svc.running.services.scheduler.runNow();
    const result = await check();
    if (result) return result;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const row = (id: string) => svc.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

/** A session with personal data, a log entry and a handle, created `age` seconds ago. */
async function oldSession(tenantId: string, age: number, input: Partial<NewSession> = {}) {
  const session = await sessions().create({
    tenantId,
    kind: 'issuance',
    clientId: null,
    lifetimeSeconds: 600,
    public: {
      flow: 'pre_authorized_code',
      responseType: 'uri',
      credentialConfigurationIds: ['pid'],
      useDcApi: false,
      offerUrl: 'openid-credential-offer://?credential_offer_uri=https%3A%2F%2Fissuer.example%2Foffer%2Fabc',
      redirectUri: 'https://rp.example/done?user=erika',
      notifications: [{ notificationId: 'n-1', event: 'credential_accepted', receivedAt: '2026-01-01T00:00:00.000Z' }],
    },
    private: { credentialPayload: { given_name: 'Erika' } },
    ...input,
  });
  await sessions().update(tenantId, session.id, { status: 'completed', consumed: true });
  await sessions().log(session.id, 'info', 'credential issued', { format: 'dc+sd-jwt' });
  await sessions().addHandle(session.id, 'pre-authorized_code', `code-${session.id}`, '2999-01-01T00:00:00.000Z');
  await svc.db
    .updateTable('sessions')
    .set({ created_at: ago(age) })
    .where('id', '=', session.id)
    .execute();
  return (await row(session.id))!;
}

describe('retention', () => {
  it('deletes sessions older than ttlSeconds with everything they own in mode full, and keeps younger ones', async () => {
    const { token } = await svc.tenant('full-mode');
    expect((await svc.call('PUT', '/api/session-config', { token, body: { ttlSeconds: 60, cleanupMode: 'full' } })).status).toBe(200);
    const old = await oldSession('full-mode', 120);
    const young = await oldSession('full-mode', 30);

    await eventually(async () => (await row(old.id)) === undefined);
    expect(await svc.db.selectFrom('session_logs').selectAll().where('session_id', '=', old.id).execute()).toEqual([]);
    expect(await svc.db.selectFrom('session_handles').selectAll().where('session_id', '=', old.id).execute()).toEqual([]);
    expect((await svc.call('GET', `/api/session/${old.id}`, { token })).status).toBe(404);
    expect(await row(young.id)).toBeDefined();
  });

  it('anonymizes them in mode anonymize: metadata stays, personal data and handles go, logs stay', async () => {
    const { token } = await svc.tenant('anon-mode');
    await svc.call('PUT', '/api/session-config', { token, body: { ttlSeconds: 60, cleanupMode: 'anonymize' } });
    const old = await oldSession('anon-mode', 120);
    const young = await oldSession('anon-mode', 30);

    const after = await eventually(async () => {
      const current = await row(old.id);
      return current && (current.anonymized === 1 || current.anonymized === true) ? current : undefined;
    });
    expect(after.private_data).toBeNull();
    expect(JSON.parse(after.public_data)).toEqual({
      flow: 'pre_authorized_code',
      responseType: 'uri',
      credentialConfigurationIds: ['pid'],
      useDcApi: false,
    });
    // Metadata is untouched.
    for (const column of [
      'id',
      'tenant_id',
      'kind',
      'status',
      'consumed',
      'consumed_at',
      'created_at',
      'updated_at',
      'expires_at',
    ] as const) {
      expect(after[column], column).toEqual(old[column]);
    }
    expect(await svc.db.selectFrom('session_handles').selectAll().where('session_id', '=', old.id).execute()).toEqual([]);
    const logs = await svc.call('GET', `/api/session/${old.id}/logs`, { token });
    expect(logs.body.map((l) => l.message)).toEqual(['credential issued']);

    const reply = await svc.call('GET', `/api/session/${old.id}`, { token });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      status: 'completed',
      consumed: true,
      anonymized: true,
      notifications: [],
      credentialConfigurationIds: ['pid'],
    });
    expect(reply.text).not.toContain('Erika');
    expect(reply.body.offerUrl).toBeUndefined();
    expect(reply.body.redirectUri).toBeUndefined();

    const youngRow = await row(young.id);
    expect(youngRow?.private_data).not.toBeNull();
    expect(Number(youngRow?.anonymized)).toBe(0);
  });

  it('uses the global defaults for a tenant without configuration (SESSION_TTL one day, mode full)', async () => {
    await svc.tenant('defaults');
    const hourOld = await oldSession('defaults', 3600);
    const twoDaysOld = await oldSession('defaults', 2 * 86400);
    await eventually(async () => (await row(twoDaysOld.id)) === undefined);
    expect(await row(hourOld.id)).toBeDefined();
  });
});

describe('expiry', () => {
  it('marks open sessions past their expiry as expired, and leaves finished ones alone', async () => {
    const { token } = await svc.tenant('expiry');
    const open = await sessions().create({ tenantId: 'expiry', kind: 'presentation', clientId: null, lifetimeSeconds: 1 });
    await sessions().update('expiry', open.id, { status: 'fetched' });
    const done = await sessions().create({ tenantId: 'expiry', kind: 'presentation', clientId: null, lifetimeSeconds: 1 });
    await sessions().update('expiry', done.id, { status: 'completed' });
    const events: any[] = [];
    const unsubscribe = sessions().subscribe(open.id, (event) => events.push(event));
    svc.clock.advance(1_000);

    const expired = await eventually(async () => {
      const current = await row(open.id);
      return current?.status === 'expired' ? current : undefined;
    });
    expect(Date.parse(expired.updated_at)).toBeGreaterThan(Date.parse(open.updatedAt));
    // Subscribers (event streams, on every instance) hear of it.
    await eventually(async () => events.length > 0);
    unsubscribe();
    expect(events).toEqual([
      {
        sessionId: open.id,
        tenantId: 'expiry',
        status: 'expired',
        previousStatus: 'fetched',
        consumed: false,
        errorReason: null,
        updatedAt: expired.updated_at,
      },
    ]);
    expect((await row(done.id))?.status).toBe('completed');
    expect((await svc.call('GET', `/api/session?status=expired`, { token })).body.items.map((s) => s.id)).toEqual([open.id]);
  });
});
