// The single statements that decide the once-only rules (issue 24), called directly on the real
// database, each raced: spending a handle (authorization codes, request_uris), spending a refresh
// token only while its session is live (rotation), counting wrong transaction codes, the
// compare-and-set of a session update (one redemption per offer), redeeming by handle in one
// statement (PostgreSQL), taking a configuration once per round with its c_nonce, and remembering a
// proof's jti along with a read. The flows that use them are raced through the server in tokens.test.ts
// and issuance.test.ts; here every condition of each statement is shown to decide on its own.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { takeConfiguration } from '../../src/issuance/credential-request/store.js';
import { NonceStore } from '../../src/issuance/nonce/store.js';
import type { SessionStatus } from '../../src/sessions/model.js';
import { hashHandle, type SessionService, spentHandle } from '../../src/sessions/service.js';
import { addingLog, moveByHandle, updateSessionAt } from '../../src/sessions/store.js';
import { engine } from '../support/database.js';
import { startService, type TestService } from '../support/service.js';

const RACERS = 16;
const CODE = 'authorization-code';
const HOUR = 3600;

let svc: TestService;
let sessions: SessionService;
let nonces: NonceStore;

beforeAll(async () => {
  svc = await startService();
  await Promise.all([svc.tenant('acme'), svc.tenant('other')]);
  sessions = svc.running.services.sessions;
  nonces = new NonceStore(svc.db, svc.clock);
});
afterAll(() => svc.stop());

const secret = () => randomBytes(16).toString('base64url');
const race = <R>(count: number, run: (i: number) => Promise<R>) => Promise.all(Array.from({ length: count }, (_, i) => run(i)));
const count = <R>(results: R[], value: R) => results.filter((r) => r === value).length;

/** An issuance session of `tenant` with one live handle of `purpose`; `handleSeconds` its handle's life. */
async function sessionWithHandle(
  options: { tenant?: string; purpose?: string; handleSeconds?: number; public?: Record<string, unknown> } = {},
) {
  const handle = secret();
  const session = await sessions.create(
    {
      tenantId: options.tenant ?? 'acme',
      kind: 'issuance',
      clientId: null,
      lifetimeSeconds: HOUR,
      public: options.public ?? {},
      private: {},
    },
    undefined,
    { handles: [{ purpose: options.purpose ?? CODE, secret: handle }] },
  );
  if (options.handleSeconds !== undefined) {
    await svc.db
      .updateTable('session_handles')
      .set({ expires_at: new Date(Date.now() + options.handleSeconds * 1000).toISOString() })
      .where('hash', '=', hashHandle(handle))
      .execute();
  }
  return { session, handle };
}
const setRow = (id: string, changes: { status?: SessionStatus; expires_at?: string; consumed?: 0 | 1 }) =>
  svc.db.updateTable('sessions').set(changes).where('id', '=', id).execute();
const row = (id: string) => svc.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const logMessages = async (sessionId: string) =>
  (await svc.db.selectFrom('session_logs').select('message').where('session_id', '=', sessionId).execute()).map((l) => l.message);

/**
 * The status events of the session received while `work` runs, and after it until `expected` came (or
 * 3 s passed), as `previous>status`. On PostgreSQL the creation's event (null>active) may still be on
 * its way when the subscription starts: it is left out.
 */
async function eventsDuring(sessionId: string, work: () => Promise<unknown>, expected: number) {
  const events: string[] = [];
  const stop = sessions.subscribe(sessionId, (event) => {
    if (event.previousStatus !== null) events.push(`${event.previousStatus}>${event.status}`);
  });
  try {
    await work();
    for (let waited = 0; events.length < expected && waited < 3000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 100));
    return events;
  } finally {
    stop();
  }
}

