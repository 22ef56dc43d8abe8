import { ConfigError, plainHttpWarning } from './config.js';
import { EXIT_CODES, StartUpError } from './platform/lifecycle/start-up-errors.js';
import { keepMemoryReducerWorking, releaseCompileCache } from './platform/memory-reducer.js';
import { start } from './start-up/server.js';

// Listened for from the very start: a signal that arrives while the service is still starting (its
// announcement printed, its handlers not yet in place) stops it once started, instead of killing it.
let stopRequested: string | undefined;
let stopNow: ((signal: string) => void) | undefined;
const onSignal = (signal: string) => {
  if (stopNow) stopNow(signal);
  else stopRequested ??= signal;
};
process.on('SIGTERM', () => onSignal('SIGTERM'));
process.on('SIGINT', () => onSignal('SIGINT'));

keepMemoryReducerWorking();

start(process.env).then(
  (service) => {
    releaseCompileCache();
    const plainHttp = plainHttpWarning(service.config);
    if (plainHttp) service.app.log.warn(plainHttp);
    let stopping = false;
    stopNow = (signal: string) => {
      if (stopping) return exitAtOnce(service.app.log, signal);
      stopping = true;
      service.app.log.info({ signal }, 'shutting down: draining (a second signal stops at once)');
      // The steps after the grace (leases, the database pool) are short; one that hangs must not keep
      // the process past the orchestrator's own deadline.
      setTimeout(
        () => {
          service.app.log.error('shutdown steps still running 5 s after the grace: exiting');
          process.exit(1);
        },
        (service.config.SHUTDOWN_GRACE_SECONDS + STEPS_AFTER_GRACE_SECONDS) * 1000,
      ).unref();
      void service.drain().then(
        ({ cut }) => {
          service.app.log.info({ cut }, cut ? 'stopped; connections were cut at the end of the grace' : 'stopped');
          process.exit(0);
        },
        (err: unknown) => {
          service.app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    if (stopRequested) stopNow(stopRequested);
  },
  (err: unknown) => {
    // An operator reads one line that says what to fix, never a stack trace.
    if (err instanceof ConfigError) fail(`svc: ${err.message}`, EXIT_CODES.config);
    if (err instanceof StartUpError) fail(`svc: ${err.message}`, err.exitCode);
    fail(`svc: start-up failed: ${err instanceof Error ? err.message : String(err)}`, EXIT_CODES.unexpected);
  },
);

/** Time the shutdown steps that always run (releasing leases, closing the pool) get after the grace. */
const STEPS_AFTER_GRACE_SECONDS = 5;
const SIGNAL_NUMBERS = new Map([
  ['SIGINT', 2],
  ['SIGTERM', 15],
]);

/**
 * A second signal while draining: the operator wants it gone now. The exit code is the shell's for a
 * process ended by that signal (130, 143), since requests in flight were cut.
 */
function exitAtOnce(log: { warn(obj: object, message: string): void }, signal: string): never {
  log.warn({ signal }, 'second signal while draining: exiting at once');
  process.exit(128 + (SIGNAL_NUMBERS.get(signal) ?? 15));
}

function fail(message: string, code: number): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}
