// `npm start` and `npm test` on a Node.js older than the service needs (these machines ship 20): they
// run again under the pinned Node (scripts/runtime.cjs), fetched once from the npm registry into the
// folder CI keeps it in. Run where such an older Node is installed beside the one running the suite.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const root = join(import.meta.dirname, '..', '..');
const runtime = require(join(root, 'scripts', 'runtime.cjs')) as { supported(version: string): boolean; NODE_VERSION: string };
const olderNode = '/usr/bin/node';
const olderVersion = spawnSync(olderNode, ['--version'], { encoding: 'utf8' }).stdout?.trim().replace(/^v/, '');

describe('the runtime the scripts run on', () => {
  it('takes Node 22.16 and later, and nothing older', () => {
    for (const version of ['22.16.0', '22.20.1', '23.0.0', '24.21.0', '26.1.0']) expect(runtime.supported(version), version).toBe(true);
    for (const version of ['20.20.2', '22.15.1', '18.0.0']) expect(runtime.supported(version), version).toBe(false);
  });

  it.runIf(olderVersion && !runtime.supported(olderVersion))(
    'runs a bin of the project under the pinned Node when started by an older one',
    () => {
      const script = `process.stdout.write(process.version)`;
      const ran = spawnSync(olderNode, [join(root, 'scripts', 'runtime.cjs'), 'tsx', '-e', script], { cwd: root, encoding: 'utf8' });
      expect(ran.status, ran.stderr).toBe(0);
      expect(ran.stdout.trim()).toBe(`v${runtime.NODE_VERSION}`);
    },
  );
});
