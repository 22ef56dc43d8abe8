// The session event stream: server-sent events authenticated by a token in the query string.
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { deriveKey } from '../../src/platform/crypto/derive.js';
import type { NewSession } from '../../src/sessions/service.js';
import { problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';
import { openStream } from '../support/sse.js';

let svc: TestService;
let acme: string;
let other: string;
beforeAll(async () => {
  svc = await startService({ SSE_HEARTBEAT_SECONDS: '1' });
  acme = (await svc.tenant('acme')).token;
  other = (await svc.tenant('other')).token;
});
afterAll(() => svc.stop());

const sessions = () => svc.running.services.sessions;
const create = (input: Partial<NewSession> = {}) =>
  sessions().create({ tenantId: 'acme', kind: 'issuance', clientId: null, lifetimeSeconds: 600, ...input });
const eventsUrl = (id: string, token?: string) => `${svc.url}/api/session/${id}/events${token === undefined ? '' : `?token=${token}`}`;
/** Listeners on the session's topic in the service's event bus: one per open stream. */
const subscribers = (id: string): number => (sessions() as any).bus.emitter.listenerCount(`session:${id}`);

describe('event stream', () => {
  it('sends the current status at once, then every change, and ends after a terminal status', async () => {
    const session = await create();
    const stream = await openStream(eventsUrl(session.id, acme));
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(stream.headers.get('x-request-id')).toBeTruthy();

    await stream.waitFor(() => stream.statuses().length === 1);
    expect(stream.messages.find((m) => m.kind === 'event')).toMatchObject({ event: 'status', id: 'active' });
    expect(stream.statuses()[0]).toEqual({
      sessionId: session.id,
      tenantId: 'acme',
      status: 'active',
      previousStatus: null,
      consumed: false,
      errorReason: null,
      updatedAt: session.updatedAt,
    });

    await sessions().update('acme', session.id, { status: 'fetched' });
    await stream.waitFor(() => stream.statuses().length === 2);
    await sessions().update('acme', session.id, { consumed: true });
    await sessions().update('acme', session.id, { status: 'completed' });
    await stream.waitForEnd();
    expect(stream.statuses().map((e) => [e.previousStatus, e.status, e.consumed])).toEqual([
      [null, 'active', false],
      ['active', 'fetched', false],
      ['fetched', 'completed', true],
    ]);
    expect(subscribers(session.id)).toBe(0);
  });

  it('carries the error of a failed session, and ends', async () => {
    const session = await create({ kind: 'presentation' });
    const stream = await openStream(eventsUrl(session.id, acme));
    await stream.waitFor(() => stream.statuses().length === 1);
    await sessions().update('acme', session.id, { status: 'failed', errorReason: 'invalid presentation' });
    await stream.waitForEnd();
    expect(stream.statuses()[1]).toMatchObject({ status: 'failed', previousStatus: 'active', errorReason: 'invalid presentation' });
  });

  it('learns of a change whose notification never came, at the next heartbeat', async () => {
    const session = await create();
    const stream = await openStream(eventsUrl(session.id, acme));
    await stream.waitFor(() => stream.statuses().length === 1);
    // Written behind the service's back: no event is published, as when a notification is lost.
    await svc.db.updateTable('sessions').set({ status: 'completed' }).where('id', '=', session.id).execute();
    await stream.waitForEnd();
    expect(stream.statuses().map((e) => e.status)).toEqual(['active', 'completed']);
  });

  it('sends heartbeat comments while the session is open', async () => {
    const session = await create();
    const stream = await openStream(eventsUrl(session.id, acme));
    await stream.waitFor((messages) => messages.filter((m) => m.kind === 'comment' && m.comment === 'heartbeat').length >= 2, 4000);
    expect(stream.ended).toBe(false);
    stream.close();
  });

  // The stream's expiry timer is a real timer: moving the clock to shortly before the expiry (not
  // past it, or the session would open expired) leaves it a short real wait instead of a second.
  const almostExpired = async () => {
    const session = await create({ lifetimeSeconds: 1 });
    svc.clock.advance(900);
    return session;
  };

  it('reports expiry when it falls due, and ends', async () => {
    const session = await almostExpired();
    const stream = await openStream(eventsUrl(session.id, acme));
    await stream.waitForEnd(4000);
    expect(stream.statuses().map((e) => e.status)).toEqual(['active', 'expired']);
    expect(stream.statuses()[1].previousStatus).toBe('active');
  });

  it('stays open when the session cannot be read as its expiry falls due, and reports the expiry once it can', async () => {
    const session = await almostExpired();
    const stream = await openStream(eventsUrl(session.id, acme));
    await stream.waitFor(() => stream.statuses().length === 1);
    // The database fails every read until well after the expiry check ran (50 ms after expiry).
    const failing = vi.spyOn(sessions(), 'find').mockRejectedValue(new Error('connection terminated unexpectedly'));
    const untilChecked = Date.parse(session.expiresAt) + 300 - svc.clock.now().getTime();
    await new Promise((resolve) => setTimeout(resolve, Math.max(untilChecked, 0)));
    failing.mockRestore();
    await stream.waitForEnd(4000);
    expect(stream.statuses().map((e) => e.status)).toEqual(['active', 'expired']);
  });

  it('sends one event and ends for a session already finished; a reconnecting EventSource is told to stop', async () => {
    const session = await create();
    await sessions().update('acme', session.id, { status: 'completed' });
    const stream = await openStream(eventsUrl(session.id, acme));
    await stream.waitForEnd();
    expect(stream.statuses().map((e) => e.status)).toEqual(['completed']);

    const reconnect = await openStream(eventsUrl(session.id, acme), { 'last-event-id': 'fetched' });
    expect(reconnect.status).toBe(204);
    // A reconnect to a session still open gets its stream as before.
    const open = await create();
    const resumed = await openStream(eventsUrl(open.id, acme), { 'last-event-id': 'active' });
    expect(resumed.status).toBe(200);
    await resumed.waitFor(() => resumed.statuses().length === 1);
    resumed.close();
  });

  it('lets go of its subscription when the client leaves', async () => {
    const session = await create();
    const streams = await Promise.all([openStream(eventsUrl(session.id, acme)), openStream(eventsUrl(session.id, acme))]);
    for (const stream of streams) await stream.waitFor(() => stream.statuses().length === 1);
    expect(subscribers(session.id)).toBe(2);
    streams[0]?.close();
    await expect.poll(() => subscribers(session.id)).toBe(1);
    await sessions().update('acme', session.id, { status: 'fetched' });
    await streams[1]?.waitFor(() => streams[1]!.statuses().length === 2);
    streams[1]?.close();
    await expect.poll(() => subscribers(session.id)).toBe(0);
  });
});

/** The token generation of a client, as its tokens carry it. */
const generationOf = async (clientId: string) =>
  (await svc.db.selectFrom('clients').select('token_generation').where('id', '=', clientId).executeTakeFirst())?.token_generation;

/** A token as the service makes them, for acme's admin unless `claims` say otherwise. */
const signed = async (claims: { aud?: string; iss?: string; exp: number; sub?: string }, secret = svc.shared.env.MASTER_SECRET as string) =>
  new SignJWT({ roles: ['issuance:manage'], tenant_id: 'acme', client_gen: (await generationOf(claims.sub ?? 'acme-admin')) ?? 'none' })
    .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
    .setIssuer(claims.iss ?? 'svc-service')
    .setAudience(claims.aud ?? 'svc-service')
    .setSubject(claims.sub ?? 'acme-admin')
    .setIssuedAt(claims.exp - 3600)
    .setExpirationTime(claims.exp)
    .sign(deriveKey(secret, 'management-token'));
const now = () => Math.floor(Date.now() / 1000);

describe('event stream access', () => {
  it('accepts a token made like the service makes them (the check of this test itself)', async () => {
    const session = await create();
    const stream = await openStream(eventsUrl(session.id, await signed({ exp: now() + 600 })));
    expect(stream.status).toBe(200);
    stream.close();
  });

  it.each([
    ['no token', async () => undefined],
    ['an empty token', async () => ''],
    ['a malformed token', async () => 'not a jwt'],
    ['a token signed with another key', async () => signed({ exp: now() + 600 }, 'x'.repeat(40))],
    ['an expired token', async () => signed({ exp: now() - 300 })],
    ['a token for another audience', async () => signed({ aud: 'someone-else', exp: now() + 600 })],
    ['a token of another issuer', async () => signed({ iss: 'https://elsewhere.example', exp: now() + 600 })],
    ['a token of a deleted client', async () => signed({ sub: 'gone-client', exp: now() + 600 })],
  ])('answers 401 to %s', async (_, token) => {
    const session = await create();
    const value = await token();
    const reply = await svc.raw(
      'GET',
      `/api/session/${session.id}/events${value === undefined ? '' : `?token=${encodeURIComponent(value)}`}`,
    );
    expect(reply.status).toBe(401);
    expect(reply.headers.get('content-type')).toContain('application/problem+json');
    expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer realm="svc"/);
  });

  it('does not take the token from the Authorization header', async () => {
    const session = await create();
    const reply = await svc.call('GET', `/api/session/${session.id}/events`, { token: acme });
    expect(reply.status).toBe(401);
    expect(problemOf(reply).detail).toContain('token query parameter');
  });

  it('answers 404 to a token of another tenant, as for a missing session, without echoing the token', async () => {
    const session = await create();
    const reply = await svc.raw('GET', `/api/session/${session.id}/events?token=${other}`);
    expect(reply.status).toBe(404);
    expect(problemOf(reply).detail).toBe(`session '${session.id}' does not exist`);
    expect(reply.text).not.toContain(other);
    expect(reply.body.instance).toBe(`/api/session/${session.id}/events?token=[redacted]`);
    expect((await svc.call('GET', `/api/session/unknown/events?token=${acme}`)).status).toBe(404);
    expect(subscribers(session.id)).toBe(0);
  });

  it('answers 403 to a client without a session-reading role, and to one without a tenant', async () => {
    const session = await create();
    const clientsOnly = await svc.client(acme, 'acme-clients', ['clients:manage']);
    expect((await svc.call('GET', `/api/session/${session.id}/events?token=${clientsOnly}`)).status).toBe(403);
    expect((await svc.call('GET', `/api/session/${session.id}/events?token=${await svc.rootToken()}`)).status).toBe(403);
    for (const role of ['presentation:request', 'issuance:offer'] as const) {
      const reader = await svc.client(acme, `acme-${role.replace(':', '-')}`, [role]);
      const stream = await openStream(eventsUrl(session.id, reader));
      expect(stream.status, role).toBe(200);
      stream.close();
    }
  });
});

