// npm run wallet -- <openid-credential-offer:// or openid4vp:// URI> | list | rm <id> | reset | qr <uri>   (see cli.ts)
import { describeError, runWallet } from './cli.js';
import { terminalIo } from './io.js';

const io = terminalIo();
try {
  process.exitCode = await runWallet(process.argv.slice(2), io);
} catch (err) {
  // runWallet reports what it knows of; anything else still ends in one line, never a stack trace.
  process.stderr.write(`error: ${describeError(err)}\n`);
  process.exitCode = 1;
} finally {
  io.close?.();
}