describe('spendHandle: a live handle is spent once', () => {
  it(`${RACERS} racing spends: one wins, and the handle is kept as spent`, async () => {
    const { session, handle } = await sessionWithHandle();
    const spent = await race(RACERS, () => sessions.spendHandle(CODE, handle));
    expect(count(spent, true)).toBe(1);
    expect(await sessions.findByHandle(CODE, handle)).toBeUndefined();
    expect((await sessions.findByHandle(spentHandle(CODE), handle))?.id).toBe(session.id);
  });

  it('an expired handle, or one of another purpose, is not spent', async () => {
    const expired = await sessionWithHandle({ handleSeconds: -1 });
    expect(await sessions.spendHandle(CODE, expired.handle)).toBe(false);
    const other = await sessionWithHandle({ purpose: 'request-uri' });
    expect(await sessions.spendHandle(CODE, other.handle)).toBe(false);
    expect(await sessions.spendHandle('request-uri', other.handle)).toBe(true);
  });
});

describe('spendHandleOfLiveSession: a refresh token rotates once, only while its session is live', () => {
  const always = sql<boolean>`true`;

  it(`${RACERS} racing rotations: one wins`, async () => {
    const { handle } = await sessionWithHandle();
    expect(count(await race(RACERS, () => sessions.spendHandleOfLiveSession(CODE, handle, always)), true)).toBe(1);
  });

  it('refuses while the session is past its expiry, failed or expired, or fails `holds`; the token stays unspent', async () => {
    const { session, handle } = await sessionWithHandle();
    await setRow(session.id, { expires_at: new Date(Date.now() - 1000).toISOString() });
    expect(await sessions.spendHandleOfLiveSession(CODE, handle, always)).toBe(false);
    await setRow(session.id, { expires_at: new Date(Date.now() + HOUR * 1000).toISOString() });
    for (const status of ['failed', 'expired'] as const) {
      await setRow(session.id, { status });
      expect(await sessions.spendHandleOfLiveSession(CODE, handle, always)).toBe(false);
    }
    await setRow(session.id, { status: 'fetched' });
    expect(await sessions.spendHandleOfLiveSession(CODE, handle, sql<boolean>`false`)).toBe(false);
    expect(await sessions.spendHandleOfLiveSession(CODE, handle, sql<boolean>`sessions.status = 'fetched'`)).toBe(true);
  });

  it("decides on the handle's own session: another session's state does not matter", async () => {
    const live = await sessionWithHandle();
    const failed = await sessionWithHandle();
    await setRow(failed.session.id, { status: 'failed' });
    expect(await sessions.spendHandleOfLiveSession(CODE, failed.handle, always)).toBe(false);
    expect(await sessions.spendHandleOfLiveSession(CODE, live.handle, always)).toBe(true);
  });

  it('an expired handle of a live session is not spent', async () => {
    const { handle } = await sessionWithHandle({ handleSeconds: -1 });
    expect(await sessions.spendHandleOfLiveSession(CODE, handle, always)).toBe(false);
  });
});

describe('spendHandleOfSession: a handle is spent only for its own session and tenant', () => {
  it(`${RACERS} racing spends: one wins; the handle named with another session or tenant is not spent`, async () => {
    const { session, handle } = await sessionWithHandle();
    const { session: other } = await sessionWithHandle();
    expect(await sessions.spendHandleOfSession(CODE, handle, 'acme', other.id)).toBe(false);
    expect(await sessions.spendHandleOfSession(CODE, handle, 'other', session.id)).toBe(false);
    const results = await race(RACERS, () => sessions.spendHandleOfSession(CODE, handle, 'acme', session.id));
    expect(count(results, true)).toBe(1);
  });
});

describe('countTxCodeFailure: at most `max` wrong transaction codes are counted', () => {
  it('10 racing wrong guesses with 3 attempts: places 1, 2 and 3 once each, the rest find none left', async () => {
    const { session } = await sessionWithHandle();
    const places = await race(10, () => sessions.countTxCodeFailure('acme', session.id, 3));
    expect(places.filter((p) => p !== undefined).sort()).toEqual([1, 2, 3]);
    expect(count(places, undefined)).toBe(7);
    expect((await row(session.id)).tx_code_failed_attempts).toBe(3);
  });

  it('counts nothing on a redeemed offer or for another tenant', async () => {
    const { session } = await sessionWithHandle();
    expect(await sessions.countTxCodeFailure('other', session.id, 3)).toBeUndefined();
    await setRow(session.id, { consumed: 1 });
    expect(await sessions.countTxCodeFailure('acme', session.id, 3)).toBeUndefined();
    expect((await row(session.id)).tx_code_failed_attempts).toBe(0);
  });

  it('moves the version on, so an update computed before the count loses its compare-and-set', async () => {
    const { session } = await sessionWithHandle();
    const before = (await row(session.id)).version;
    expect(await sessions.countTxCodeFailure('acme', session.id, 3)).toBe(1);
    expect((await row(session.id)).version).toBe(before + 1);
  });
});

