import {
  type ExpressionBuilder,
  type Insertable,
  type OperationNodeSource,
  type RawBuilder,
  type Selectable,
  type SelectQueryBuilder,
  sql,
  type Updateable,
} from 'kysely';
import type { Database, SessionsTable } from '../platform/db/schema.js';
import { type TenantDb, tenantDb } from '../platform/db/tenant-db.js';
import { type Executor, inTransaction, isPostgres, type OnceInsert } from '../platform/db/values.js';
import { OPEN_STATUSES, type SessionStatus } from './model.js';

export const sessionQuery = (db: TenantDb, id: string) => db.selectFrom('sessions').selectAll().where('id', '=', id);
export const findSession = (db: TenantDb, id: string) => sessionQuery(db, id).executeTakeFirst();

/** The session with the summary of its tenant (what the session view shows), in one query. */
export const findSessionWithTenant = (db: TenantDb, id: string) =>
  db
    .selectFrom('sessions')
    .innerJoin('tenants', 'tenants.id', 'sessions.tenant_id')
    .where('sessions.id', '=', id)
    .selectAll('sessions')
    .select(['tenants.name as tenant_name', 'tenants.description as tenant_description', 'tenants.status as tenant_status'])
    .executeTakeFirst();

export type LogRow = { level: string; message: string; details: string | null; created_at: string };

/** What a versioned update sends along in its statement: the session's log line, the event announcing it. */
export interface AlongWithUpdate {
  log?: LogRow;
  /** A SQL expression that sends the event when evaluated (PostgreSQL's pg_notify); evaluated only if the row was updated. */
  notify?: RawBuilder<unknown>;
  /** Writes to other tables, with RETURNING, sent in the same statement (see AlongWrite). */
  writes?: AlongWrite[];
  /** Writes made only when the session was updated, in the same statement on PostgreSQL (see FollowingWrite). */
  follows?: FollowingWrite[];
}

/**
 * A write that follows a session update: SQL over `session`, a row source with the column `id` that
 * holds the session when it was updated and nothing otherwise (PostgreSQL: the CTE of the update, so
 * the write is atomic with it; SQLite: run after it, in its transaction, only when it applied).
 */
export type FollowingWrite = (session: RawBuilder<unknown>) => RawBuilder<unknown>;

/** A timestamp parameter as the engine stores it (PostgreSQL cannot infer a column type in INSERT ... SELECT). */
const timestamp = (db: Executor, iso: string) => (isPostgres(db) ? sql`cast(${iso} as timestamptz)` : sql`${iso}`);

/** Deletes the session's handles of these purposes (FollowingWrite). */
export const droppingHandles =
  (purposes: readonly string[]): FollowingWrite =>
  (session) =>
    sql`delete from session_handles where session_id in (select id from ${session}) and purpose in (${sql.join(purposes)})`;

/** Adds a handle to the session (FollowingWrite); a delete of the same statement never sees it (PostgreSQL's snapshot; SQLite runs it later). */
export const addingHandle =
  (db: Executor, row: Omit<HandleRow, 'session_id'>): FollowingWrite =>
  (session) =>
    sql`insert into session_handles (hash, purpose, session_id, expires_at)
      select ${row.hash}, ${row.purpose}, s.id, ${timestamp(db, row.expires_at)} from ${session} as s`;

/** Adds a line to the session's log (FollowingWrite). */
export const addingLog =
  (db: Executor, log: LogRow): FollowingWrite =>
  (session) =>
    sql`insert into session_logs (session_id, level, message, details, created_at)
      select s.id, ${log.level}, ${log.message}, ${log.details}, ${timestamp(db, log.created_at)} from ${session} as s`;

/**
 * A write to another table that goes with a session update (in the order given). PostgreSQL: a sibling CTE of the same
 * statement (it sees no effect of the update, nor the update of it). SQLite: run just before it.
 * `guards`: the session changes only if the write touched a row (so the write must be idempotent:
 * it is sent again when the update loses a race); otherwise it is sent once, whatever the update does.
 */
