// npm run wallet -- <openid-credential-offer:// or openid4vp:// URI> | list | qr <uri>   (see cli.ts)
import { runWallet } from './cli.js';
import { terminalIo } from './io.js';

const io = terminalIo();
try {
  process.exitCode = await runWallet(process.argv.slice(2), io);
} finally {
  io.close?.();
}
