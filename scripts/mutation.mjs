// npm run test:mutation [set...|all]: runs Stryker over one or more mutation-test sets, one after the
// other (never in parallel: each run already takes a worker and the tests start real servers).
// Without an argument it lists the sets, because running all of them takes hours.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const CONFIG_SUFFIX = '.stryker.config.mjs';
const configFolder = new URL('../mutation/', import.meta.url);
const sets = readdirSync(configFolder)
  .filter((name) => name.endsWith(CONFIG_SUFFIX))
  .map((name) => name.slice(0, -CONFIG_SUFFIX.length))
  .sort();

const requested = process.argv.slice(2);
if (requested.length === 0) {
  console.log(`Mutation-test sets (mutation/<set>${CONFIG_SUFFIX}):\n  ${sets.join('\n  ')}`);
  console.log('\nRun one: npm run test:mutation <set>   Run every set: npm run test:mutation all');
  process.exit(0);
}
const toRun = requested.includes('all') ? sets : requested;
const unknown = toRun.filter((set) => !sets.includes(set));
if (unknown.length > 0) {
  console.error(`Unknown mutation-test set: ${unknown.join(', ')}. Known: ${sets.join(', ')}`);
  process.exit(2);
}
for (const set of toRun) {
  console.log(`\n=== mutation-test set ${set}: report in reports/mutation/${set}/index.html`);
  const run = spawnSync('npx', ['stryker', 'run', `mutation/${set}${CONFIG_SUFFIX}`], { stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