export interface AlongWrite {
  query: OperationNodeSource & { execute(): Promise<unknown[]> };
  guards: boolean;
}

/**
 * Sets `changes` only while the session is still at `version`, the version the changes were computed
 * from, and moves it to the next one: a compare-and-set that no write made meanwhile can slip under.
 * On PostgreSQL the log line, the event and the writes along go in the same statement (data-modifying
 * CTEs, one round trip, atomic with the change); SQLite runs the writes before and the log line after.
 * `updated`: whether the row was updated; `written`: the rows each write touched.
 */
export async function updateSessionAt(
  db: Executor,
  tenantId: string,
  id: string,
  version: number,
  changes: Updateable<SessionsTable>,
  along: AlongWithUpdate = {},
): Promise<{ updated: boolean; written: number[] }> {
  const { log, notify, writes = [], follows = [] } = along;
  const updateIn = (executor: Executor) =>
    tenantDb(executor, tenantId)
      .updateTable('sessions')
      .set({ ...changes, version: version + 1 })
      .where('id', '=', id)
      .where('version', '=', version);
  if (!isPostgres(db) || (!log && !notify && writes.length === 0 && follows.length === 0)) {
    const written: number[] = [];
    for (const write of writes) {
      written.push((await write.query.execute()).length);
      if (write.guards && written.at(-1) === 0) return { updated: false, written };
    }
    const applied = async (executor: Executor) => {
      const updated = await updateIn(executor).returning('id').executeTakeFirst();
      if (updated && log) await insertLog(executor, { ...log, session_id: id });
      if (updated) for (const follow of follows) await follow(sql`(select ${id} as id)`).execute(executor);
      return { updated: updated !== undefined, written };
    };
    // The writes that follow the update are atomic with it, as in PostgreSQL's one statement.
    return follows.length > 0 ? inTransaction(db, applied) : applied(db);
  }
  let update = updateIn(db);
  const name = (i: number) => sql.raw(`written${i}`);
  writes.forEach((write, i) => {
    if (write.guards) update = update.where(sql<boolean>`exists (select 1 from ${name(i)})`);
  });
  const writtenCtes = writes.map((write, i) => sql`${name(i)} as (${write.query}), `);
  const counts = writes.map((_, i) => sql`, (select count(*) from ${name(i)}) as ${name(i)}`);
  const logged = loggedFrom('updated', log);
  const followed = follows.map((follow, i) => sql`, ${sql.raw(`followed${i}`)} as (${follow(sql`updated`)})`);
  const { rows } = await sql<Record<string, number>>`
    with ${sql.join(writtenCtes, sql``)}updated as (${update.returning('id')})${logged}${sql.join(followed, sql``)}
    select (select count(*) from updated) as updated${sql.join(counts, sql``)}
    ${notify ? sql`, (select ${notify} from updated) as notified` : sql``}`.execute(db);
  const [row] = rows;
  return { updated: Number(row?.updated) > 0, written: writes.map((_, i) => Number(row?.[`written${i}`])) };
}

/** The CTE (`, logged as (...)`) that writes `log` for the session row of the CTE `from`; empty without a log line. */
function loggedFrom(from: 'updated' | 'moved', log: LogRow | undefined) {
  if (!log) return sql``;
  return sql`, logged as (
    insert into session_logs (session_id, level, message, details, created_at)
    select id, ${log.level}, ${log.message}, ${log.details}, cast(${log.created_at} as timestamptz) from ${sql.raw(from)})`;
}

type HandleRow = { hash: string; purpose: string; session_id: string; expires_at: string };

/**
 * Inserts the session with its handles and log line, atomically. PostgreSQL: one statement (sibling
 * data-modifying CTEs; the foreign keys are checked when it ends), sending the event if one is given.
 * SQLite: one transaction.
 */
