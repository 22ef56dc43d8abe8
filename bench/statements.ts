// What each statement cost PostgreSQL over a benchmark run, from pg_stat_statements: how often it
// ran, how long the server spent planning and executing it. Planning time is counted only where
// pg_stat_statements.track_planning is on: it is switched on for the benchmark's own database
// (ALTER DATABASE ... SET, before the service connects), not for the server.
import pg from 'pg';
import type { TestDatabase } from '../test/support/database.js';

export interface StatementStatistics {
  /** The benchmark's database, as the service names it. */
  url: string;
  name: string;
}

/**
 * Prepares the benchmark's database (before the service starts): the extension, planning time tracked.
 * Undefined (said once) where the server does not load pg_stat_statements (shared_preload_libraries).
 */
export async function statementStatistics(database: TestDatabase): Promise<StatementStatistics | undefined> {
  const url = database.env.DATABASE_URL as string;
  const name = new URL(url).pathname.slice(1);
  try {
    await withClient(url, async (client) => {
      await client.query('create extension if not exists pg_stat_statements');
      await client.query('select 1 from pg_stat_statements limit 1');
      await client.query(`alter database ${client.escapeIdentifier(name)} set pg_stat_statements.track_planning = on`);
    });
  } catch (error) {
    console.log(
      `pg_stat_statements: not available (${(error as Error).message}); add it to shared_preload_libraries to see each statement's cost`,
    );
    return undefined;
  }
  return { url, name };
}

/** The totals of the run and its `count` most expensive statements, as lines to print. */
export async function topStatements(statistics: StatementStatistics, count: number): Promise<string> {
  return withClient(statistics.url, async (client) => {
    const ofThisDatabase = `from pg_stat_statements s join pg_database d on d.oid = s.dbid where d.datname = $1`;
    const totals = await client.query<Record<string, number>>(
      `select count(*)::int as statements, sum(calls)::float8 as calls, sum(plans)::float8 as plans,
              sum(total_plan_time)::float8 as plan_ms, sum(total_exec_time)::float8 as exec_ms ${ofThisDatabase}`,
      [statistics.name],
    );
    const top = await client.query<{ calls: number; plans: number; plan_ms: number; exec_ms: number; query: string }>(
      `select calls::float8 as calls, plans::float8 as plans, total_plan_time::float8 as plan_ms, total_exec_time::float8 as exec_ms,
              regexp_replace(query, '\\s+', ' ', 'g') as query
         ${ofThisDatabase} order by total_plan_time + total_exec_time desc limit ${count}`,
      [statistics.name],
    );
    const t = totals.rows[0] ?? {};
    const lines = [
      `pg_stat_statements (whole run): ${t.statements} statements, ${t.calls} calls, ${t.plans} plans, planning ${Number(t.plan_ms).toFixed(0)} ms, executing ${Number(t.exec_ms).toFixed(0)} ms`,
      ...top.rows.map(
        (row) =>
          `  ${row.calls} calls, ${row.plans} plans, plan ${row.plan_ms.toFixed(0)} ms, exec ${row.exec_ms.toFixed(0)} ms: ${row.query.slice(0, 110)}`,
      ),
    ];
    return lines.join('\n');
  });
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