describe('update: one redemption per offer (compare-and-set)', () => {
  it(`${RACERS} racing redemptions of one offer: one applies`, async () => {
    const { session } = await sessionWithHandle();
    const redeemed = await race(RACERS, () =>
      sessions.update(
        'acme',
        session.id,
        { consumed: true, status: 'fetched' },
        { expected: { consumed: false, statuses: ['active', 'fetched'] } },
      ),
    );
    expect(redeemed.filter((r) => r !== undefined)).toHaveLength(1);
    expect((await row(session.id)).consumed).toBeTruthy();
  });

  it(`${RACERS} racing appends to the metadata: none lost, each a version`, async () => {
    const { session } = await sessionWithHandle({ public: { notes: [] } });
    const before = (await row(session.id)).version;
    await race(RACERS, (i) =>
      sessions.update('acme', session.id, (current) => ({ public: { notes: [...((current.public.notes as number[]) ?? []), i] } })),
    );
    const after = await row(session.id);
    expect((JSON.parse(after.public_data).notes as number[]).sort((a, b) => a - b)).toEqual(Array.from({ length: RACERS }, (_, i) => i));
    expect(after.version).toBe(before + RACERS);
  });

  it('a write that guards the update: the session changes only when the write touched a row', async () => {
    const { session } = await sessionWithHandle();
    const guard = (value: string) => ({
      query: nonces.consuming('acme', 'guard', value),
      guards: true,
    });
    const unknown = await sessions.update('acme', session.id, { status: 'fetched' }, { writes: [guard('never-issued')] });
    expect(unknown).toBeUndefined();
    expect((await row(session.id)).status).toBe('active');
    const value = await nonces.issue('acme', 'guard', 60);
    const guarded = await sessions.update(
      'acme',
      session.id,
      { status: 'fetched' },
      { writes: [guard(value)], log: { level: 'info', message: 'guarded change' } },
    );
    expect(guarded?.status).toBe('fetched');
    expect(await nonces.consume('acme', 'guard', value)).toBe(false);
    const logs = await svc.db.selectFrom('session_logs').select('message').where('session_id', '=', session.id).execute();
    expect(logs.map((l) => l.message)).toContain('guarded change');
  });
});