export async function insertSessionWith(
  db: Executor,
  row: Insertable<SessionsTable> & { tenant_id: string },
  along: { handles: HandleRow[]; log?: LogRow & { session_id: string }; notify?: RawBuilder<unknown> },
) {
  const { tenant_id: tenantId, ...columns } = row;
  const session = tenantDb(db, tenantId).insertInto('sessions', columns);
  const handles = along.handles.length > 0 ? db.insertInto('session_handles').values(along.handles) : undefined;
  const log = along.log && db.insertInto('session_logs').values(along.log);
  if (!isPostgres(db)) {
    await inTransaction(db, async (trx) => {
      await trx.executeQuery(session.compile());
      if (handles) await trx.executeQuery(handles.compile());
      if (log) await trx.executeQuery(log.compile());
    });
    return;
  }
  const ctes = [sql`created as (${session})`];
  if (handles) ctes.push(sql`handles as (${handles})`);
  if (log) ctes.push(sql`logged as (${log})`);
  await sql`with ${sql.join(ctes)} select ${along.notify ?? sql`1`}`.execute(db);
}

/** Updates only while the row still has one of `statuses`: a compare-and-set. */
export async function updateSession(db: TenantDb, id: string, changes: Updateable<SessionsTable>, statuses?: readonly string[]) {
  let query = db
    .updateTable('sessions')
    .set((eb) => ({ ...changes, version: eb('version', '+', 1) }))
    .where('id', '=', id);
  if (statuses) query = query.where('status', 'in', statuses);
  // The row as updated (undefined when the condition failed), so no second read is needed.
  return query.returningAll().executeTakeFirst();
}

/**
 * Counts one more wrong transaction code, in one statement and only while the offer has attempts
 * left and is unredeemed: the count returned is this guess's place (1 to `max`), undefined when no
 * attempt was left. So however many guesses race, at most `max` are ever counted as evaluated.
 */
export async function countTxCodeFailure(db: TenantDb, id: string, max: number) {
  const row = await db
    .updateTable('sessions')
    .set((eb) => ({ tx_code_failed_attempts: eb('tx_code_failed_attempts', '+', 1), version: eb('version', '+', 1) }))
    .where('id', '=', id)
    .where('tx_code_failed_attempts', '<', max)
    .where('consumed', '=', 0)
    .returning('tx_code_failed_attempts')
    .executeTakeFirst();
  return row?.tx_code_failed_attempts;
}

/** insertHandle with the session's log line: one statement on PostgreSQL (sibling CTEs), one transaction on SQLite. */
export async function insertHandleWithLog(db: Executor, row: HandleRow, log: LogRow) {
  const handle = db.insertInto('session_handles').values(row);
  const logged = db.insertInto('session_logs').values({ ...log, session_id: row.session_id });
  if (!isPostgres(db)) {
    await inTransaction(db, async (trx) => {
      await trx.executeQuery(handle.compile());
      await trx.executeQuery(logged.compile());
    });
    return;
  }
  await sql`with handle as (${handle}), logged as (${logged}) select 1`.execute(db);
}

export async function insertHandle(db: Executor, row: HandleRow) {
  await db.insertInto('session_handles').values(row).execute();
}

/** insertHandle as a write that goes along with a session update (AlongWrite). */
export const handleInsert = (db: Executor, row: HandleRow) => db.insertInto('session_handles').values(row).returning('hash');

/** The session a live handle belongs to, read in the same query. */
export const handleQuery = (db: Executor, hash: string, purpose: string, now: string) =>
  db
    .selectFrom('session_handles')
    .innerJoin('sessions', 'sessions.id', 'session_handles.session_id')
    .selectAll('sessions')
    .where('session_handles.hash', '=', hash)
    .where('session_handles.purpose', '=', purpose)
    .where('session_handles.expires_at', '>', now);
