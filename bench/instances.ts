// Instances behind a load balancer, on one PostgreSQL database: pre-authorized SD-JWT VC issuance
// flows (bench/issuance-flow.ts) with 8 wallets, every request through HAProxy (round-robin per
// request, http mode), so that consecutive requests of one flow land on different instances: all
// the state of a flow must be in the database. Three set-ups, each on a fresh database: one instance;
// three instances; three instances whose pools go through PgBouncer in transaction mode (their
// LISTEN connections straight to PostgreSQL through EVENTS_DATABASE_URL). For each it prints the
// throughput, the errors (a failed flow counts one and the run goes on), and per flow the CPU of all
// instances, of PostgreSQL's backends, of HAProxy and of PgBouncer, and the database round trips;
// then how the requests spread over the instances. HAProxy and PgBouncer are Debian's packages,
// installed here when missing.
// Run: DB_TYPE=postgres npx tsx bench/instances.ts [flows, default 600]
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Pgbouncer, pgbouncerBinary, startPgbouncer } from '../test/support/pgbouncer.js';
import { prepareIssuance } from './issuance-flow.js';
import { type BenchService, calibration, costMeter, newDeployment, processCpuMs, startServiceProcess } from './support.js';

if (process.env.DB_TYPE !== 'postgres') throw new Error('instances share a PostgreSQL database: run with DB_TYPE=postgres');
const flows = Number(process.argv[2] ?? 600);
const WALLETS = 8;
const WARM_UP_FLOWS = 30;
const serverUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
let nextPort = 43_000 + Math.floor(Math.random() * 1000);

interface SetUp {
  name: string;
  instances: number;
  pooled: boolean;
}

const SET_UPS: SetUp[] = [
  { name: 'one instance', instances: 1, pooled: false },
  { name: 'three instances', instances: 3, pooled: false },
  { name: 'three instances through PgBouncer (transaction mode)', instances: 3, pooled: true },
];

debianPackage('/usr/sbin/haproxy', 'haproxy');
if (!pgbouncerBinary()) debianPackage('/usr/sbin/pgbouncer', 'pgbouncer');
console.log(calibration());
console.log(`${flows} pre-authorized SD-JWT VC flows per set-up, ${WALLETS} wallets, every request through HAProxy round-robin`);
let failed = false;
for (const setUp of SET_UPS) failed = !(await measure(setUp)) || failed;
if (failed) process.exitCode = 1;

/** Runs one set-up from start to stop; false when a flow failed. */
async function measure(setUp: SetUp): Promise<boolean> {
  const balancerPort = nextPort++;
  const publicUrl = `http://127.0.0.1:${balancerPort}`;
  const bouncer: Pgbouncer | undefined = setUp.pooled ? await startPgbouncer(serverUrl, 10) : undefined;
  const deployment = await newDeployment();
  const direct = deployment.database.env.DATABASE_URL as string;
  // Through the pooler: the pool's connections go through PgBouncer, LISTEN straight to PostgreSQL.
  const env: Record<string, string> = {
    TRUST_PROXY: 'true',
    // Debian's PgBouncer (1.18) does not track prepared statements: the statements go unnamed.
    ...(bouncer && { DATABASE_URL: bouncer.through(direct), EVENTS_DATABASE_URL: direct, DB_PREPARED_STATEMENTS: 'false' }),
  };
  const services: BenchService[] = [];
  let balancer: Haproxy | undefined;
  try {
    for (let i = 0; i < setUp.instances; i++) services.push(await startServiceProcess(nextPort++, deployment, { publicUrl, env }));
    const first = services[0] as BenchService;
    balancer = await startHaproxy(
      balancerPort,
      services.map((service) => service.url),
    );
    // The flow runs against the load balancer's address: the tenant is set up through it too.
    const flow = await prepareIssuance({ ...first, url: publicUrl }, 'bench');
    for (let i = 0; i < WARM_UP_FLOWS; i++) await flow.run();
    const meter = costMeter(services);
    const requestsBefore = await Promise.all(services.map((service) => service.requestsAnswered()));
    const before = await meter.sample();
    const sidecarsBefore = { haproxy: processCpuMs(balancer.pid), pgbouncer: bouncer ? processCpuMs(bouncer.pid) : 0 };
    const errors: string[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: WALLETS }, async () => {
        while (next < flows) {
          next++;
          await flow.run().catch((err: unknown) => errors.push(err instanceof Error ? err.message : String(err)));
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const haproxyMs = (processCpuMs(balancer.pid) - sidecarsBefore.haproxy) / flows;
    const pgbouncerMs = bouncer ? (processCpuMs(bouncer.pid) - sidecarsBefore.pgbouncer) / flows : undefined;
    const after = await meter.sample();
    const served = (await Promise.all(services.map((service) => service.requestsAnswered()))).map((n, i) => n - (requestsBefore[i] ?? 0));
    const load = loadavg()
      .map((n) => n.toFixed(2))
      .join(' ');
    console.log(`\n${setUp.name} (load average at the run's end: ${load})`);
    console.log(`  ${(flows / seconds).toFixed(1)} flows/s, ${errors.length} errors`);
    console.log(`  ${meter.perFlow(before, after, flows)} (all instances)`);
    console.log(
      `  HAProxy CPU ${haproxyMs.toFixed(2)} ms/flow${pgbouncerMs === undefined ? '' : `, PgBouncer CPU ${pgbouncerMs.toFixed(2)} ms/flow`}`,
    );
    console.log(`  requests answered per instance: ${served.join(', ')}`);
    for (const error of errors.slice(0, 5)) console.log(`  error: ${error}`);
    return errors.length === 0;
  } finally {
    await balancer?.stop();
    for (const service of services) await service.stop();
    await bouncer?.stop();
    await deployment.database.drop();
  }
}

interface Haproxy {
  pid: number;
  stop(): Promise<void>;
}

/** HAProxy in the foreground on `port`, round-robin over `backends` for every request, with a configuration in a temporary folder. */
async function startHaproxy(port: number, backends: string[]): Promise<Haproxy> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-haproxy-'));
  const cfg = join(dir, 'haproxy.cfg');
  writeFileSync(
    cfg,
    [
      'global',
      '  maxconn 2000',
      'defaults',
      '  mode http',
      '  timeout connect 5s',
      '  timeout client 60s',
      '  timeout server 60s',
      'frontend svc',
      `  bind 127.0.0.1:${port}`,
      '  default_backend instances',
      'backend instances',
      // Each request is balanced on its own, also on a kept-alive connection: no stickiness.
      '  balance roundrobin',
      ...backends.map((url, i) => `  server svc${i + 1} ${new URL(url).host}`),
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn('/usr/sbin/haproxy', ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'inherit'] });
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const stop = async () => {
    if (!exited) {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 500 && !exited && !(await accepts(port)); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (exited) {
    await stop();
    throw new Error('haproxy did not start');
  }
  return { pid: child.pid as number, stop };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A Debian package, installed when its program is missing (as .ci/run's debian_package does). */
function debianPackage(program: string, name: string) {
  if (existsSync(program)) return;
  const root = process.getuid?.() === 0;
  const run = (args: string[]) =>
    execFileSync(root ? (args[0] as string) : 'sudo', root ? args.slice(1) : args, {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  try {
    run(['apt-get', 'install', '-y', '-q', name]);
  } catch {
    run(['apt-get', 'update', '-q']);
    run(['apt-get', 'install', '-y', '-q', name]);
  }
}