describe('update: what goes with the change', () => {
  it('announces a change of status once, with the status before; a change without one announces nothing', async () => {
    const { session } = await sessionWithHandle();
    const events = await eventsDuring(
      session.id,
      async () => {
        await sessions.update('acme', session.id, { public: { note: 1 } });
        await sessions.update('acme', session.id, { status: 'fetched' }, { log: { level: 'info', message: 'moved' } });
        await sessions.update('acme', session.id, { public: { note: 2 } });
      },
      1,
    );
    expect(events).toEqual(['active>fetched']);
  });

  it('tells the in-process status listeners once per change of status (a change without one tells none); the log line goes only with an applied change', async () => {
    const { session } = await sessionWithHandle();
    const told: string[] = [];
    sessions.onStatusChange((state, previous) => {
      if (state.id === session.id) told.push(`${previous}>${state.status}`);
    });
    await sessions.update('acme', session.id, { public: { note: 1 } });
    await sessions.update('acme', session.id, { status: 'fetched' }, { log: { level: 'info', message: 'moved on' } });
    await sessions.update('acme', session.id, { public: { note: 2 } }, { log: { level: 'info', message: 'noted' } });
    // A change the compare-and-set refused writes no log line.
    expect(
      await sessions.update(
        'acme',
        session.id,
        { public: { note: 3 } },
        { expected: { statuses: ['active'] }, log: { level: 'info', message: 'refused' } },
      ),
    ).toBeUndefined();
    expect(told).toEqual(['active>fetched']);
    const logs = await svc.db.selectFrom('session_logs').select('message').where('session_id', '=', session.id).execute();
    expect(
      logs
        .map((l) => l.message)
        .filter((m) => ['moved on', 'noted', 'refused'].includes(m))
        .sort(),
    ).toEqual(['moved on', 'noted']);
  });

  it('gives up, naming the session, when the compare-and-set loses on each of its 50 attempts', async () => {
    const { session } = await sessionWithHandle();
    // Stands in for writers that change the session between every read and write: a trigger that
    // leaves this session's row unchanged, so every compare-and-set finds no row to update.
    const trigger = `lose_every_update_${session.id.replace(/[^a-z0-9]/gi, '')}`;
    if (engine === 'postgres') {
      await sql`create function ${sql.raw(trigger)}() returns trigger language plpgsql as 'begin return null; end'`.execute(svc.db);
      await sql`create trigger ${sql.raw(trigger)} before update on sessions for each row
        when (old.id = ${sql.lit(session.id)}) execute function ${sql.raw(trigger)}()`.execute(svc.db);
    } else {
      await sql`create trigger ${sql.raw(trigger)} before update on sessions for each row
        when old.id = ${sql.lit(session.id)} begin select raise(ignore); end`.execute(svc.db);
    }
    let attempts = 0;
    try {
      const update = sessions.update('acme', session.id, () => {
        attempts++;
        return { status: 'fetched' };
      });
      await expect(update).rejects.toThrow(`session ${session.id}: changed by others on each of 50 attempts`);
      expect(attempts).toBe(50);
    } finally {
      await sql`drop trigger ${sql.raw(trigger)}${engine === 'postgres' ? sql` on sessions` : sql``}`.execute(svc.db);
      if (engine === 'postgres') await sql`drop function ${sql.raw(trigger)}()`.execute(svc.db);
    }
    expect((await row(session.id)).status).toBe('active');
  });

  it("a `from` read of another session, or of another tenant's, is not taken for this session's row", async () => {
    const { session } = await sessionWithHandle({ public: { owner: 'this' } });
    const { session: sibling } = await sessionWithHandle({ public: { owner: 'sibling' } });
    const { session: foreign } = await sessionWithHandle({ tenant: 'other', public: { owner: 'foreign' } });
    for (const from of [await sessions.find('acme', sibling.id), await sessions.find('other', foreign.id)]) {
      const changed = await sessions.update('acme', session.id, (current) => ({ public: { seen: current.public.owner } }), {
        from: from as NonNullable<typeof from>,
      });
      expect(changed?.id).toBe(session.id);
      expect(changed?.public.seen).toBe('this');
    }
    expect((await sessions.find('acme', session.id))?.public.seen).toBe('this');
  });

  it('a session that is gone: undefined', async () => {
    expect(await sessions.update('acme', 'no-such-session', { status: 'fetched' })).toBeUndefined();
  });

  it('a change computed from a stale read is tried again from the current row; a write that does not guard it is sent once', async () => {
    const { session } = await sessionWithHandle();
    const stale = (await sessions.find('acme', session.id)) as NonNullable<Awaited<ReturnType<SessionService['find']>>>;
    await sessions.update('acme', session.id, { public: { note: 'meanwhile' } });
    const logLine = () => ({
      query: svc.db
        .insertInto('session_logs')
        .values({ session_id: session.id, level: 'info', message: 'sent along', details: null, created_at: new Date().toISOString() })
        .returning('seq'),
      guards: false,
    });
    const changed = await sessions.update('acme', session.id, { status: 'fetched' }, { from: stale, writes: [logLine()] });
    expect(changed?.status).toBe('fetched');
    expect(changed?.public.note).toBe('meanwhile');
    const logs = await svc.db.selectFrom('session_logs').select('message').where('session_id', '=', session.id).execute();
    expect(logs.filter((l) => l.message === 'sent along')).toHaveLength(1);
  });

  it('a write that does not guard the change is sent with a first attempt that applies', async () => {
    const { session } = await sessionWithHandle();
    const write = {
      query: svc.db
        .insertInto('session_logs')
        .values({ session_id: session.id, level: 'info', message: 'first try', details: null, created_at: new Date().toISOString() })
        .returning('seq'),
      guards: false,
    };
    expect((await sessions.update('acme', session.id, { status: 'fetched' }, { writes: [write] }))?.status).toBe('fetched');
    const logs = await svc.db.selectFrom('session_logs').select('message').where('session_id', '=', session.id).execute();
    expect(logs.filter((l) => l.message === 'first try')).toHaveLength(1);
  });

  it('a write that does not guard the change lets it apply even when the write touched no row', async () => {
    const { session } = await sessionWithHandle();
    const touchesNothing = {
      query: svc.db.updateTable('nonces').set({ purpose: 'none' }).where('hash', '=', 'no-such-nonce').returning('hash'),
      guards: false,
    };
    const changed = await sessions.update('acme', session.id, { status: 'fetched' }, { writes: [touchesNothing] });
    expect(changed?.status).toBe('fetched');
    expect((await row(session.id)).status).toBe('fetched');
  });

  it('a guarding write that touched its row is sent again with the retry, and the change applies', async () => {
    const { session } = await sessionWithHandle();
    const stale = (await sessions.find('acme', session.id)) as NonNullable<Awaited<ReturnType<SessionService['find']>>>;
    await sessions.update('acme', session.id, { public: { note: 'meanwhile' } });
    const value = await nonces.issue('acme', 'guard-again', 60);
    // Idempotent, as a guarding write must be: it touches the nonce's row every time it is sent.
    const touch = {
      query: svc.db
        .updateTable('nonces')
        .set({ purpose: 'guard-again' })
        .where('hash', '=', hashHandle(`guard-again:${value}`))
        .returning('hash'),
      guards: true,
    };
    const changed = await sessions.update('acme', session.id, { status: 'fetched' }, { from: stale, writes: [touch] });
    expect(changed?.status).toBe('fetched');
  });
});