export const findHandle = (db: Executor, hash: string, purpose: string, now: string) =>
  handleQuery(db, hash, purpose, now).executeTakeFirst();

/** A change of status decided by the session row alone: the wallet fetching its offer or request, or redeeming a code. */
export interface StatusMove {
  /** The statuses it moves from (an expired session never moves). */
  from: readonly string[];
  to: string;
  now: string;
  /** The session must be this tenant's (else it is neither read nor moved). */
  tenantId?: string;
  /** Also marks the session consumed; it moves only if it was not. */
  consume?: boolean;
  /** A further condition on the session as read (the CTE `found`). */
  holds?: RawBuilder<boolean>;
  /** A once-only value remembered in the same statement; the session moves only if it added its row. */
  once?: OnceInsert;
  log?: LogRow;
  /** The status event, made by the statement from the moved row (`moved`: id, tenant_id, consumed, error_reason, previous_status); sent only when the status changed. */
  notify?: RawBuilder<unknown>;
}

/**
 * PostgreSQL only: reads the session of a live handle and, if `move` allows, moves it (a
 * compare-and-set on the version read), with its log line and event, in one statement. The session
 * as read (before the move), whether it moved, and whether `once` added its row. A session that the
 * conditions allowed but that did not move was written by another statement meanwhile.
 */
export async function moveByHandle(db: Executor, hash: string, purpose: string, move: StatusMove) {
  let found = handleQuery(db, hash, purpose, move.now);
  if (move.tenantId) found = found.where('sessions.tenant_id', '=', move.tenantId);
  const { log, once, notify } = move;
  const conditions = [
    sql`sessions.id = found.id`,
    sql`sessions.version = found.version`,
    sql`found.status in (${sql.join(move.from)})`,
    sql`found.expires_at > ${move.now}`,
    ...(move.consume ? [sql`not found.consumed`] : []),
    ...(move.holds ? [move.holds] : []),
    ...(once ? [sql`exists (select 1 from inserted)`] : []),
  ];
  const consumed = move.consume ? sql`, consumed = true, consumed_at = ${move.now}` : sql``;
  const inserted = once ? sql`inserted as (${once.returning(sql<number>`1`.as('one'))}), ` : sql``;
  const logged = loggedFrom('moved', log);
  const { rows } = await sql<Selectable<SessionsTable> & { moved_rows: number; inserted_rows: number }>`
    with ${inserted}found as (${found}), moved as (
      update sessions set status = ${move.to}${consumed}, updated_at = ${move.now}, version = sessions.version + 1
      from found
      where ${sql.join(conditions, sql` and `)}
      returning sessions.id, sessions.tenant_id, sessions.consumed, sessions.error_reason, found.status as previous_status)${logged}
    select found.*, (select count(*) from moved) as moved_rows, ${once ? sql`(select count(*) from inserted)` : sql`1`} as inserted_rows
      ${notify ? sql`, (select ${notify} from moved where previous_status <> ${move.to}) as notified` : sql``}
    from (select 1) as one left join found on true`.execute(db);
  const { moved_rows: moved, inserted_rows: insertedRows, notified: _, ...row } = rows[0] as (typeof rows)[number] & { notified?: unknown };
  return {
    row: row.id === null ? undefined : (row as Selectable<SessionsTable>),
    moved: Number(moved) > 0,
    inserted: Number(insertedRows) > 0,
  };
}

/**
 * Renames a live handle's purpose, so exactly one of two racing callers succeeds; false when it was not
 * live. With `sessionHolds` (SQL over the handle's session, the table `sessions`), only while it holds,
 * decided in the same statement.
 */
