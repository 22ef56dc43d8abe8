// Migrations at start-up: a current schema is left as it is (a start after the first takes a fast
// path that reads the applied migrations once); a schema newer than this version knows is refused,
// as the migrator itself refuses it, not started on silently.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { migrationsFor } from '../../src/migrations/index.js';
import { connect, type Db } from '../../src/platform/db/connect.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';

let database: TestDatabase;
let db: Db;
beforeAll(async () => {
  database = await freshDatabase();
  db = await connect(loadConfig({ NODE_ENV: 'test', MASTER_SECRET: randomBytes(32).toString('base64url'), ...database.env }));
});
afterAll(async () => {
  await db.close();
  await database.drop();
});

const applied = async () =>
  (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db.kysely)).rows.map((r) => r.name);

describe('migrations at start-up', () => {
  it('applies every migration once, and a second run on the current schema changes nothing', async () => {
    const migrations = migrationsFor(db.dialect);
    await migrate(db, migrations);
    const first = await applied();
    expect(first).toEqual(Object.keys(migrations).sort());
    await migrate(db, migrations);
    expect(await applied()).toEqual(first);
  });

  it('refuses a schema with a migration this version does not know', async () => {
    const migrations = migrationsFor(db.dialect);
    await sql`insert into kysely_migration (name, timestamp) values (${'9999_from_a_newer_version'}, ${new Date().toISOString()})`.execute(
      db.kysely,
    );
    await expect(migrate(db, migrations)).rejects.toThrow(/database migration failed: .*9999_from_a_newer_version/);
  });
});

describe('0018-status-entry-status', () => {
  it('gives each existing status entry the status its list holds for it', async () => {
    const older = await freshDatabase();
    const olderDb = await connect(loadConfig({ NODE_ENV: 'test', MASTER_SECRET: randomBytes(32).toString('base64url'), ...older.env }));
    try {
      const all = migrationsFor(olderDb.dialect);
      await migrate(olderDb, Object.fromEntries(Object.entries(all).filter(([name]) => name < '0018')));
      const now = new Date().toISOString();
      const bool = (value: boolean) => (olderDb.dialect === 'postgres' ? value : Number(value));
      await sql`insert into tenants (id, name, status, created_at, updated_at) values ('t', 'T', 'active', ${now}, ${now})`.execute(
        olderDb.kysely,
      );
      // 2 bits per entry, least significant first: entry 1 suspended (2), entry 2 revoked (1), entries 0 and 3 valid.
      const bitset = Buffer.from([0b0001_1000]);
      await sql`insert into status_lists (tenant_id, id, bits, capacity, ttl, immediate_update, enable_aggregation, used_entries,
        permutation_key, bitset, version, token_seq, created_at, updated_at)
        values ('t', 'l', 2, 4, 60, ${bool(false)}, ${bool(true)}, 4, 'k', ${bitset}, 1, 0, ${now}, ${now})`.execute(olderDb.kysely);
      for (const idx of [0, 1, 2, 3]) {
        await sql`insert into status_entries (tenant_id, list_id, idx, session_id, credential_configuration_id, created_at)
          values ('t', 'l', ${idx}, ${`s${idx}`}, 'c', ${now})`.execute(olderDb.kysely);
      }
      await migrate(olderDb, all);
      const rows = await sql<{ idx: number; status: number }>`select idx, status from status_entries order by idx`.execute(olderDb.kysely);
      expect(rows.rows.map((row) => Number(row.status))).toEqual([0, 2, 1, 0]);
    } finally {
      await olderDb.close();
      await older.drop();
    }
  });
});

