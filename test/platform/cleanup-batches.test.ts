// Clean-up jobs delete in batches with a cap per run (src/platform/jobs/batches.ts), so that a
// year's backlog never runs as one long statement: session retention, expired nonces and ended
// request windows each delete everything due over several batches and runs, and nothing live; the
// indexes those deletes (and their cascades) need exist on both engines.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NonceStore } from '../../src/issuance/nonce/store.js';
import { DatabaseWindows } from '../../src/platform/rate-limits/windows.js';
import { sessionCleanupJob } from '../../src/sessions/retention.js';
import { engine } from '../support/database.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(() => svc.stop());

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
const SMALL = { size: 3, maxBatches: 2 };

/** A completed session with a log entry and a handle, created `age` seconds ago. */
async function sessionOfAge(tenantId: string, age: number) {
  const { sessions } = svc.running.services;
  const session = await sessions.create({
    tenantId,
    kind: 'issuance',
    clientId: null,
    lifetimeSeconds: 600,
    public: { flow: 'pre_authorized_code', responseType: 'uri', credentialConfigurationIds: ['pid'], useDcApi: false },
    private: { credentialPayload: { given_name: 'Erika' } },
  });
  await sessions.log(session.id, 'info', 'credential issued', {});
  await sessions.addHandle(session.id, 'pre-authorized_code', `code-${session.id}`, '2999-01-01T00:00:00.000Z');
  await svc.db
    .updateTable('sessions')
    .set({ created_at: ago(age) })
    .where('id', '=', session.id)
    .execute();
  return session.id;
}

const existing = async (table: 'sessions' | 'session_logs' | 'session_handles', column: 'id' | 'session_id', ids: string[]) =>
  (await svc.db.selectFrom(table).select(column).where(column, 'in', ids).execute()).length;

describe('session retention in batches', () => {
  it('deletes every session past its time over several batches and runs, with its logs and handles, and keeps the younger ones', async () => {
    await svc.tenant('batched');
    await svc.tenant('neighbour');
    const old = [];
    for (let i = 0; i < 10; i++) old.push(await sessionOfAge('batched', 3600));
    const young = [await sessionOfAge('batched', 10), await sessionOfAge('batched', 20)];
    const otherTenant = await sessionOfAge('neighbour', 3600);
    const policy = { ttlSeconds: 600, cleanupMode: 'full' as const };
    const { sessions } = svc.running.services;

    // Two batches of three per run: 6, then the 4 left, then nothing.
    expect(await sessions.applyRetention('batched', policy, Date.now(), SMALL)).toEqual({ deleted: 6, anonymized: 0 });
    expect(await existing('sessions', 'id', old)).toBe(4);
    expect(await sessions.applyRetention('batched', policy, Date.now(), SMALL)).toEqual({ deleted: 4, anonymized: 0 });
    expect(await sessions.applyRetention('batched', policy, Date.now(), SMALL)).toEqual({ deleted: 0, anonymized: 0 });

    expect(await existing('sessions', 'id', old)).toBe(0);
    expect(await existing('session_logs', 'session_id', old)).toBe(0);
    expect(await existing('session_handles', 'session_id', old)).toBe(0);
    expect(await existing('sessions', 'id', young)).toBe(2);
    expect(await existing('session_handles', 'session_id', young)).toBe(2);
    // Another tenant's sessions wait for that tenant's own retention.
    expect(await existing('sessions', 'id', [otherTenant])).toBe(1);
  });

  it('anonymizes at most the run cap, the rest at the next run', async () => {
    await svc.tenant('anon-batched');
    const old = [];
    for (let i = 0; i < 8; i++) old.push(await sessionOfAge('anon-batched', 3600));
    const policy = { ttlSeconds: 600, cleanupMode: 'anonymize' as const };
    const { sessions } = svc.running.services;
    expect(await sessions.applyRetention('anon-batched', policy, Date.now(), SMALL)).toEqual({ deleted: 0, anonymized: 6 });
    expect(await sessions.applyRetention('anon-batched', policy, Date.now(), SMALL)).toEqual({ deleted: 0, anonymized: 2 });
    const anonymized = await svc.db.selectFrom('sessions').select('anonymized').where('id', 'in', old).execute();
    expect(anonymized.map((row) => Number(row.anonymized))).toEqual(old.map(() => 1));
    expect(await existing('session_handles', 'session_id', old)).toBe(0);
    expect(await sessions.applyRetention('anon-batched', policy, Date.now(), SMALL)).toEqual({ deleted: 0, anonymized: 0 });
  });
});