export async function respurposeHandle(
  db: Executor,
  hash: string,
  purpose: string,
  newPurpose: string,
  now: string,
  sessionHolds?: RawBuilder<boolean>,
) {
  let query = db
    .updateTable('session_handles')
    .set({ purpose: newPurpose })
    .where('hash', '=', hash)
    .where('purpose', '=', purpose)
    .where('expires_at', '>', now);
  if (sessionHolds) {
    query = query.where(sql<boolean>`exists (select 1 from sessions where sessions.id = session_handles.session_id and ${sessionHolds})`);
  }
  const result = await query.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * A handle given to the session that spent one, with its log line (spendHandleReading's `issuing`),
 * written only by the caller that spent it.
 */
export interface IssuedWithSpend {
  handle: Omit<HandleRow, 'session_id'>;
  log: LogRow;
}

/**
 * Spends a live handle of the tenant's session and reads that session: one statement on PostgreSQL,
 * with `inserts` (once-only values) as sibling CTEs and the handle spent only if each added its row.
 * The row is returned only to the caller that spent the handle. SQLite: the inserts, then the spend
 * (only if all inserts added their row), then the read, in one transaction. With `issuing`, the
 * spender's session gets that handle and log line in the same statement; `loggedSeq` is the line's
 * seq (for withdrawIssued), absent when nothing was spent.
 */
export async function spendHandleReading(
  db: Executor,
  spend: { hash: string; purpose: string; spentPurpose: string; tenantId: string; now: string },
  inserts: OnceInsert[],
  issuing?: IssuedWithSpend,
): Promise<{ inserted: boolean[]; row: Selectable<SessionsTable> | undefined; loggedSeq?: number }> {
  const ofTenant = sql<boolean>`exists (select 1 from sessions where sessions.id = session_handles.session_id and sessions.tenant_id = ${spend.tenantId})`;
  const spending = (executor: Executor) =>
    executor
      .updateTable('session_handles')
      .set({ purpose: spend.spentPurpose })
      .where('hash', '=', spend.hash)
      .where('purpose', '=', spend.purpose)
      .where('expires_at', '>', spend.now)
      .where(ofTenant);
  if (!isPostgres(db)) {
    return inTransaction(db, async (trx) => {
      const inserted: boolean[] = [];
      for (const insert of inserts) inserted.push((await trx.executeQuery(insert.compile())).numAffectedRows === 1n);
      if (inserted.includes(false)) return { inserted, row: undefined };
      const spent = await spending(trx).returning('session_id').executeTakeFirst();
      const row = spent && (await trx.selectFrom('sessions').selectAll().where('id', '=', spent.session_id).executeTakeFirst());
      if (!spent || !issuing) return { inserted, row };
      await trx
        .insertInto('session_handles')
        .values({ ...issuing.handle, session_id: spent.session_id })
        .execute();
      const logged = await trx
        .insertInto('session_logs')
        .values({ ...issuing.log, session_id: spent.session_id })
        .returning('seq')
        .executeTakeFirstOrThrow();
      return { inserted, row, loggedSeq: logged.seq };
    });
  }
  const name = (i: number) => sql.raw(`inserted${i}`);
  const insertCtes = inserts.map((insert, i) => sql`${name(i)} as (${insert.returning(sql<number>`1`.as('one'))}), `);
  const allInserted = inserts.map((_, i) => sql` and exists (select 1 from ${name(i)})`);
  const counts = inserts.map((_, i) => sql`(select count(*) from ${name(i)}) as ${name(i)}, `);
  const spender = sql`(select session_id as id from spent)`;
  const issuingCtes = issuing
    ? sql`, issued as (${addingHandle(db, issuing.handle)(spender)}), logged as (${addingLog(db, issuing.log)(spender)} returning seq)`
    : sql``;
  const loggedSeq = issuing ? sql`(select seq from logged) as logged_seq, ` : sql``;
  const { rows } = await sql<Record<string, unknown>>`
    with ${sql.join(insertCtes, sql``)}spent as (${spending(db)
      .where(sql<boolean>`true${sql.join(allInserted, sql``)}`)
      .returning('session_id')})${issuingCtes}
    select ${sql.join(counts, sql``)}${loggedSeq}found.*
    from (select 1) as one left join (select sessions.*, 1 as found_row from sessions join spent on sessions.id = spent.session_id) as found on true`.execute(
    db,
  );
  const row = { ...(rows[0] as Record<string, unknown>) };
  const inserted = inserts.map((_, i) => Number(row[`inserted${i}`]) === 1);
  for (let i = 0; i < inserts.length; i++) delete row[`inserted${i}`];
  const { found_row: found, logged_seq: seq, ...session } = row as { found_row: number | null; logged_seq?: number | null };
  if (found === null) return { inserted, row: undefined };
  return { inserted, row: session as unknown as Selectable<SessionsTable>, ...(seq != null && { loggedSeq: Number(seq) }) };
}

/**
 * Takes back what spendHandleReading's `issuing` gave a session whose request was then refused: the
 * handle (its secret never left this instance, so nobody could have used it) and its log line.
 */
export async function withdrawIssued(db: Executor, hash: string, loggedSeq: number) {
  const dropped = db.deleteFrom('session_handles').where('hash', '=', hash);
  const unlogged = db.deleteFrom('session_logs').where('seq', '=', loggedSeq);
  if (!isPostgres(db)) {
    await inTransaction(db, async (trx) => {
      await trx.executeQuery(dropped.compile());
      await trx.executeQuery(unlogged.compile());
    });
    return;
  }
  await sql`with dropped as (${dropped}), unlogged as (${unlogged}) select 1`.execute(db);
}

export async function deleteHandles(db: Executor, sessionId: string, purpose: string) {
  await db.deleteFrom('session_handles').where('session_id', '=', sessionId).where('purpose', '=', purpose).execute();
}

export async function insertLog(
  db: Executor,
  row: { session_id: string; level: string; message: string; details: string | null; created_at: string },
) {
  await db.insertInto('session_logs').values(row).execute();
}

export type SessionSortKey = 'createdAt' | 'updatedAt' | 'status' | 'expiresAt';
export interface SessionListFilter {
  kind?: string;
  status?: SessionStatus;
  /** A credential configuration offered (issuance) or the presentation configuration requested. */
  configurationId?: string;
  /** ISO date-times in UTC, as created_at is stored: from inclusive, to exclusive. */
  createdFrom?: string;
  createdTo?: string;
  /** The start of the session id. */
  idPrefix?: string;
  /** The moment that decides which open sessions count as expired. */
  now: string;
  /** Which database's JSON functions read public_data. */
  postgres: boolean;
}
export interface SessionPageQuery extends SessionListFilter {
  sortBy: SessionSortKey;
  sortOrder: 'asc' | 'desc';
  offset: number;
  limit: number;
}

type SessionsQuery = SelectQueryBuilder<Database, 'sessions', {}>;
const OPEN = OPEN_STATUSES as SessionStatus[];

/** The status a reader sees: an open session past its expiry is expired even before the cleanup job marks it. */
const effectiveStatus = (now: string) => (eb: ExpressionBuilder<Database, 'sessions'>) =>
  eb
    .case()
    .when(eb.and([eb('status', 'in', OPEN), eb('expires_at', '<=', now)]))
    .then('expired')
    .else(eb.ref('status'))
    .end();

/**
 * Sessions whose public data names the configuration: in credentialConfigurationIds (issuance), as
 * requestId (a presentation request: the presentation configuration it was made from) or as
 * presentationConfigId (a presentation embedded in issuance). public_data is JSON text, read with
 * each database's JSON functions.
 */
const ofConfiguration = (postgres: boolean, id: string) =>
  postgres
    ? sql<boolean>`(public_data::jsonb ->> 'requestId' = ${id}
        or public_data::jsonb ->> 'presentationConfigId' = ${id}
        or public_data::jsonb -> 'credentialConfigurationIds' @> jsonb_build_array(${id}::text))`
    : sql<boolean>`(json_extract(public_data, '$.requestId') = ${id}
        or json_extract(public_data, '$.presentationConfigId') = ${id}
        or exists (select 1 from json_each(public_data, '$.credentialConfigurationIds') as offered where offered.value = ${id}))`;

function filtered(query: SessionsQuery, filter: SessionListFilter): SessionsQuery {
  const { kind, status, now, configurationId, createdFrom, createdTo, idPrefix, postgres } = filter;
  let q = kind ? query.where('kind', '=', kind) : query;
  if (createdFrom) q = q.where('created_at', '>=', createdFrom);
  if (createdTo) q = q.where('created_at', '<', createdTo);
  // substr rather than like: like is case-insensitive in SQLite and case-sensitive in PostgreSQL.
  if (idPrefix) q = q.where(sql<string>`substr(id, 1, ${idPrefix.length})`, '=', idPrefix);
  if (configurationId) q = q.where(ofConfiguration(postgres, configurationId));
  if (status === 'expired') {
    q = q.where((eb) => eb.or([eb('status', '=', 'expired'), eb.and([eb('status', 'in', OPEN), eb('expires_at', '<=', now)])]));
  } else if (status && OPEN.includes(status)) {
    q = q.where('status', '=', status).where('expires_at', '>', now);
  } else if (status) {
    q = q.where('status', '=', status);
  }
  return q;
}

const SORT_COLUMNS = { createdAt: 'created_at', updatedAt: 'updated_at', expiresAt: 'expires_at' } as const;

export function listSessions(db: TenantDb, query: SessionPageQuery) {
  const base = filtered(db.selectFrom('sessions'), query).selectAll();
  const sorted =
    query.sortBy === 'status'
      ? base.orderBy(effectiveStatus(query.now), query.sortOrder)
      : base.orderBy(SORT_COLUMNS[query.sortBy], query.sortOrder);
  // The id breaks ties, so that paging over equal keys neither repeats nor skips a session.
  return sorted.orderBy('id', query.sortOrder).limit(query.limit).offset(query.offset).execute();
}

export async function countSessions(db: TenantDb, filter: SessionListFilter): Promise<number> {
  const row = await filtered(db.selectFrom('sessions'), filter)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function deleteSession(db: TenantDb, id: string) {
  const result = await db.deleteFrom('sessions').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export const listLogs = (db: Executor, sessionId: string) =>
  db.selectFrom('session_logs').selectAll().where('session_id', '=', sessionId).orderBy('seq', 'asc').execute();

/** Open sessions (at most `limit`) whose expiry has passed but whose row still says active or fetched. */
export const listLapsed = (db: TenantDb, now: string, limit: number) =>
  db.selectFrom('sessions').select(['id', 'status']).where('status', 'in', OPEN).where('expires_at', '<=', now).limit(limit).execute();

/** Deletes at most `limit` sessions created before `cutoff` (with what they own, by cascade); how many it deleted. */
export async function deleteCreatedBefore(db: TenantDb, cutoff: string, limit: number) {
  const result = await db
    .deleteFrom('sessions')
    .where('id', 'in', db.selectFrom('sessions').select('id').where('created_at', '<', cutoff).limit(limit))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export const listToAnonymize = (db: TenantDb, cutoff: string, limit: number) =>
  db
    .selectFrom('sessions')
    .select(['id', 'public_data'])
    .where('created_at', '<', cutoff)
    .where('anonymized', '=', 0)
    .orderBy('created_at')
    .limit(limit)
    .execute();

export async function anonymizeSession(db: TenantDb, id: string, publicData: string) {
  await db
    .updateTable('sessions')
    .set((eb) => ({ public_data: publicData, private_data: null, anonymized: 1, version: eb('version', '+', 1) }))
    .where('id', '=', id)
    .execute();
}

export async function deleteAllHandles(db: Executor, sessionId: string) {
  await db.deleteFrom('session_handles').where('session_id', '=', sessionId).execute();
}