describe('updateSessionAt: the compare-and-set statement itself', () => {
  it('with nothing sent along: applies at the version read, and reports no writes', async () => {
    const { session } = await sessionWithHandle();
    expect(await updateSessionAt(svc.db, 'acme', session.id, 0, { status: 'fetched' })).toEqual({ updated: true, written: [] });
    expect(await updateSessionAt(svc.db, 'acme', session.id, 0, { status: 'completed' }, {})).toEqual({ updated: false, written: [] });
    expect(await row(session.id)).toMatchObject({ status: 'fetched', version: 1 });
  });

  it('writes that follow the update are made when it applies, and not at a stale version', async () => {
    const { session } = await sessionWithHandle();
    const following = (message: string) => ({
      follows: [addingLog(svc.db, { level: 'info', message, details: null, created_at: new Date().toISOString() })],
    });
    const applied = await updateSessionAt(svc.db, 'acme', session.id, 0, { status: 'fetched' }, following('followed the change'));
    expect(applied).toEqual({ updated: true, written: [] });
    const stale = await updateSessionAt(svc.db, 'acme', session.id, 0, { status: 'completed' }, following('followed a stale change'));
    expect(stale).toEqual({ updated: false, written: [] });
    const messages = await logMessages(session.id);
    expect(messages).toContain('followed the change');
    expect(messages).not.toContain('followed a stale change');
  });

  it("another tenant's session is not updated", async () => {
    const { session } = await sessionWithHandle();
    expect(await updateSessionAt(svc.db, 'other', session.id, 0, { status: 'fetched' })).toEqual({ updated: false, written: [] });
    expect(await row(session.id)).toMatchObject({ status: 'active', version: 0 });
  });
});