describe('0020-credential-config-scopes', () => {
  it('gives every existing configuration a scope unique in its tenant: its own when valid and free, else its id', async () => {
    const older = await freshDatabase();
    const olderDb = await connect(loadConfig({ NODE_ENV: 'test', MASTER_SECRET: randomBytes(32).toString('base64url'), ...older.env }));
    try {
      const all = migrationsFor(olderDb.dialect);
      await migrate(olderDb, Object.fromEntries(Object.entries(all).filter(([name]) => name < '0020')));
      for (const tenant of ['t', 'u']) {
        await sql`insert into tenants (id, name, status, created_at, updated_at) values (${tenant}, ${tenant}, 'active', ${'2026-01-01T00:00:00.000Z'}, ${'2026-01-01T00:00:00.000Z'})`.execute(
          olderDb.kysely,
        );
      }
      // In creation order: [tenant, id, stored scope]. 'b' holds 'a' as its scope, so 'a' (created later) cannot default to it.
      const stored: [string, string, string | undefined][] = [
        ['t', 'first', 'shared'],
        ['t', 'second', 'shared'],
        ['t', 'b', 'a'],
        ['t', 'a', undefined],
        ['t', 'spaced', 'two words'],
        ['t', 'plain', undefined],
        ['u', 'other', 'shared'],
      ];
      for (const [i, [tenant, id, scope]] of stored.entries()) {
        const created = new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
        const document = JSON.stringify({ config: { format: 'dc+sd-jwt', ...(scope !== undefined && { scope }) }, fields: [] });
        await sql`insert into credential_configs (tenant_id, id, document, created_at, updated_at)
          values (${tenant}, ${id}, ${document}, ${created}, ${created})`.execute(olderDb.kysely);
      }
      await migrate(olderDb, all);
      const rows = await sql<{ tenant_id: string; id: string; scope: string; document: string }>`
        select tenant_id, id, scope, document from credential_configs order by tenant_id, id`.execute(olderDb.kysely);
      const scopes = Object.fromEntries(rows.rows.map((row) => [`${row.tenant_id}/${row.id}`, row.scope]));
      expect(scopes).toEqual({
        't/first': 'shared',
        't/second': 'second',
        't/b': 'a',
        't/a': 'a~2',
        't/spaced': 'spaced',
        't/plain': 'plain',
        'u/other': 'shared',
      });
      for (const row of rows.rows) expect(JSON.parse(row.document).config.scope, row.id).toBe(row.scope);
      const now = new Date().toISOString();
      const duplicate = sql`insert into credential_configs (tenant_id, id, document, scope, created_at, updated_at)
        values ('t', 'late', '{}', 'shared', ${now}, ${now})`.execute(olderDb.kysely);
      await expect(duplicate).rejects.toThrow();
    } finally {
      await olderDb.close();
      await older.drop();
    }
  });
});

describe('0022-webhook-deliveries', () => {
  it('gives open issuance sessions their webhook target, and any write that changes the status writes the event', async () => {
    const older = await freshDatabase();
    const olderDb = await connect(loadConfig({ NODE_ENV: 'test', MASTER_SECRET: randomBytes(32).toString('base64url'), ...older.env }));
    try {
      const all = migrationsFor(olderDb.dialect);
      await migrate(olderDb, Object.fromEntries(Object.entries(all).filter(([name]) => name < '0022')));
      const now = new Date().toISOString();
      const later = new Date(Date.now() + 600_000).toISOString();
      const bool = (value: boolean) => (olderDb.dialect === 'postgres' ? value : Number(value));
      await sql`insert into tenants (id, name, status, created_at, updated_at) values ('t', 'T', 'active', ${now}, ${now})`.execute(
        olderDb.kysely,
      );
      for (const [id, status, endpoint] of [
        ['open', 'active', 'crm'],
        ['done', 'completed', 'crm'],
        ['quiet', 'active', null],
      ] as const) {
        await sql`insert into sessions (id, tenant_id, kind, status, consumed, tx_code_failed_attempts, public_data, anonymized,
          created_at, updated_at, expires_at)
          values (${id}, 't', 'issuance', ${status}, ${bool(false)}, 0, ${JSON.stringify({ webhookEndpointId: endpoint })}, ${bool(false)},
            ${now}, ${now}, ${later})`.execute(olderDb.kysely);
      }
      await migrate(olderDb, all);
      const targets = await sql<{ id: string; webhook_target: string | null }>`select id, webhook_target from sessions order by id`.execute(
        olderDb.kysely,
      );
      expect(targets.rows).toEqual([
        { id: 'done', webhook_target: null },
        { id: 'open', webhook_target: 'crm' },
        { id: 'quiet', webhook_target: null },
      ]);
      // A plain UPDATE, as no service path writes it: the trigger still makes the event, once per change of status.
      await sql`update sessions set status = 'fetched', updated_at = ${now} where id in ('open', 'quiet')`.execute(olderDb.kysely);
      await sql`update sessions set updated_at = ${later} where id = 'open'`.execute(olderDb.kysely);
      const events = await sql<{
        id: string;
        session_id: string;
        type: string;
        endpoint: string;
        status: string;
        previous_status: string;
        state: string;
      }>`
        select id, session_id, type, endpoint, status, previous_status, state from webhook_deliveries`.execute(olderDb.kysely);
      expect(events.rows).toEqual([
        {
          id: expect.stringMatching(/^msg_[0-9a-f]{32}$/),
          session_id: 'open',
          type: 'issuance.status',
          endpoint: 'crm',
          status: 'fetched',
          previous_status: 'active',
          state: 'pending',
        },
      ]);
    } finally {
      await olderDb.close();
      await older.drop();
    }
  });
});
