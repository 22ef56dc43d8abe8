// The service as `npm start` runs it: the compiled build in a child process with exactly the given
// environment (plus PATH), for tests of start-up, shutdown and what an operator sees.
import { type ChildProcess, spawn } from 'node:child_process';

export const root = new URL('../..', import.meta.url).pathname;

export interface Started {
  child: ChildProcess;
  output: () => string;
  port: number;
}

export interface Exited {
  code: number | null;
  output: string;
}

/** Starts `command` (default: the compiled service) and waits until it listens (and has printed `until`). */
export function run(
  env: Record<string, string>,
  options: { until?: string; command?: string[]; uid?: number; gid?: number } = {},
): Promise<Started> {
  const [program, ...args] = options.command ?? [process.execPath, 'scripts/start.cjs'];
  const child = spawn(program as string, args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
    uid: options.uid,
    gid: options.gid,
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 30 s:\n${output}`)), 30_000);
    child.stdout.on('data', () => {
      const match = /Server listening at http:\/\/[^:]+:(\d+)/.exec(output);
      if (match && (!options.until || output.includes(options.until))) {
        clearTimeout(timer);
        resolve({ child, output: () => output, port: Number(match[1]) });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`exited with ${code}:\n${output}`), { code, output }));
    });
  });
}

/** Runs the service expecting it to refuse to start; resolves with its exit code and output. */
export async function runUntilExit(env: Record<string, string>): Promise<Exited> {
  const started = await run(env).catch((err: Exited) => err);
  if ('child' in started) {
    await stop(started);
    throw new Error(`started, but was expected to stop:\n${started.output()}`);
  }
  return { code: started.code, output: started.output };
}

export function stop(started: Started, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  return new Promise((resolve) => {
    started.child.removeAllListeners('exit');
    started.child.on('exit', (code) => resolve(code));
    started.child.kill(signal);
  });
}
