// Cost as the data grows: the pre-authorized issuance flow and the SD-JWT VC presentation flow, 8
// wallets each, on an empty database and on one holding what a year of production leaves (100
// tenants, 1,000,000 sessions of which 900,000 past retention, their handles, logs and issued
// credentials, 10,000,000 status list entries: bench/growth-data.ts); throughput, the service's CPU,
// PostgreSQL's CPU and round trips per flow for both, against the target "within 10 % of an empty
// database"; the statements that took the most time on the grown database (pg_stat_statements); then
// the scheduled clean-up over the 900,000 expired sessions, with the flows running during it: how
// long each job's run took, and the flows' throughput and latency during it.
// Run: DB_TYPE=postgres npx tsx bench/growth.ts [flows per measurement, default 300]
//      GROWTH_SCALE=0.1 for a tenth of the data (a quick try); not part of CI.
import pg from 'pg';
import { buildYear, yearShape } from './growth-data.js';
import { prepareIssuance, setUpTenant } from './issuance-flow.js';
import { preparePresentation } from './presentation-flow.js';
import {
  type BenchService,
  type CostSample,
  calibration,
  costMeter,
  median,
  newDeployment,
  startServiceProcess,
  throughput,
} from './support.js';

if (process.env.DB_TYPE !== 'postgres') throw new Error('the growth bench runs on PostgreSQL: DB_TYPE=postgres');
const flows = Number(process.argv[2] ?? 300);
const scale = Number(process.env.GROWTH_SCALE ?? 1);
const WALLETS = 8;
const TENANTS = 100;
/** The scheduler's interval when the clean-up is measured: its first round starts this long after start-up. */
const CLEANUP_INTERVAL_SECONDS = 5;
const port = 40_000 + Math.floor(Math.random() * 1000);

type Flow = () => Promise<void>;
interface Flows {
  issuance: Flow;
  presentation: Flow;
  roundTrips: Record<'issuance' | 'presentation', () => Promise<number>>;
}
interface Figures {
  rate: number;
  serviceCpuMs: number;
  postgresCpuMs: number;
  roundTrips: number;
  /** Round trips of one flow alone. */
  alone: number;
}

const sum = (steps: Record<string, number>) => Object.values(steps).reduce((total, n) => total + n, 0);

/** The two flows' tenants (and `tenants` - 2 more, each with its configuration), set up through `service`. */
async function setUp(service: BenchService, tenants: number): Promise<Flows> {
  const issuance = await prepareIssuance(service, 'bench');
  const verifier = await preparePresentation(service, 'bench-vp');
  const presentation = await verifier.sdJwtFlow();
  for (let i = 1; i <= tenants - 2; i++) await setUpTenant(service, `tenant-${String(i).padStart(3, '0')}`, {});
  return {
    issuance: issuance.run,
    presentation,
    roundTrips: {
      issuance: async () => sum(await issuance.roundTripsPerStep()),
      presentation: async () => sum(await verifier.roundTripsPerStep(presentation)),
    },
  };
}

async function measure(service: BenchService, flowsOf: Flows, label: string): Promise<Record<'issuance' | 'presentation', Figures>> {
  const meter = costMeter([service]);
  const each = (before: CostSample, after: CostSample, key: keyof CostSample) => (after[key] - before[key]) / flows;
  const figures = {} as Record<'issuance' | 'presentation', Figures>;
  for (const name of ['issuance', 'presentation'] as const) {
    await throughput(40, WALLETS, flowsOf[name]); // warm-up
    const alone = await flowsOf.roundTrips[name]();
    const before = await meter.sample();
    const rate = await throughput(flows, WALLETS, flowsOf[name]);
    const after = await meter.sample();
    figures[name] = {
      rate,
      serviceCpuMs: each(before, after, 'serviceCpuMs'),
      postgresCpuMs: each(before, after, 'postgresCpuMs'),
      roundTrips: each(before, after, 'roundTrips'),
      alone,
    };
    const f = figures[name];
    console.log(
      `${label} ${name}, ${WALLETS} wallets: ${f.rate.toFixed(1)} flows/s, service CPU ${f.serviceCpuMs.toFixed(2)} ms/flow, PostgreSQL CPU ${f.postgresCpuMs.toFixed(2)} ms/flow, round trips ${f.roundTrips.toFixed(1)}/flow (${f.alone} for one flow alone)`,
    );
  }
  return figures;
}

async function connect(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/** The statements of this database that took the most time since the reset, with their mean time. */
async function slowestStatements(client: pg.Client) {
  const { rows } = await client.query<{ calls: string; mean: number; total: number; query: string }>(
    `select calls, mean_exec_time as mean, total_exec_time as total, regexp_replace(query, '\\s+', ' ', 'g') as query
     from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database()) and calls >= 10
     order by mean_exec_time desc limit 8`,
  );
  for (const row of rows) console.log(`  ${row.mean.toFixed(3)} ms × ${row.calls}: ${row.query.slice(0, 170)}`);
}

/** Each job's runs so far and the seconds they took in all (svc_job_run_seconds). */
const jobRuns = (metrics: string) => {
  const runs: Record<string, { count: number; seconds: number }> = {};
  for (const [, kind, job, value] of metrics.matchAll(/^svc_job_run_seconds_(sum|count)\{job="([^"]+)"\} (\S+)/gm)) {
    const run = runs[job as string] ?? { count: 0, seconds: 0 };
    runs[job as string] = run;
    if (kind === 'count') run.count = Number(value);
    else run.seconds = Number(value);
  }
  return runs;
};

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) * p)] ?? Number.NaN;

