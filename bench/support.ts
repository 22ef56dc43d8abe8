// Shared by the benchmarks: the compiled service as its own process (as `npm start` runs it, and so
// that client and server do not share an event loop), a fresh database, and small statistics
// helpers. BENCH_PROFILE=1 writes the service's CPU profile to /tmp/prof (BENCH_PROFILE_DIR: another directory). BENCH_GC=<ms> runs a full
// garbage collection in the service every <ms> milliseconds, so that a native finalizer that would
// crash the process (a collected SQLite statement, say) runs during the benchmark, not hours later.
// BENCH_NODE_FLAGS='--flag ...' adds node flags to `npm start`'s, to weigh one before adopting it.
// costMeter() gives what a flow costs: the service's CPU, PostgreSQL's CPU and the database round trips.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { runtimeSettings } from '../scripts/build.mjs';
import { freshDatabase, type TestDatabase } from '../test/support/database.js';

export interface BenchService {
  url: string;
  rootToken: string;
  /** Milliseconds from spawning the process to its first answer. */
  startMs: number;
  /** Resident memory of the service process now, in MiB. */
  rssMiB(): number;
  /** CPU time (user + system) the service process has used so far, in milliseconds. */
  cpuMs(): number;
  /** Statements the service has sent to its database so far (its own counter, from /metrics). */
  roundTrips(): Promise<number>;
  /** The service's /metrics text now. */
  metrics(): Promise<string>;
  /** The part of roundTrips sent while answering requests (svc_db_request_round_trips_total): no scrape, no background work. */
  requestRoundTrips(): Promise<number>;
  /** HTTP requests the service has answered so far (svc_http_requests_total, all routes). */
  requestsAnswered(): Promise<number>;
  /** The database and secrets, to start a second instance on the same database (startServiceProcess's `shared`). */
  shared: SharedSetup;
  stop(): Promise<void>;
}

/** What instances of one deployment share: the database, the master secret, the bootstrap client. */
export interface SharedSetup {
  database: TestDatabase;
  masterSecret: string;
  clientSecret: string;
}

const METRICS_TOKEN = randomBytes(24).toString('base64url');

const root = new URL('..', import.meta.url).pathname;
let built = false;

/**
 * A benchmark sends every flow from one address to one tenant, far beyond what the rate limits let
 * one wallet do: they stay on (their cost is part of every figure) with limits it never reaches.
 */
const BENCH_RATE_LIMITS = Object.fromEntries(
  ['AUTHORIZATION', 'TOKEN', 'NONCE', 'CREDENTIAL', 'NOTIFICATION', 'PRESENTATION', 'MANAGEMENT_TOKEN'].flatMap((name) => [
    [`RATE_LIMIT_${name}`, '100000000/60'],
    [`RATE_LIMIT_${name}_PER_TENANT`, '100000000/60'],
  ]),
);

/** A fresh database and secrets for the instances of one deployment; whoever makes it drops the database. */
export async function newDeployment(): Promise<SharedSetup> {
  return {
    database: await freshDatabase(),
    masterSecret: randomBytes(32).toString('base64url'),
    clientSecret: randomBytes(24).toString('base64url'),
  };
}

/** How an instance differs from a lone one: behind a load balancer, or through a pooler. */
export interface InstanceOptions {
  /** PUBLIC_URL: the load balancer's address, which every instance of a deployment names as its own. */
  publicUrl?: string;
  /** Settings over the database's (DATABASE_URL through a pooler, EVENTS_DATABASE_URL). */
  env?: Record<string, string>;
  /**
   * Started by `npm start` (npm, the build-freshness check of scripts/start.cjs, then the service in
   * a process of its own) rather than by `node dist/main.js` with `npm start`'s settings: the start an
   * operator makes from a checkout. Memory and CPU are then those of the service's process.
   */
  viaNpmStart?: boolean;
}

