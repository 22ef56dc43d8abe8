// A year of production data for the growth bench, made in PostgreSQL itself (INSERT ... SELECT over
// generate_series: no row crosses the network, which beats COPY from the client too): for the
// tenants given, sessions of which most are past retention (created 2 to 365 days ago) and the rest
// live (the last 23 hours, some abandoned offers among them), their handles, logs, issued credentials
// and taken configurations, status lists of STATUS_CAPACITY entries filled by batch issuance (10
// credentials per issuance session), and expired nonces waiting for their clean-up.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';

export interface GrowthShape {
  sessions: number;
  liveSessions: number;
  statusEntries: number;
  /** Entries per status list (the service's STATUS_CAPACITY, 10,000 by default). */
  listCapacity: number;
  expiredNonces: number;
}

export const yearShape = (scale: number): GrowthShape => ({
  sessions: Math.round(1_000_000 * scale),
  liveSessions: Math.round(100_000 * scale),
  statusEntries: Math.round(10_000_000 * scale),
  listCapacity: 10_000,
  expiredNonces: Math.round(100_000 * scale),
});

/** The id of generated session g (1-based), as the service's ids look (a UUID). */
const SESSION_ID = (g: string) => `md5('session-' || ${g})::uuid::text`;

/** Fills the database; answers the seconds each table took. */
export async function buildYear(client: pg.Client, tenants: string[], shape: GrowthShape): Promise<Record<string, number>> {
  const timings: Record<string, number> = {};
  // Each table's secondary indexes are built after its rows are in (one sort each instead of a random
  // insertion per row); the primary keys stay, as foreign keys hang on them.
  const timed = async (table: string, work: () => Promise<unknown>) => {
    const started = performance.now();
    const { rows: indexes } = await client.query<{ name: string; definition: string }>(
      `select indexname as name, indexdef as definition from pg_indexes where schemaname = current_schema() and tablename = $1
         and indexname not in (select conname from pg_constraint where conrelid = $1::regclass)`,
      [table],
    );
    for (const index of indexes) await client.query(`drop index ${index.name}`);
    await work();
    for (const index of indexes) await client.query(index.definition);
    timings[table] = (performance.now() - started) / 1000;
  };
  // A bulk load: losing it on a crash costs nothing, so no commit waits for the WAL flush; the rows
  // are made consistent, so the foreign keys' per-row triggers are skipped (this session only).
  await client.query('set synchronous_commit = off');
  await client.query('set session_replication_role = replica');
  const params = [tenants, shape.sessions, shape.liveSessions];
  // g <= live: created in the last 23 hours (within SESSION_TTL); else 2 to 365 days ago.
  const generated = `
    from generate_series(1, $2::int) g,
    lateral (select $1::text[] as tenants) t,
    lateral (select case when g <= $3 then now() - (g % 1380 + 1) * interval '1 minute'
      else now() - interval '2 days' - (g % 363) * interval '1 day' - (g % 86400) * interval '1 second' end as created) c`;
  const issuance = `g % 10 < 7`;
  const abandoned = `g <= $3 and g % 20 = 0`;
  await timed('sessions', () =>
    client.query(
      `insert into sessions (id, tenant_id, kind, status, client_id, consumed, consumed_at, tx_code_failed_attempts, error_reason,
         public_data, private_data, anonymized, created_at, updated_at, expires_at, version, webhook_target)
       select ${SESSION_ID('g')}, tenants[1 + g % array_length(tenants, 1)],
         case when ${issuance} then 'issuance' else 'presentation' end,
         case when ${abandoned} then 'active' when g % 50 = 0 then 'failed' else 'completed' end,
         null, not (${abandoned}), case when ${abandoned} then null else created + interval '20 seconds' end, 0, null,
         '{"flow":"pre_authorized_code","responseType":"uri","credentialConfigurationIds":["pid"],"useDcApi":false}',
         repeat(md5(g::text), 14), false, created, created + interval '20 seconds', created + interval '10 minutes', 3, null
       ${generated}`,
      params,
    ),
  );
  await timed('session_handles', () =>
    client.query(
      `insert into session_handles (hash, purpose, session_id, expires_at)
       select encode(sha256(convert_to(purpose || g, 'UTF8')), 'base64'), purpose, ${SESSION_ID('g')}, created + interval '10 minutes'
       ${generated}, unnest(array['pre-authorized_code', 'access_token']) purpose
       where ${issuance}`,
      params,
    ),
  );
  await timed('session_logs', () =>
    client.query(
      `insert into session_logs (session_id, level, message, details, created_at)
       select ${SESSION_ID('g')}, 'info', message, '{}', created
       ${generated}, unnest(array['session created', 'offer fetched', 'credential issued']) message`,
      params,
    ),
  );
  await timed('issued_credentials', () =>
    client.query(
      `insert into issued_credentials (id, tenant_id, session_id, credential_configuration_id, format, notification_id, notification_event, created_at)
       select md5('credential-' || g)::uuid::text, tenants[1 + g % array_length(tenants, 1)], ${SESSION_ID('g')}, 'pid', 'dc+sd-jwt',
         md5('notification-' || g), 'credential_accepted', created
       ${generated} where ${issuance} and not (${abandoned})`,
      params,
    ),
  );
  await timed('configurations_taken', () =>
    client.query(
      `insert into configurations_taken (tenant_id, session_id, credential_configuration_id, round, created_at)
       select tenants[1 + g % array_length(tenants, 1)], ${SESSION_ID('g')}, 'pid', 0, created
       ${generated} where ${issuance} and not (${abandoned})`,
      params,
    ),
  );
  const lists = await insertStatusLists(client, tenants, shape);
  timings.status_lists = lists.seconds;
  await timed('status_entries', () =>
    // Entry i of list l of a tenant; one session in ten had ten credentials (batch issuance).
    client.query(
      `insert into status_entries (tenant_id, list_id, idx, session_id, credential_configuration_id, created_at, status)
       select tenant, list_id, i, ${SESSION_ID('(((n * $2::int + i) / 10) % $3::int + 1)')}, 'pid', now() - interval '100 days',
         case when i % 100 = 7 then 1 else 0 end
       from unnest($1::text[], $4::text[]) with ordinality as l(tenant, list_id, n), generate_series(0, $2::int - 1) i`,
      [lists.tenants, shape.listCapacity, shape.sessions, lists.ids],
    ),
  );
  await timed('nonces', () =>
    client.query(
      `insert into nonces (hash, tenant_id, purpose, expires_at)
       select encode(sha256(convert_to('nonce-' || g, 'UTF8')), 'base64'), ($1::text[])[1 + g % array_length($1::text[], 1)], 'c_nonce',
         now() - interval '1 hour' + g * interval '1 millisecond'
       from generate_series(1, $2::int) g`,
      [tenants, shape.expiredNonces],
    ),
  );
  await client.query('set session_replication_role = origin');
  const analyzing = performance.now();
  await client.query('analyze');
  timings.analyze = (performance.now() - analyzing) / 1000;
  return timings;
}

