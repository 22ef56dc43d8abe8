// Shared by the benchmarks: the compiled service as its own process (as `npm start` runs it, and so
// that client and server do not share an event loop), a fresh database, and small statistics
// helpers. BENCH_PROFILE=1 writes the service's CPU profile to /tmp/prof. BENCH_GC=<ms> runs a full
// garbage collection in the service every <ms> milliseconds, so that a native finalizer that would
// crash the process (a collected SQLite statement, say) runs during the benchmark, not hours later.
// BENCH_NODE_FLAGS='--flag ...' adds node flags to `npm start`'s, to weigh one before adopting it.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runtimeSettings } from '../scripts/build.mjs';
import { freshDatabase } from '../test/support/database.js';

export interface BenchService {
  url: string;
  rootToken: string;
  /** Milliseconds from spawning the process to its first answer. */
  startMs: number;
  /** Resident memory of the service process now, in MiB. */
  rssMiB(): number;
  /** CPU time (user + system) the service process has used so far, in milliseconds. */
  cpuMs(): number;
  stop(): Promise<void>;
}

const root = new URL('..', import.meta.url).pathname;
let built = false;

export async function startServiceProcess(port: number): Promise<BenchService> {
  if (!built) execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
  built = true;
  const database = await freshDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const secret = randomBytes(24).toString('base64url');
  const url = `http://127.0.0.1:${port}`;
  const spawned = performance.now();
  // The runtime settings of `npm start` (package.json), as the build and the Dockerfile use them.
  const runtime = runtimeSettings();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...runtime.nodeFlags,
      ...flagsToTry(),
      ...(process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : []),
      'dist/main.js',
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        ...database.env,
        ...runtime.env,
        ...(process.env.BENCH_GC && { NODE_OPTIONS: withPeriodicGc(Number(process.env.BENCH_GC)) }),
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_URL: url,
        LOG_LEVEL: 'warn',
        NODE_ENV: 'production',
        MASTER_SECRET: randomBytes(32).toString('base64url'),
        AUTH_CLIENT_ID: 'bench',
        AUTH_CLIENT_SECRET: secret,
        TOKEN_FAILED_ATTEMPTS_LIMIT: '100000',
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
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
  const token = await fetch(`${url}/api/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: 'bench', client_secret: secret }),
  }).then((r) => r.json() as Promise<{ access_token: string }>);
  return {
    url,
    rootToken: token.access_token,
    startMs,
    rssMiB: () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) / 1024,
    cpuMs: () => processCpuMs(child.pid as number),
    stop: async () => {
      // A service that died under load (a signal, a crash) fails the benchmark instead of going unnoticed.
      if (exit !== undefined) throw new Error(`the service stopped during the benchmark: ${exit}`);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
      await database.drop();
    },
  };
}

/** NODE_OPTIONS for a service that collects all garbage every `ms` milliseconds. */
function withPeriodicGc(ms: number): string {
  const timer = `setInterval(() => globalThis.gc(), ${ms}).unref();`;
  return [process.env.NODE_OPTIONS ?? '', '--expose-gc', `--import=data:text/javascript,${encodeURIComponent(timer)}`].join(' ').trim();
}

/** utime + stime of a process from /proc (fields 14 and 15, in clock ticks of 10 ms on Linux). */
const flagsToTry = () => (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);

function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
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
