// Two instances on one PostgreSQL database, as behind a load balancer: a status change made on one
// reaches event streams opened on the other (LISTEN/NOTIFY), also after the listener reconnects.
// And the size limit of events, which both buses keep to.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessBus, MAX_EVENT_BYTES } from '../../src/platform/events/bus.js';
import { PostgresBus } from '../../src/platform/events/postgres-bus.js';
import { engine } from '../support/database.js';
import { startService, startTwoInstances, stopInstances, type TestService } from '../support/service.js';
import { openStream } from '../support/sse.js';

describe.skipIf(engine !== 'postgres')('session events across instances', () => {
  let a: TestService;
  let b: TestService;
  let token: string;
  beforeAll(async () => {
    [a, b] = await startTwoInstances();
    token = (await a.tenant('acme')).token;
  });
  afterAll(() => stopInstances(a, b));

  const newSession = () => a.running.services.sessions.create({ tenantId: 'acme', kind: 'issuance', clientId: null, lifetimeSeconds: 600 });

  it('delivers a change made through instance A to a stream on instance B', async () => {
    const session = await newSession();
    const stream = await openStream(`${b.url}/api/session/${session.id}/events?token=${token}`);
    await stream.waitFor(() => stream.statuses().length === 1);

    await a.running.services.sessions.update('acme', session.id, { status: 'fetched' });
    await stream.waitFor(() => stream.statuses().length === 2);
    await a.running.services.sessions.update('acme', session.id, { status: 'completed', consumed: true });
    await stream.waitForEnd();
    expect(stream.statuses().map((e) => [e.previousStatus, e.status])).toEqual([
      [null, 'active'],
      ['active', 'fetched'],
      ['fetched', 'completed'],
    ]);
  });

  it('delivers a change made in a transaction only when it commits', async () => {
    const session = await newSession();
    const stream = await openStream(`${b.url}/api/session/${session.id}/events?token=${token}`);
    await stream.waitFor(() => stream.statuses().length === 1);
    const marker = await newSession();
    const markerStream = await openStream(`${b.url}/api/session/${marker.id}/events?token=${token}`);
    await markerStream.waitFor(() => markerStream.statuses().length === 1);

    await a.db
      .transaction()
      .execute(async (trx) => {
        await a.running.services.sessions.update('acme', session.id, { status: 'fetched' }, { db: trx });
        throw new Error('roll back');
      })
      .catch(() => {});
    await a.db.transaction().execute(async (trx) => {
      await a.running.services.sessions.update('acme', session.id, { status: 'failed', errorReason: 'declined' }, { db: trx });
      // Not yet committed: nothing has reached B. The marker, a change committed after it (on another
      // session: this one's row is locked), reaches B through the same listener behind anything
      // published before it; so once the marker is in, an event sent before the commit would be too.
      await a.running.services.sessions.update('acme', marker.id, { status: 'fetched' });
      await markerStream.waitFor(() => markerStream.statuses().length === 2);
      expect(stream.statuses()).toHaveLength(1);
    });
    markerStream.close();
    await stream.waitForEnd();
    expect(stream.statuses().map((e) => e.status)).toEqual(['active', 'failed']);
  });

  it('reconnects its listener after losing the connection', async () => {
    const listeners = sql<{
      pid: number;
    }>`select pid from pg_stat_activity where application_name = 'svc-events' and datname = current_database()`;
    const before = (await listeners.execute(a.db)).rows.map((row) => row.pid);
    expect(before).toHaveLength(2);
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'svc-events' and datname = current_database()`.execute(
      a.db,
    );
    // Back only once both instances have run LISTEN again on new connections (a connection shows up
    // before its LISTEN, and a terminated one can still be listed, idle after its LISTEN, for a moment).
    const listening = sql<{
      pid: number;
    }>`select pid from pg_stat_activity where application_name = 'svc-events' and datname = current_database() and state = 'idle' and query like 'LISTEN%'`;
    const reconnected = async () => (await listening.execute(a.db)).rows.filter((row) => !before.includes(row.pid)).length;
    await expect.poll(reconnected, { timeout: 5000 }).toBe(2);

    const session = await newSession();
    const stream = await openStream(`${b.url}/api/session/${session.id}/events?token=${token}`);
    await stream.waitFor(() => stream.statuses().length === 1);
    await a.running.services.sessions.update('acme', session.id, { status: 'completed' });
    await stream.waitForEnd();
    expect(stream.statuses().map((e) => e.status)).toEqual(['active', 'completed']);
  });
});

describe('event size', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService();
  });
  afterAll(() => svc.stop());

  const bus = () => {
    const { db } = svc.running;
    return db.dialect === 'postgres' && db.postgres ? new PostgresBus(db.postgres) : new InProcessBus();
  };
  /** A payload whose event envelope takes exactly `bytes` bytes. */
  const sized = (bytes: number) => 'x'.repeat(bytes - JSON.stringify({ topic: 't', payload: '' }).length);

  it('carries events up to the PostgreSQL NOTIFY limit on both engines, and refuses larger ones', async () => {
    await expect(bus().publish(svc.db, 't', sized(MAX_EVENT_BYTES))).resolves.toBeUndefined();
    await expect(bus().publish(svc.db, 't', sized(MAX_EVENT_BYTES + 1))).rejects.toThrow(/at most 7999/);
  });
});