/** Starts an instance on a fresh database, or, given `shared`, a further instance of the deployment that made it. */
export async function startServiceProcess(port: number, shared?: SharedSetup, options: InstanceOptions = {}): Promise<BenchService> {
  if (!built) execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
  built = true;
  const setup: SharedSetup = shared ?? (await newDeployment());
  const { database, clientSecret: secret } = setup;
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const url = `http://127.0.0.1:${port}`;
  const spawned = performance.now();
  // The runtime settings of `npm start` (package.json), as the build and the Dockerfile use them.
  const runtime = runtimeSettings();
  const [command, ...args] = options.viaNpmStart
    ? ['npm', 'start', '--silent']
    : [
        process.execPath,
        ...runtime.nodeFlags,
        ...flagsToTry(),
        ...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR ?? '/tmp/prof'}`] : []),
        'dist/main.js',
      ];
  const child: ChildProcess = spawn(command as string, args, {
    cwd: root,
    env: {
      ...process.env,
      ...database.env,
      ...runtime.env,
      ...(process.env.BENCH_GC && { NODE_OPTIONS: withPeriodicGc(Number(process.env.BENCH_GC)) }),
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: options.publicUrl ?? url,
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      MASTER_SECRET: setup.masterSecret,
      METRICS_TOKEN,
      AUTH_CLIENT_ID: 'bench',
      AUTH_CLIENT_SECRET: secret,
      TOKEN_FAILED_ATTEMPTS_LIMIT: '100000',
      ...BENCH_RATE_LIMITS,
      ...options.env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  let exit: string | undefined;
  child.once('exit', (code, signal) => {
    exit = signal ?? `exit code ${code}`;
  });
  for (let i = 0; i < 2000; i++) {
    if (
      await fetch(`${url}/health`)
        .then((r) => r.ok)
        .catch(() => false)
    )
      break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const startMs = performance.now() - spawned;
  // npm runs the start script through a shell that execs node: the service is npm's last descendant.
  const servicePid = lastDescendant(child.pid as number);
  const token = await fetch(`${url}/api/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: 'bench', client_secret: secret }),
  }).then((r) => r.json() as Promise<{ access_token: string }>);
  return {
    url,
    rootToken: token.access_token,
    startMs,
    rssMiB: () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${servicePid}/status`, 'utf8'))?.[1]) / 1024,
    cpuMs: () => processCpuMs(servicePid),
    roundTrips: async () => Number(/^svc_db_round_trips_total (\d+)/m.exec(await metrics(url))?.[1]),
    metrics: () => metrics(url),
    requestRoundTrips: async () => Number(/^svc_db_request_round_trips_total (\d+)/m.exec(await metrics(url))?.[1]),
    requestsAnswered: async () => {
      let total = 0;
      for (const [, count] of (await metrics(url)).matchAll(/^svc_http_requests_total\{[^}]*\} (\d+)/gm)) total += Number(count);
      return total;
    },
    shared: setup,
    stop: async () => {
      // A service that died under load (a signal, a crash) fails the benchmark instead of going unnoticed.
      if (exit !== undefined) throw new Error(`the service stopped during the benchmark: ${exit}`);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
      // The first instance owns the database; a further one leaves it to it.
      if (!shared) await database.drop();
    },
  };
}

/** The process at the end of a chain of only children (the process itself when it has none). */
function lastDescendant(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter(Boolean);
  return children.length === 1 ? lastDescendant(Number(children[0])) : pid;
}

const metrics = (url: string) => fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((r) => r.text());

/** NODE_OPTIONS for a service that collects all garbage every `ms` milliseconds. */
function withPeriodicGc(ms: number): string {
  const timer = `setInterval(() => globalThis.gc(), ${ms}).unref();`;
  return [process.env.NODE_OPTIONS ?? '', '--expose-gc', `--import=data:text/javascript,${encodeURIComponent(timer)}`].join(' ').trim();
}

/** utime + stime of a process from /proc (fields 14 and 15, in clock ticks of 10 ms on Linux). */
const flagsToTry = () => (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);

export function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** What the database side of a run cost, between two samples. */
export interface CostSample {
  serviceCpuMs: number;
  postgresCpuMs: number;
  roundTrips: number;
  /** pg_stat_database xact_commit + xact_rollback of the service's database (PostgreSQL only). */
  transactions: number;
}

/**
 * Samples the cost of the services' work. PostgreSQL's CPU is that of the server processes serving
 * the service's database (its backends, found in pg_stat_activity, read from /proc): the server's
 * shared processes (checkpointer, WAL writer) and other databases on it are left out, so the figure
 * is not swayed by anyone else using the server. A backend that exits keeps the CPU last seen of it.
 */
export function costMeter(services: BenchService[]) {
  const database = services[0]?.shared.database;
  const name = database?.env.DATABASE_URL && new URL(database.env.DATABASE_URL).pathname.slice(1);
  const backendCpu = new Map<number, number>();
  const admin = async <T>(work: (client: pg.Client) => Promise<T>) => {
    // Connected to the server's own database, so that these queries are not counted in the service's.
    const url = new URL(database?.env.DATABASE_URL ?? '');
    url.pathname = '/postgres';
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  const postgresCpu = async () => {
    if (!name) return 0;
    const { rows } = await admin((client) =>
      client.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name]),
    );
    for (const { pid } of rows) {
      try {
        backendCpu.set(pid, processCpuMs(pid));
      } catch {
        // ended between the query and the read: its last figure stands
      }
    }
    return [...backendCpu.values()].reduce((sum, ms) => sum + ms, 0);
  };
  // A backend reports its transaction counts when idle, at most once a second and otherwise after
  // 10 s of idleness (PostgreSQL's PGSTAT_IDLE_INTERVAL): counts read sooner can miss the last ones.
  const transactions = async () => {
    if (!name) return 0;
    await new Promise((resolve) => setTimeout(resolve, 10_500));
    const { rows } = await admin((client) =>
      client.query<{ count: string }>('select xact_commit + xact_rollback as count from pg_stat_database where datname = $1', [name]),
    );
    return Number(rows[0]?.count ?? 0);
  };
  const sample = async (): Promise<CostSample> => {
    const serviceCpuMs = services.reduce((sum, service) => sum + service.cpuMs(), 0);
    const postgresCpuMs = await postgresCpu();
    const roundTrips = (await Promise.all(services.map((service) => service.roundTrips()))).reduce((sum, n) => sum + n, 0);
    return { serviceCpuMs, postgresCpuMs, roundTrips, transactions: await transactions() };
  };
  return {
    sample,
    /** The cost of each flow between `before` and `after`, as one line. */
    perFlow(before: CostSample, after: CostSample, flows: number) {
      const each = (key: keyof CostSample) => (after[key] - before[key]) / flows;
      const postgres = name
        ? `, PostgreSQL CPU ${each('postgresCpuMs').toFixed(2)} ms/flow, DB round trips ${each('roundTrips').toFixed(1)}/flow (transactions in pg_stat_database ${each('transactions').toFixed(1)}/flow)`
        : `, DB statements ${each('roundTrips').toFixed(1)}/flow`;
      return `service CPU ${each('serviceCpuMs').toFixed(2)} ms/flow${postgres}`;
    },
  };
}

/**
 * The machine's own pace, for comparing figures taken on two machines: ES256 signatures of raw
 * node:crypto per millisecond of one core, and how long `node -e ""` takes (median of five).
 */
export function calibration(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const input = Buffer.from('a'.repeat(300));
  let signed = 0;
  const started = performance.now();
  while (performance.now() - started < 1000) {
    sign('sha256', input, { key: privateKey, dsaEncoding: 'ieee-p1363' });
    signed++;
  }
  const perSign = (performance.now() - started) / signed;
  return `calibration: ES256 sign (node:crypto) ${(perSign * 1000).toFixed(0)} µs, \`node -e ""\` ${nodeStartMs().toFixed(0)} ms`;
}

/** How long `node -e ""` takes here, median of `runs`: the yardstick of start-up targets. */
export function nodeStartMs(runs = 5): number {
  const starts = Array.from({ length: runs }, () => {
    const begun = performance.now();
    execFileSync(process.execPath, ['-e', '']);
    return performance.now() - begun;
  });
  return median(starts);
}

export async function json(url: string, init: RequestInit & { token?: string } = {}) {
  const headers = new Headers(init.headers);
  if (init.token) headers.set('authorization', `Bearer ${init.token}`);
  if (init.body && !headers.has('content-type')) headers.set('content-type', 'application/json');
  const response = await fetch(url, { ...init, headers });
  const body = await response.json().catch(() => undefined);
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${response.status} ${JSON.stringify(body)}`);
  return body as any;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Runs `task` `total` times with `concurrency` workers; returns completions per second. */
export async function throughput(total: number, concurrency: number, task: () => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        await task();
      }
    }),
  );
  return total / ((performance.now() - started) / 1000);
}
