// Writes the configuration table of docs/configuration.md from the one schema in src/config.ts
// (between the config markers), laid out as biome formats markdown, so that `npm run lint` and the
// generator agree; with --check it only says whether the page is current.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CONFIG_KEYS } from '../src/config.js';

const rows = Object.entries(CONFIG_KEYS).map(([key, spec]) => {
  const production = 'productionDefault' in spec ? ` (production: \`${spec.productionDefault}\`)` : '';
  const fallback = 'default' in spec ? `\`${spec.default}\`${production}` : '';
  return `| \`${key}\` | ${fallback} | ${spec.description} |`;
});
const table = ['| Key | Default | Meaning |', '|---|---|---|', ...rows].join('\n');

const root = fileURLToPath(new URL('..', import.meta.url));
const pagePath = 'docs/configuration.md';
const page = readFileSync(`${root}/${pagePath}`, 'utf8');
const withTable = page.replace(/(<!-- config:start -->)[\s\S]*?(<!-- config:end -->)/, `$1\n${table}\n$2`);
// biome pads the table's columns; the page is compared and written as biome leaves it.
const updated = execFileSync(`${root}/node_modules/.bin/biome`, ['format', `--stdin-file-path=${pagePath}`], {
  cwd: root,
  input: withTable,
  encoding: 'utf8',
});
if (process.argv.includes('--check')) {
  if (updated !== page) {
    process.stderr.write('docs/configuration.md: the configuration table is out of date: run npm run docs:config\n');
    process.exit(1);
  }
} else {
  writeFileSync(`${root}/${pagePath}`, updated);
}