describe('moveByHandle: the wallet fetching its offer or request moves the session once', () => {
  const fetch = (handle: string, tenantId?: string) =>
    sessions.moveByHandle(CODE, handle, { from: 'active', to: 'fetched', tenantId, log: { level: 'info', message: 'fetched by handle' } });

  it(`${RACERS} racing fetches: one moves the session, every one reads it; one log line and one status event`, async () => {
    const { session, handle } = await sessionWithHandle();
    const events = await eventsDuring(
      session.id,
      async () => {
        const results = await race(RACERS, () => fetch(handle, 'acme'));
        expect(results.filter((r) => r.moved)).toHaveLength(1);
        expect(results.every((r) => r.session?.id === session.id)).toBe(true);
      },
      1,
    );
    expect(events).toEqual(['active>fetched']);
    expect(await row(session.id)).toMatchObject({ status: 'fetched', version: 1 });
    expect((await logMessages(session.id)).filter((m) => m === 'fetched by handle')).toHaveLength(1);
  });

  it('without a tenant named: the session of whichever tenant the handle is', async () => {
    const { session, handle } = await sessionWithHandle({ tenant: 'other' });
    const result = await fetch(handle);
    expect(result.moved).toBe(true);
    expect(result.session?.status).toBe('active');
    expect((await row(session.id)).status).toBe('fetched');
  });

  it("another tenant's session is neither read nor moved; nor is a session in another status, or one of an expired handle", async () => {
    const foreign = await sessionWithHandle({ tenant: 'other' });
    expect(await fetch(foreign.handle, 'acme')).toEqual({ moved: false });
    const fetched = await sessionWithHandle();
    await setRow(fetched.session.id, { status: 'fetched' });
    const again = await fetch(fetched.handle, 'acme');
    expect(again.moved).toBe(false);
    expect(again.session?.id).toBe(fetched.session.id);
    const lapsed = await sessionWithHandle({ handleSeconds: -1 });
    expect(await fetch(lapsed.handle, 'acme')).toEqual({ moved: false });
    for (const { session } of [foreign, fetched, lapsed]) {
      expect((await row(session.id)).version).toBe(0);
      expect(await logMessages(session.id)).not.toContain('fetched by handle');
    }
  });
});

