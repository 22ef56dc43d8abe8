// Webhooks that are never lost: an event is written with the change that makes it, survives a
// receiver that is down and a restart of the service, is signed as Standard Webhooks asks (checked
// with the standardwebhooks package, independently of the service's own code), and is visible and
// retryable through the deliveries API, to the roles that manage its kind only.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine } from '../support/database.js';
import { freePort, startService, type TestService } from '../support/service.js';
import { fetchedOffer, issuingTenant, type Receiver, signedHeaders, startReceiver, webhookEndpoint } from './support.js';

// Retries a few milliseconds apart, and a fast poll, so that nothing here waits for the defaults.
const METRICS_TOKEN = 'webhook-metrics-token-0123456789abcdef';
const FAST = { WEBHOOK_RETRY_DELAYS_MS: '50,100', WEBHOOK_POLL_INTERVAL_MS: '100' };

type Delivery = {
  id: string;
  sessionId: string;
  type: string;
  endpoint: string;
  state: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
};

const deliveriesOf = async (svc: TestService, token: string, query: Record<string, string> = {}): Promise<Delivery[]> => {
  const reply = await svc.raw('GET', `/api/webhook-deliveries?${new URLSearchParams(query)}`, { token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.items;
};

describe('a receiver down across a restart of the service', () => {
  it('gets the event once it is back, from the restarted service, with the same webhook-id and a valid signature', async () => {
    const port = await freePort();
    const first = await startService(FAST);
    let second: TestService | undefined;
    let receiver: Receiver | undefined;
    try {
      const admin = await issuingTenant(first, 'acme');
      const { token } = admin;
      const secret = await webhookEndpoint(first, token, 'crm', `http://127.0.0.1:${port}/hook`);
      const sessionId = await fetchedOffer(first, token, 'acme', 'crm');
      // Nothing listens yet: the attempts fail and the delivery stays pending.
      await expect
        .poll(async () => (await deliveriesOf(first, token, { sessionId }))[0]?.attempts ?? 0, { timeout: 5000 })
        .toBeGreaterThan(0);
      const [before] = await deliveriesOf(first, token, { sessionId });
      expect(before).toMatchObject({ type: 'issuance.status', endpoint: 'crm', state: 'pending', lastStatus: null, deliveredAt: null });
      expect(before?.lastError).toEqual(expect.any(String));
      expect(before?.id).toMatch(/^msg_/);

      await first.running.close();
      second = await startService(FAST, { besides: first });
      receiver = await startReceiver(port);
      const back = receiver;
      await expect.poll(() => back.hits.length, { timeout: 10_000 }).toBeGreaterThan(0);
      const [hit] = receiver.hits;
      if (!hit) throw new Error('no request');
      expect(hit.headers['webhook-id']).toBe(before?.id);
      expect(hit.headers.authorization).toBe('Bearer hook');
      const payload = new Webhook(secret).verify(hit.body, signedHeaders(hit));
      expect(payload).toMatchObject({ type: 'issuance.status', sessionId, tenantId: 'acme', status: 'fetched', previousStatus: 'active' });
      const secondToken = await second.token(admin.clientId, admin.secret);
      await expect
        .poll(async () => (await deliveriesOf(second as TestService, secondToken, { sessionId }))[0]?.state, { timeout: 5000 })
        .toBe('delivered');
      const [after] = await deliveriesOf(second, secondToken, { sessionId });
      expect(after).toMatchObject({ id: before?.id, lastStatus: 204, lastError: null, nextAttemptAt: null });
      expect(after?.attempts).toBeGreaterThan(before?.attempts ?? 0);
    } finally {
      await receiver?.close();
      await second?.running.close();
      await first.stop();
    }
  });
});

describe('signing secrets', () => {
  let svc: TestService;
  let receiver: Receiver;
  let token: string;
  beforeAll(async () => {
    svc = await startService(FAST);
    receiver = await startReceiver();
    token = (await issuingTenant(svc, 'acme')).token;
  });
  afterAll(async () => {
    await receiver.close();
    await svc.stop();
  });

  const hitsOf = (sessionId: string) => receiver.hits.filter((hit) => JSON.parse(hit.body).sessionId === sessionId);

  it('are answered at creation and on rotation only; both sign during the grace period, the new one alone after it', async () => {
    const first = await webhookEndpoint(svc, token, 'rotating', receiver.url);
    const shown = await svc.call('GET', `/api/issuer/webhook-endpoints/${'rotating'}`, { token });
    expect(JSON.stringify(shown.body)).not.toContain('whsec_');
    const listed = await svc.call('GET', '/api/issuer/webhook-endpoints', { token });
    expect(JSON.stringify(listed.body)).not.toContain('whsec_');

    const rotated = await svc.call('POST', `/api/issuer/webhook-endpoints/${'rotating'}/rotate-secret`, { token });
    expect(rotated.status, rotated.text).toBe(200);
    const second = rotated.body.signingSecret;
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);

    const during = await fetchedOffer(svc, token, 'acme', 'rotating');
    await expect.poll(() => hitsOf(during).length, { timeout: 5000 }).toBe(1);
    const [duringHit] = hitsOf(during);
    if (!duringHit) throw new Error('no request');
    expect(String(duringHit.headers['webhook-signature']).split(' ')).toHaveLength(2);
    // Each secret alone verifies: a receiver that knows only the old one or only the new one accepts it.
    expect(new Webhook(first).verify(duringHit.body, signedHeaders(duringHit))).toMatchObject({ sessionId: during });
    expect(new Webhook(second).verify(duringHit.body, signedHeaders(duringHit))).toMatchObject({ sessionId: during });

    svc.clock.advance(86_401_000);
    const after = await fetchedOffer(svc, token, 'acme', 'rotating');
    await expect.poll(() => hitsOf(after).length, { timeout: 5000 }).toBe(1);
    const [afterHit] = hitsOf(after);
    if (!afterHit) throw new Error('no request');
    expect(String(afterHit.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(new Webhook(second).verify(afterHit.body, signedHeaders(afterHit))).toMatchObject({ sessionId: after });
    expect(() => new Webhook(first).verify(afterHit.body, signedHeaders(afterHit))).toThrow();
  });

  it('an endpoint stored before signing existed is sent unsigned, until rotate-secret gives it a secret', async () => {
    await webhookEndpoint(svc, token, 'legacy', receiver.url);
    await svc.db.deleteFrom('webhook_secrets').where('owner', '=', 'endpoint:legacy').execute();
    const unsigned = await fetchedOffer(svc, token, 'acme', 'legacy');
    await expect.poll(() => hitsOf(unsigned).length, { timeout: 5000 }).toBe(1);
    expect(hitsOf(unsigned)[0]?.headers['webhook-signature']).toBeUndefined();
    expect(hitsOf(unsigned)[0]?.headers['webhook-id']).toMatch(/^msg_/);

    const rotated = await svc.call('POST', `/api/issuer/webhook-endpoints/${'legacy'}/rotate-secret`, { token });
    expect(rotated.status).toBe(200);
    const signed = await fetchedOffer(svc, token, 'acme', 'legacy');
    await expect.poll(() => hitsOf(signed).length, { timeout: 5000 }).toBe(1);
    const [hit] = hitsOf(signed);
    if (!hit) throw new Error('no request');
    expect(new Webhook(rotated.body.signingSecret).verify(hit.body, signedHeaders(hit))).toMatchObject({ sessionId: signed });
  });

  it("rotate-secret: 404 for an unknown endpoint or another tenant's, 403 without issuance:manage", async () => {
    const other = await svc.tenant('other');
    const path = (id: string) => `/api/issuer/webhook-endpoints/${id}/rotate-secret` as const;
    expect((await svc.call('POST', path('missing'), { token })).status).toBe(404);
    expect((await svc.call('POST', path('rotating'), { token: other.token })).status).toBe(404);
    const offerOnly = await svc.client(token, 'offer-only', ['issuance:offer']);
    expect((await svc.call('POST', path('rotating'), { token: offerOnly })).status).toBe(403);
  });
});

describe('the deliveries API', () => {
  let svc: TestService;
  let receiver: Receiver;
  let token: string;
  beforeAll(async () => {
    svc = await startService({ ...FAST, WEBHOOK_RETRY_HORIZON_SECONDS: '1', METRICS_TOKEN });
    receiver = await startReceiver();
    token = (await issuingTenant(svc, 'acme')).token;
    await webhookEndpoint(svc, token, 'crm', receiver.url);
    await webhookEndpoint(svc, token, 'erp', receiver.url);
  });
  afterAll(async () => {
    await receiver.close();
    await svc.stop();
  });

  it('lists by session, state and endpoint; a retry (202) sends a failed delivery again with its webhook-id', async () => {
    receiver.answer = 500;
    const failing = await fetchedOffer(svc, token, 'acme', 'crm');
    await expect.poll(async () => (await deliveriesOf(svc, token, { sessionId: failing }))[0]?.state, { timeout: 10_000 }).toBe('failed');
    const [failed] = await deliveriesOf(svc, token, { sessionId: failing });
    expect(failed).toMatchObject({ lastStatus: 500, lastError: 'answered 500', nextAttemptAt: null, endpoint: 'crm' });
    receiver.answer = 204;
    const fine = await fetchedOffer(svc, token, 'acme', 'erp');
    await expect.poll(async () => (await deliveriesOf(svc, token, { sessionId: fine }))[0]?.state, { timeout: 5000 }).toBe('delivered');

    expect((await deliveriesOf(svc, token, { state: 'failed' })).map((d) => d.sessionId)).toEqual([failing]);
    expect((await deliveriesOf(svc, token, { endpointId: 'erp' })).map((d) => d.sessionId)).toEqual([fine]);
    expect((await deliveriesOf(svc, token, { endpointId: 'crm', state: 'delivered' })).length).toBe(0);
    const page = await svc.raw('GET', '/api/webhook-deliveries?pageSize=1', { token });
    expect(page.body).toMatchObject({ total: 2, page: 1, pageSize: 1, totalPages: 2 });
    expect(page.body.items).toHaveLength(1);

    const before = receiver.hits.filter((hit) => hit.headers['webhook-id'] === failed?.id).length;
    const retried = await svc.call('POST', `/api/webhook-deliveries/${failed?.id ?? ''}/retry`, { token });
    expect(retried.status, retried.text).toBe(202);
    await expect.poll(async () => (await deliveriesOf(svc, token, { sessionId: failing }))[0]?.state, { timeout: 5000 }).toBe('delivered');
    expect(receiver.hits.filter((hit) => hit.headers['webhook-id'] === failed?.id).length).toBe(before + 1);
  });

  it('refuses a bad filter naming the field', async () => {
    const reply = await svc.raw('GET', '/api/webhook-deliveries?state=lost', { token });
    expect(reply.status).toBe(400);
    expect(reply.text).toContain('state');
  });

  it("shows issuance deliveries to issuance:manage only, 403 without either manage role, another tenant's as unknown", async () => {
    const sessionId = await fetchedOffer(svc, token, 'acme', 'crm');
    await expect.poll(async () => (await deliveriesOf(svc, token, { sessionId })).length, { timeout: 5000 }).toBe(1);
    const [delivery] = await deliveriesOf(svc, token, { sessionId });
    const id = delivery?.id ?? '';
    expect(id).toMatch(/^msg_/);
    // The issuance admin can retry it: the 404s below are about who asks, not about the id.
    expect((await svc.call('POST', `/api/webhook-deliveries/${id}/retry`, { token })).status).toBe(202);

    const presentationOnly = await svc.client(token, 'presentation-only', ['presentation:manage']);
    expect(await deliveriesOf(svc, presentationOnly)).toEqual([]);
    expect((await svc.call('POST', `/api/webhook-deliveries/${id}/retry`, { token: presentationOnly })).status).toBe(404);

    const offerOnly = await svc.client(token, 'offer-only', ['issuance:offer']);
    expect((await svc.raw('GET', '/api/webhook-deliveries', { token: offerOnly })).status).toBe(403);
    expect((await svc.call('POST', `/api/webhook-deliveries/${id}/retry`, { token: offerOnly })).status).toBe(403);

    const other = await svc.tenant('other');
    expect(await deliveriesOf(svc, other.token)).toEqual([]);
    expect((await svc.call('POST', `/api/webhook-deliveries/${id}/retry`, { token: other.token })).status).toBe(404);
  });

  it('fails a delivery whose session is gone, saying so', async () => {
    receiver.answer = 503;
    const sessionId = await fetchedOffer(svc, token, 'acme', 'crm');
    await expect.poll(async () => (await deliveriesOf(svc, token, { sessionId }))[0]?.attempts ?? 0, { timeout: 5000 }).toBeGreaterThan(0);
    expect((await svc.raw('DELETE', `/api/session/${sessionId}`, { token })).status).toBe(204);
    await expect.poll(async () => (await deliveriesOf(svc, token, { sessionId }))[0]?.state, { timeout: 5000 }).toBe('failed');
    expect((await deliveriesOf(svc, token, { sessionId }))[0]?.lastError).toContain('session is gone');
    receiver.answer = 204;
  });

  it('are deleted by the clean-up job once delivered or failed and older than WEBHOOK_DELIVERY_RETENTION_SECONDS; pending ones stay', async () => {
    const days = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();
    const rows = await svc.db.selectFrom('webhook_deliveries').select(['seq', 'state']).orderBy('seq').execute();
    const delivered = rows.find((row) => row.state === 'delivered');
    const failed = rows.find((row) => row.state === 'failed');
    if (!delivered || !failed) throw new Error('the tests above leave a delivered and a failed delivery');
    // An old delivered, an old failed, an old pending (its receiver still down) and a recent delivered one.
    const pending = await svc.db
      .insertInto('webhook_deliveries')
      .values({
        ...(await svc.db.selectFrom('webhook_deliveries').selectAll().where('seq', '=', delivered.seq).executeTakeFirstOrThrow()),
        seq: undefined,
        id: 'msg_old_pending',
        state: 'pending',
        next_attempt_at: days(-1),
      })
      .returning('seq')
      .executeTakeFirstOrThrow();
    await svc.db
      .updateTable('webhook_deliveries')
      .set({ created_at: days(8) })
      .where('seq', 'in', [delivered.seq, failed.seq, pending.seq])
      .execute();
    const recent = rows.filter((row) => row.state === 'delivered' && row.seq !== delivered.seq).map((row) => row.seq);
    await svc.running.services.scheduler.runNow('webhook-deliveries-cleanup');
    const left = (await svc.db.selectFrom('webhook_deliveries').select('seq').execute()).map((row) => row.seq);
    expect(left).not.toContain(delivered.seq);
    expect(left).not.toContain(failed.seq);
    expect(left).toContain(pending.seq);
    expect(left).toEqual(expect.arrayContaining(recent));
    await svc.db.deleteFrom('webhook_deliveries').where('seq', '=', pending.seq).execute();
  });

  it('appear in the metrics: deliveries by state and the age of the oldest pending', async () => {
    const metrics = await svc.raw('GET', '/metrics', { token: METRICS_TOKEN });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/svc_webhook_deliveries\{state="delivered"\} [1-9]/);
    expect(metrics.text).toMatch(/svc_webhook_oldest_pending_seconds \d/);
  });
});

describe.runIf(engine === 'postgres')('two instances on one database', () => {
  it('never send one attempt twice: each webhook-id reaches the receiver once', async () => {
    const env = { ...FAST, WEBHOOK_POLL_INTERVAL_MS: '50' };
    const a = await startService(env);
    const b = await startService(env, { besides: a });
    const receiver = await startReceiver();
    try {
      const admin = await issuingTenant(a, 'acme');
      const { token } = admin;
      await webhookEndpoint(a, token, 'crm', receiver.url);
      const bToken = await b.token(admin.clientId, admin.secret);
      const sessions = await Promise.all(
        Array.from({ length: 12 }, (_, i) => (i % 2 ? fetchedOffer(b, bToken, 'acme', 'crm') : fetchedOffer(a, token, 'acme', 'crm'))),
      );
      await expect.poll(() => receiver.hits.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(sessions.length);
      // Time for a second send, had one been made.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const perId = new Map<string, number>();
      for (const hit of receiver.hits)
        perId.set(String(hit.headers['webhook-id']), (perId.get(String(hit.headers['webhook-id'])) ?? 0) + 1);
      expect(perId.size).toBe(sessions.length);
      expect([...perId.values()].every((count) => count === 1)).toBe(true);
      const delivered = await deliveriesOf(a, token, { state: 'delivered' });
      expect(delivered.map((d) => d.sessionId).sort()).toEqual([...sessions].sort());
    } finally {
      await receiver.close();
      await b.running.close();
      await a.stop();
    }
  });
});
