// A real PgBouncer in transaction mode in front of the suite's PostgreSQL, as a child process on a
// free port with a generated configuration in a temporary folder: each statement outside a
// transaction, and each transaction, may run on a different server session. Debian's pgbouncer; a
// test that needs it is skipped where it is not installed (CI installs it).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Pgbouncer {
  /** The process, to read its CPU time from /proc. */
  pid: number;
  /** The same URL (a database on the server it fronts) through the pooler. */
  through(directUrl: string): string;
  stop(): Promise<void>;
}

/** Debian installs it in /usr/sbin, which is not on every PATH. */
export function pgbouncerBinary(): string | undefined {
  for (const candidate of ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer']) if (existsSync(candidate)) return candidate;
  try {
    return execFileSync('sh', ['-c', 'command -v pgbouncer'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts PgBouncer in front of `serverUrl`'s host and port: every database name passes through
 * (logging in as the server URL's user), `poolSize` server sessions per database at most.
 */
export async function startPgbouncer(serverUrl: string, poolSize = 10): Promise<Pgbouncer> {
  const binary = pgbouncerBinary();
  if (!binary) throw new Error('pgbouncer is not installed (Debian package pgbouncer)');
  const server = new URL(serverUrl);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'svc-pgbouncer-'));
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432} user=${decodeURIComponent(server.username || 'postgres')}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      // The server's own authentication applies to the sessions PgBouncer opens; clients are not checked.
      'auth_type = any',
      'pool_mode = transaction',
      'max_client_conn = 500',
      `default_pool_size = ${poolSize}`,
      'log_connections = 0',
      'log_disconnections = 0',
      '',
    ].join('\n'),
  );
  // PgBouncer refuses to run as root; -u drops to an unprivileged user after reading the file.
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(binary, [...(asRoot ? ['-u', 'nobody'] : []), ini], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
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
  for (let i = 0; i < 500 && !(await accepts(port)); i++) {
    if (exited) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  if (exited || !(await accepts(port))) {
    await stop();
    throw new Error(`pgbouncer did not start: ${output.trim()}`);
  }
  return {
    pid: child.pid as number,
    through(directUrl: string) {
      const url = new URL(directUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    stop,
  };
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

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