describe('consumeByHandle: read and redeem in one statement (PostgreSQL; elsewhere the caller reads, then updates)', () => {
  const redeem = (handle: string, extra: Record<string, unknown> = {}) =>
    sessions.consumeByHandle(CODE, handle, { from: ['active', 'fetched'], to: 'fetched', tenantId: 'acme', ...extra });

  it.runIf(engine === 'sqlite')('is no single statement on SQLite: undefined', async () => {
    const { handle } = await sessionWithHandle();
    expect(await redeem(handle)).toBeUndefined();
  });

  describe.runIf(engine === 'postgres')('on PostgreSQL', () => {
    it(`${RACERS} racing redemptions: one redeems; every one reads the offer`, async () => {
      const { session, handle } = await sessionWithHandle();
      const results = await race(RACERS, () => redeem(handle, { log: { level: 'info', message: 'redeemed in one' } }));
      expect(results.filter((r) => r?.moved)).toHaveLength(1);
      expect(results.every((r) => r?.session?.id === session.id)).toBe(true);
      const stored = await row(session.id);
      expect(stored).toMatchObject({ status: 'fetched' });
      expect(stored.consumed).toBeTruthy();
      expect(stored.consumed_at).not.toBeNull();
      const logs = await svc.db.selectFrom('session_logs').select('message').where('session_id', '=', session.id).execute();
      expect(logs.filter((l) => l.message === 'redeemed in one')).toHaveLength(1);
    });

    it('redeems nothing of another tenant, past its expiry, in another status, already redeemed, or failing `holds`', async () => {
      const other = await sessionWithHandle({ tenant: 'other' });
      expect(await redeem(other.handle)).toEqual({ moved: false, inserted: true });
      const lapsed = await sessionWithHandle();
      await setRow(lapsed.session.id, { expires_at: new Date(Date.now() - 1000).toISOString() });
      expect((await redeem(lapsed.handle))?.moved).toBe(false);
      const failed = await sessionWithHandle();
      await setRow(failed.session.id, { status: 'failed' });
      expect((await redeem(failed.handle))?.moved).toBe(false);
      const used = await sessionWithHandle();
      await setRow(used.session.id, { consumed: 1 });
      expect((await redeem(used.handle))?.moved).toBe(false);
      const held = await sessionWithHandle();
      expect((await redeem(held.handle, { holds: sql<boolean>`false` }))?.moved).toBe(false);
      expect((await redeem(held.handle, { holds: sql<boolean>`found.tx_code_failed_attempts < 1` }))?.moved).toBe(true);
      for (const id of [lapsed.session.id, failed.session.id, used.session.id]) expect((await row(id)).version).toBe(0);
    });

    it(`${RACERS} racing redemptions announce the change of status once; a redemption that keeps the status announces none`, async () => {
      const offer = await sessionWithHandle();
      const events = await eventsDuring(offer.session.id, () => race(RACERS, () => redeem(offer.handle)), 1);
      expect(events).toEqual(['active>fetched']);
      const fetched = await sessionWithHandle();
      await setRow(fetched.session.id, { status: 'fetched' });
      const kept = await eventsDuring(
        fetched.session.id,
        async () => {
          expect((await redeem(fetched.handle))?.moved).toBe(true);
          // An event to wait for, so that one the redemption sent would have arrived before it.
          await sessions.update('acme', fetched.session.id, { status: 'completed' });
        },
        1,
      );
      expect(kept).toEqual(['fetched>completed']);
    });

    it('the statement without an event to send: moves and answers the same', async () => {
      const { session, handle } = await sessionWithHandle();
      const moved = await moveByHandle(svc.db, hashHandle(handle), CODE, {
        from: ['active'],
        to: 'fetched',
        now: new Date().toISOString(),
      });
      expect(moved).toMatchObject({ moved: true, inserted: true, row: { id: session.id, status: 'active' } });
      expect((await row(session.id)).status).toBe('fetched');
    });

    it('with a once-only value: redeems only when the value is new, and remembers it either way at most once', async () => {
      const jti = secret();
      const first = await sessionWithHandle();
      const second = await sessionWithHandle();
      const once = () => nonces.remembering('acme', 'dpop-jti', jti, 60);
      expect(await redeem(first.handle, { once: once() })).toMatchObject({ moved: true, inserted: true });
      expect(await redeem(second.handle, { once: once() })).toMatchObject({ moved: false, inserted: false });
      expect((await row(second.session.id)).consumed).toBeFalsy();
    });
  });
});

describe('takeConfiguration: each configuration once per round, with its c_nonce', () => {
  const take = (sessionId: string, round = 0, spend?: ReturnType<NonceStore['consuming']>) =>
    takeConfiguration(svc.db, 'acme', { sessionId, configurationId: 'pid', round }, svc.clock.now(), spend);

  it(`${RACERS} racing takes of one round: one; the next round: one more`, async () => {
    const { session } = await sessionWithHandle();
    const taken = await race(RACERS, () => take(session.id));
    expect(taken.filter((t) => t.taken)).toHaveLength(1);
    expect(taken.every((t) => t.spent)).toBe(true);
    expect((await take(session.id, 1)).taken).toBe(true);
    expect((await take(session.id, 1)).taken).toBe(false);
  });

  it('with a c_nonce: taken only if the nonce was spent, and the nonce spent once', async () => {
    const { session } = await sessionWithHandle();
    expect(await take(session.id, 0, nonces.consuming('acme', 'c-nonce', 'never-issued'))).toEqual({ spent: false, taken: false });
    expect(await svc.db.selectFrom('configurations_taken').select('round').where('session_id', '=', session.id).execute()).toHaveLength(0);
    const nonce = await nonces.issue('acme', 'c-nonce', 60);
    const results = await race(RACERS, (i) => take(session.id, i, nonces.consuming('acme', 'c-nonce', nonce)));
    expect(results.filter((r) => r.spent && r.taken)).toHaveLength(1);
    expect(results.filter((r) => !r.spent && !r.taken)).toHaveLength(RACERS - 1);
  });

  it(`${RACERS} racing takes of one round, each with its own c_nonce: one taken, every nonce spent`, async () => {
    const { session } = await sessionWithHandle();
    const own = await race(RACERS, () => nonces.issue('acme', 'c-nonce', 60));
    const results = await race(RACERS, (i) => take(session.id, 0, nonces.consuming('acme', 'c-nonce', own[i] as string)));
    expect(results.filter((r) => r.taken)).toHaveLength(1);
    expect(results.every((r) => r.spent)).toBe(true);
  });
});

