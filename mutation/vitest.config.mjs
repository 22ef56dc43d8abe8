// The vitest configuration of a mutation-test run: the project's own, limited to the set's test
// files. The set's config (base.mjs) passes them in MUTATION_TEST_FILES; Stryker's test-runner
// workers inherit its environment. Scoping here rather than with Stryker's own `testFiles` is not
// a matter of taste: with `testFiles`, Stryker 10.1 activates a static mutant (one evaluated when
// the module loads) only after the module has loaded, and reports it as survived although the tests
// kill it (stryker-js issues 6144, 6209).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import project from '../vitest.config.ts';

const testFiles = JSON.parse(process.env.MUTATION_TEST_FILES ?? 'null');
if (!Array.isArray(testFiles)) throw new Error('MUTATION_TEST_FILES: run through npm run test:mutation <set>');

// Spread, not mergeConfig: that would append these files to the project's include (the whole suite).
export default defineConfig({
  ...project,
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: { ...project.test, include: testFiles },
});
