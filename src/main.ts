import { ConfigError } from './config.js';
import { start } from './server.js';
import { EXIT_CODES, StartUpError } from './start-up-errors.js';

try {
  const service = await start(process.env);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    service.app.log.info({ signal }, 'shutting down: finishing requests in flight');
    await service.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
} catch (err) {
  // An operator reads one line that says what to fix, never a stack trace.
  if (err instanceof ConfigError) fail(err.message, EXIT_CODES.config);
  if (err instanceof StartUpError) fail(`svc: ${err.message}`, err.exitCode);
  fail(`svc: start-up failed: ${err instanceof Error ? err.message : String(err)}`, EXIT_CODES.unexpected);
}

function fail(message: string, code: number): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}
