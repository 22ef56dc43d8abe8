// Prints the README's configuration table from the one schema in src/config.ts.
import { CONFIG_KEYS } from '../src/config.js';

const rows = Object.entries(CONFIG_KEYS).map(([key, spec]) => {
  const fallback = 'default' in spec ? `\`${spec.default}\`` : '';
  return `| \`${key}\` | ${fallback} | ${spec.description} |`;
});
process.stdout.write(['| Key | Default | Meaning |', '|---|---|---|', ...rows].join('\n') + '\n');
