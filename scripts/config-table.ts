// Writes the configuration table of docs/configuration.md from the one schema in src/config.ts
// (between the config markers); with --check it only says whether the page is current.
import { readFileSync, writeFileSync } from 'node:fs';
import { CONFIG_KEYS } from '../src/config.js';

const rows = Object.entries(CONFIG_KEYS).map(([key, spec]) => {
  const production = 'productionDefault' in spec ? ` (production: \`${spec.productionDefault}\`)` : '';
  const fallback = 'default' in spec ? `\`${spec.default}\`${production}` : '';
  return `| \`${key}\` | ${fallback} | ${spec.description} |`;
});
const table = ['| Key | Default | Meaning |', '|---|---|---|', ...rows].join('\n');

const pagePath = new URL('../docs/configuration.md', import.meta.url);
const page = readFileSync(pagePath, 'utf8');
const updated = page.replace(/(<!-- config:start -->)[\s\S]*?(<!-- config:end -->)/, `$1\n${table}\n$2`);
if (process.argv.includes('--check')) {
  if (updated !== page) {
    process.stderr.write('docs/configuration.md: the configuration table is out of date: run npm run docs:config\n');
    process.exit(1);
  }
} else {
  writeFileSync(pagePath, updated);
}
