import { ConfigError, plainHttpWarning } from './config.js';
import { keepMemoryReducerWorking, releaseCompileCache } from './platform/memory-reducer.js';
import { start } from './server.js';
import { EXIT_CODES, StartUpError } from './start-up-errors.js';

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
      if (stopping) return;
      stopping = true;
      service.app.log.info({ signal }, 'shutting down: finishing requests in flight');
      void service.close().then(() => process.exit(0));
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

function fail(message: string, code: number): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}