describe('findByHandleInserting: a read with a once-only value remembered in the same round trip', () => {
  it(`${RACERS} racing reads with one value: every one reads the session, one added the value`, async () => {
    const { session, handle } = await sessionWithHandle();
    const jti = secret();
    const reads = await race(RACERS, () => sessions.findByHandleInserting(CODE, handle, nonces.remembering('acme', 'dpop-jti', jti, 60)));
    expect(
      count(
        reads.map((r) => r.inserted),
        true,
      ),
    ).toBe(1);
    expect(reads.every((r) => r.session?.id === session.id)).toBe(true);
  });

  it('an unknown or expired handle reads no session, and the value is still remembered', async () => {
    const jti = secret();
    const unknown = await sessions.findByHandleInserting(CODE, secret(), nonces.remembering('acme', 'dpop-jti', jti, 60));
    expect(unknown).toEqual({ inserted: true, session: undefined });
    const { handle } = await sessionWithHandle({ handleSeconds: -1 });
    expect(await sessions.findByHandleInserting(CODE, handle, nonces.remembering('acme', 'dpop-jti', jti, 60))).toEqual({
      inserted: false,
      session: undefined,
    });
  });
});

describe('update: several writes along, and the attempts they take', () => {
  const guard = (value: string) => ({ query: nonces.consuming('acme', 'guard-many', value), guards: true });
  const logLine = (sessionId: string, message: string) => ({
    query: svc.db
      .insertInto('session_logs')
      .values({ session_id: sessionId, level: 'info', message, details: null, created_at: new Date().toISOString() })
      .returning('seq'),
    guards: false,
  });

  it('a write that does not guard the change and touched no row: the change applies at its first attempt', async () => {
    const { session } = await sessionWithHandle();
    const touchesNothing = {
      query: svc.db.updateTable('nonces').set({ purpose: 'none' }).where('hash', '=', 'no-such-nonce').returning('hash'),
      guards: false,
    };
    let computed = 0;
    const change = () => {
      computed++;
      return { status: 'fetched' as const };
    };
    expect((await sessions.update('acme', session.id, change, { writes: [touchesNothing] }))?.status).toBe('fetched');
    expect((await row(session.id)).version).toBe(1);
    expect(computed).toBe(1);
  });

  it('two guarding writes and one that does not guard: the change applies only when both guards touched their row', async () => {
    const { session } = await sessionWithHandle();
    const first = await nonces.issue('acme', 'guard-many', 60);
    const refused = await sessions.update(
      'acme',
      session.id,
      { status: 'fetched' },
      { writes: [guard(first), logLine(session.id, 'along, refused'), guard('never-issued')] },
    );
    expect(refused).toBeUndefined();
    expect((await row(session.id)).status).toBe('active');
    const second = await nonces.issue('acme', 'guard-many', 60);
    const third = await nonces.issue('acme', 'guard-many', 60);
    const applied = await sessions.update(
      'acme',
      session.id,
      { status: 'fetched' },
      { writes: [guard(second), logLine(session.id, 'along, applied'), guard(third)] },
    );
    expect(applied?.status).toBe('fetched');
    expect(await nonces.consume('acme', 'guard-many', second)).toBe(false);
    expect(await nonces.consume('acme', 'guard-many', third)).toBe(false);
    expect((await logMessages(session.id)).filter((m) => m.startsWith('along, '))).toEqual(['along, refused', 'along, applied']);
  });
});
