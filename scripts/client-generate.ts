// Regenerates clients/typescript/{openapi.json,schema.ts} from the service's OpenAPI document, read
// from a service started in this process on a throwaway SQLite database; --check only says whether
// the committed files are current.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { start } from '../src/start-up/server.js';
import { clientFiles } from './client-files.js';

const dir = new URL('../clients/typescript/', import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), 'svc-openapi-'));
const service = await start(
  {
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    PORT: '0',
    DATA_DIR: dataDir,
    MASTER_SECRET: randomBytes(32).toString('base64url'),
    AUTH_CLIENT_ID: 'generator',
    AUTH_CLIENT_SECRET: randomBytes(24).toString('base64url'),
  },
  () => {},
);
try {
  const document = await (await fetch(`${service.url}/api/openapi.json`)).json();
  const stale: string[] = [];
  for (const [name, text] of Object.entries(await clientFiles(document))) {
    const path = join(dir, name);
    if (!process.argv.includes('--check')) writeFileSync(path, text);
    else if (!existsSync(path) || readFileSync(path, 'utf8') !== text) stale.push(name);
  }
  if (stale.length) {
    process.stderr.write(`clients/typescript is out of date (${stale.join(', ')}): run npm run client:generate\n`);
    process.exitCode = 1;
  }
} finally {
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
}