describe('the session-cleanup job', () => {
  it('deletes at most its run cap across tenants, and the rest at the next run', async () => {
    const tenants = ['capped-a', 'capped-b'];
    const old: string[] = [];
    for (const tenant of tenants) {
      await svc.tenant(tenant);
      for (let i = 0; i < 4; i++) old.push(await sessionOfAge(tenant, 3600));
    }
    const young = await sessionOfAge('capped-b', 10);
    const job = sessionCleanupJob(
      svc.running.services.sessions,
      async () => tenants.map((tenantId) => ({ tenantId, sessionConfig: { ttlSeconds: 600, cleanupMode: 'full' as const } })),
      { ttlSeconds: 86_400, cleanupMode: 'full' },
      SMALL,
    );
    await job.run();
    expect(await existing('sessions', 'id', old)).toBe(2);
    await job.run();
    expect(await existing('sessions', 'id', old)).toBe(0);
    expect(await existing('sessions', 'id', [young])).toBe(1);
  });
});

describe('nonce clean-up in batches', () => {
  it('deletes the expired nonces of every tenant over several runs and keeps the live ones', async () => {
    await svc.tenant('nonce-batched');
    const nonces = new NonceStore(svc.db, svc.clock);
    // Any expired nonce left by other tests goes first, so that the counts below are this test's.
    while ((await nonces.purgeExpired(SMALL)) > 0);
    const live = await Promise.all(Array.from({ length: 3 }, () => nonces.issue('nonce-batched', 'batch', 120)));
    const expired = await Promise.all(Array.from({ length: 7 }, () => nonces.issue('nonce-batched', 'batch', -5)));
    expect(expired).toHaveLength(7);

    expect(await nonces.purgeExpired(SMALL)).toBe(6);
    expect(await nonces.purgeExpired(SMALL)).toBe(1);
    expect(await nonces.purgeExpired(SMALL)).toBe(0);
    const left = await svc.db.selectFrom('nonces').select('hash').where('purpose', '=', 'batch').execute();
    expect(left).toHaveLength(live.length);
    for (const value of live) expect(await nonces.consume('nonce-batched', 'batch', value)).toBe(true);
  });
});

describe('request window clean-up in batches', () => {
  it('deletes the ended windows over several runs and keeps the current ones', async () => {
    const windows = new DatabaseWindows(svc.db);
    const now = Date.now();
    const rows = [
      ...Array.from({ length: 5 }, (_, i) => ({ key: `batch-ended-${i}`, window_start: new Date(now - 7200_000).toISOString(), count: 1 })),
      ...Array.from({ length: 2 }, (_, i) => ({ key: `batch-current-${i}`, window_start: new Date(now - 10_000).toISOString(), count: 1 })),
    ];
    await svc.db.insertInto('request_windows').values(rows).execute();
    const ours = () =>
      svc.db
        .selectFrom('request_windows')
        .select('key')
        .where('key', 'like', 'batch-%')
        .orderBy('key')
        .execute()
        .then((found) => found.map((row) => row.key));

    let deleted = 0;
    for (let run = 0; run < 5 && (await ours()).some((key) => key.startsWith('batch-ended')); run++) {
      deleted += await windows.purgeEnded(3600, now, SMALL);
    }
    expect(deleted).toBeGreaterThanOrEqual(5);
    expect(await ours()).toEqual(['batch-current-0', 'batch-current-1']);
  });
});

describe('indexes for the growing tables', () => {
  it('exist on this engine', async () => {
    const names =
      engine === 'postgres'
        ? (await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema()`.execute(svc.db)).rows
        : (await sql<{ name: string }>`select name from sqlite_master where type = 'index'`.execute(svc.db)).rows;
    expect(names.map((row) => row.name)).toEqual(
      expect.arrayContaining(['deferred_transactions_session_idx', 'request_windows_start_idx', 'webhook_deliveries_finished_idx']),
    );
  });
});