describe('a stream lives no longer than its access', () => {
  /** A stream opened with `token`, and beside it one of acme's admin, whose access goes on. */
  async function streamsOf(token: string) {
    const session = await create();
    const [watched, control] = await Promise.all([openStream(eventsUrl(session.id, token)), openStream(eventsUrl(session.id, acme))]);
    for (const stream of [watched, control]) {
      expect(stream.status, stream.text).toBe(200);
      await stream.waitFor(() => stream.statuses().length === 1);
    }
    return { session, watched, control };
  }

  /** The watched stream ends by the next heartbeat or two; the control stream stays open; a reconnect is refused. */
  async function expectEnded(streams: Awaited<ReturnType<typeof streamsOf>>, token: string) {
    await streams.watched.waitForEnd(3500);
    expect(streams.control.ended).toBe(false);
    expect(streams.watched.statuses().map((e) => e.status)).toEqual(['active']);
    const reconnect = await svc.call('GET', `/api/session/${streams.session.id}/events?token=${token}`);
    expect(reconnect.status).toBe(401);
    expect(reconnect.headers.get('www-authenticate')).toContain('error="invalid_token"');
    streams.control.close();
    await expect.poll(() => subscribers(streams.session.id)).toBe(0);
  }

  it('ends once its client is deleted', async () => {
    const token = await svc.client(acme, 'acme-watcher-deleted', ['issuance:offer']);
    const streams = await streamsOf(token);
    expect((await svc.call('DELETE', '/api/client/acme-watcher-deleted', { token: acme })).status).toBe(204);
    await expectEnded(streams, token);
  });

  it("ends once its client's secret is rotated; a token under the new secret streams again", async () => {
    const token = await svc.client(acme, 'acme-watcher-rotated', ['issuance:offer']);
    const streams = await streamsOf(token);
    const rotated = await svc.call('POST', '/api/client/acme-watcher-rotated/rotate-secret', { token: acme });
    expect(rotated.status, rotated.text).toBe(200);
    await expectEnded(streams, token);
    const fresh = await openStream(eventsUrl(streams.session.id, await svc.token('acme-watcher-rotated', rotated.body.secret)));
    expect(fresh.status).toBe(200);
    fresh.close();
  });

  it('ends once its client no longer holds a role that reads sessions', async () => {
    const token = await svc.client(acme, 'acme-watcher-demoted', ['issuance:offer', 'users:manage']);
    const streams = await streamsOf(token);
    expect((await svc.call('PATCH', '/api/client/acme-watcher-demoted', { token: acme, body: { roles: ['users:manage'] } })).status).toBe(
      200,
    );
    await streams.watched.waitForEnd(3500);
    expect(streams.control.ended).toBe(false);
    expect((await svc.call('GET', `/api/session/${streams.session.id}/events?token=${token}`)).status).toBe(403);
    streams.control.close();
  });

  it('ends when its token expires', async () => {
    const token = await signed({ exp: now() + 2 });
    const streams = await streamsOf(token);
    await expectEnded(streams, token);
  });

  it('is not opened with a token past its expiry, though a request within the clock-skew allowance is served', async () => {
    const session = await create();
    const token = await signed({ exp: now() - 5 });
    expect((await svc.call('GET', `/api/session/${session.id}`, { token })).status).toBe(200);
    const reply = await svc.call('GET', `/api/session/${session.id}/events?token=${token}`);
    expect(reply.status).toBe(401);
    expect(problemOf(reply).detail).toBe('the access token has expired');
    expect(subscribers(session.id)).toBe(0);
  });
});

describe('shutdown', () => {
  it('ends open streams instead of waiting for their clients', async () => {
    const own = await startService({});
    try {
      const { token } = await own.tenant('acme');
      const session = await own.running.services.sessions.create({
        tenantId: 'acme',
        kind: 'issuance',
        clientId: null,
        lifetimeSeconds: 600,
      });
      const stream = await openStream(`${own.url}/api/session/${session.id}/events?token=${token}`);
      await stream.waitFor(() => stream.statuses().length === 1);
      const started = Date.now();
      await own.running.close();
      expect(Date.now() - started).toBeLessThan(3000);
      await stream.waitForEnd();
    } finally {
      await own.stop().catch(() => {});
    }
  });
});