/**
 * Restarts the service with the scheduler's first round CLEANUP_INTERVAL_SECONDS away and runs the
 * issuance flow with 8 wallets until the session clean-up has run once: the flows before the round
 * and during it, and each job's run time.
 */
async function cleanUpUnderLoad(deployment: Awaited<ReturnType<typeof newDeployment>>, client: pg.Client) {
  const expired = async () =>
    Number((await client.query(`select count(*) as n from sessions where created_at < now() - interval '1 day'`)).rows[0].n);
  const before = await expired();
  const service = await startServiceProcess(port, deployment, { env: { JOB_INTERVAL_SECONDS: String(CLEANUP_INTERVAL_SECONDS) } });
  try {
    const started = performance.now();
    const issuance = await prepareIssuance(service, 'bench', 'pre-authorized', { setUp: false });
    const done: { at: number; ms: number }[] = [];
    let cleaning = true;
    let finishedAt = Number.POSITIVE_INFINITY;
    const watch = (async () => {
      while (!jobRuns(await service.metrics())['session-cleanup']?.count) await new Promise((resolve) => setTimeout(resolve, 200));
      finishedAt = performance.now();
      cleaning = false;
    })();
    await Promise.all([
      watch,
      ...Array.from({ length: WALLETS }, async () => {
        while (cleaning) {
          const begun = performance.now();
          await issuance.run();
          done.push({ at: performance.now(), ms: performance.now() - begun });
        }
      }),
    ]);
    const roundAt = started + CLEANUP_INTERVAL_SECONDS * 1000;
    const runs = jobRuns(await service.metrics());
    console.log(
      `clean-up of ${before} sessions past retention (and 100,000 × scale expired nonces), issuance flows with ${WALLETS} wallets running: ${before - (await expired())} deleted; job runs: ${Object.entries(
        runs,
      )
        .map(([job, run]) => `${job} ${run.seconds.toFixed(2)} s`)
        .join(', ')}`,
    );
    for (const [label, window] of [
      ['before the round', done.filter((flow) => flow.at < roundAt)],
      ['during the clean-up', done.filter((flow) => flow.at >= roundAt && flow.at <= finishedAt)],
    ] as const) {
      const seconds = label === 'before the round' ? (roundAt - started) / 1000 : (finishedAt - roundAt) / 1000;
      const ms = window.map((flow) => flow.ms);
      console.log(
        `  flows ${label}: ${(window.length / seconds).toFixed(1)} flows/s over ${seconds.toFixed(1)} s, latency median ${median(ms).toFixed(0)} ms, p95 ${percentile(ms, 0.95).toFixed(0)} ms, max ${Math.max(...ms).toFixed(0)} ms`,
      );
    }
  } finally {
    await service.stop();
  }
}

console.log(calibration());
console.log(`growth benchmark: ${flows} flows per measurement, ${WALLETS} wallets, PostgreSQL, data scale ${scale}`);

// The empty database: the flows' tenants only.
const empty = await startServiceProcess(port);
let emptyFigures: Awaited<ReturnType<typeof measure>>;
try {
  emptyFigures = await measure(empty, await setUp(empty, 2), 'empty');
} finally {
  await empty.stop();
}

// The grown database: 100 tenants, then a year's data made in the database.
const deployment = await newDeployment();
const client = await connect(deployment.database.env.DATABASE_URL as string);
try {
  const grown = await startServiceProcess(port, deployment, { env: { JOB_INTERVAL_SECONDS: '86400' } });
  let grownFigures: Awaited<ReturnType<typeof measure>>;
  try {
    const grownFlows = await setUp(grown, TENANTS);
    const tenants = (await client.query<{ id: string }>('select id from tenants order by id')).rows.map((row) => row.id);
    const building = performance.now();
    const timings = await buildYear(client, tenants, yearShape(scale));
    const size = (await client.query(`select pg_size_pretty(pg_database_size(current_database())) as size`)).rows[0].size;
    console.log(
      `built a year's data in ${((performance.now() - building) / 1000).toFixed(0)} s (${Object.entries(timings)
        .map(([table, seconds]) => `${table} ${seconds.toFixed(1)} s`)
        .join(', ')}); database ${size}`,
    );
    await client.query('create extension if not exists pg_stat_statements');
    await client.query('select pg_stat_statements_reset(0, (select oid from pg_database where datname = current_database()), 0)');
    grownFigures = await measure(grown, grownFlows, 'grown');
    console.log('statements of the grown database with the highest mean time (pg_stat_statements, at least 10 calls):');
    await slowestStatements(client);
  } finally {
    await grown.stop();
  }

  console.log('\nflow            figure                 empty      grown      grown/empty');
  for (const name of ['issuance', 'presentation'] as const) {
    const rows: [string, keyof Figures, boolean][] = [
      ['flows/s', 'rate', true],
      ['service CPU ms/flow', 'serviceCpuMs', false],
      ['PostgreSQL CPU ms/flow', 'postgresCpuMs', false],
      ['round trips/flow', 'roundTrips', false],
    ];
    for (const [label, key, higherIsBetter] of rows) {
      const a = emptyFigures[name][key];
      const b = grownFigures[name][key];
      const ratio = b / a;
      const within = higherIsBetter ? ratio >= 0.9 : ratio <= 1.1;
      console.log(
        `${name.padEnd(15)} ${label.padEnd(22)} ${a.toFixed(2).padStart(9)} ${b.toFixed(2).padStart(10)}  ${ratio.toFixed(2).padStart(10)} ${within ? 'within 10 %' : 'NOT within 10 %'}`,
      );
    }
  }
  console.log();
  await cleanUpUnderLoad(deployment, client);
} finally {
  await client.end();
  await deployment.database.drop();
}
