// Writes the JSON Schema of each kind of configuration file to docs/config-files/ (see
// src/config-files/json-schemas.ts); with --check it only says whether they are current.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configFileSchemas } from '../src/config-files/json-schemas.js';

const dir = new URL('../docs/config-files/', import.meta.url).pathname;
const stale: string[] = [];
mkdirSync(dir, { recursive: true });
for (const [name, schema] of Object.entries(configFileSchemas())) {
  const path = join(dir, name);
  const text = `${JSON.stringify(schema, null, 2)}\n`;
  if (process.argv.includes('--check')) {
    if (!existsSync(path) || readFileSync(path, 'utf8') !== text) stale.push(name);
  } else writeFileSync(path, text);
}
if (stale.length) {
  process.stderr.write(`docs/config-files is out of date (${stale.join(', ')}): run npm run docs:config-files\n`);
  process.exit(1);
}