/** Full lists of listCapacity entries, statusEntries in all, spread over the tenants; their bits set as their entries say. */
async function insertStatusLists(client: pg.Client, tenants: string[], shape: GrowthShape) {
  const started = performance.now();
  const perTenant = Math.max(1, Math.round(shape.statusEntries / shape.listCapacity / tenants.length));
  // Entry i has status 1 when i % 100 = 7 (status_entries above): the same bits in every list.
  const bitset = Buffer.alloc(shape.listCapacity / 8);
  for (let i = 7; i < shape.listCapacity; i += 100) bitset[i >> 3] = (bitset[i >> 3] as number) | (1 << (i & 7));
  const ids: string[] = [];
  const owners: string[] = [];
  for (const tenant of tenants) {
    for (let n = 0; n < perTenant; n++) {
      ids.push(`grown-${n}-${randomBytes(6).toString('hex')}`);
      owners.push(tenant);
    }
  }
  await client.query(
    `insert into status_lists (tenant_id, id, credential_configuration_id, key_chain_id, bits, capacity, ttl, immediate_update,
       enable_aggregation, used_entries, permutation_key, bitset, version, token_seq, created_at, updated_at)
     select tenant, id, 'pid', null, 1, $3::int, 3600, false, false, $3::int, md5(random()::text) || md5(random()::text), $4::bytea, 1, 0,
       now() - interval '200 days' + n * interval '1 hour', now() - interval '100 days'
     from unnest($1::text[], $2::text[]) with ordinality as l(tenant, id, n)`,
    [owners, ids, shape.listCapacity, bitset],
  );
  return { tenants: owners, ids, seconds: (performance.now() - started) / 1000 };
}
