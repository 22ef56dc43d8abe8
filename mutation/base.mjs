// What every mutation-test set shares. A set's config file names only the source files it mutates
// and the test files meant to catch a broken rule there: scoping the tests keeps a run affordable
// (every surviving-or-killed verdict reruns the tests that cover the mutant) and makes the score
// say what it claims, "these tests catch a defect in these files".
export function mutationConfig(set, { mutate, testFiles }) {
  const reports = `reports/mutation/${set}`;
  // Read by mutation/vitest.config.mjs (see there why not Stryker's testFiles).
  process.env.MUTATION_TEST_FILES = JSON.stringify(testFiles);
  return {
    testRunner: 'vitest',
    vitest: { configFile: 'mutation/vitest.config.mjs', related: false },
    mutate,
    coverageAnalysis: 'perTest',
    // The machine is shared: one worker, and generous timeouts so a slow test is not a "timeout" kill.
    concurrency: 1,
    timeoutMS: 15_000,
    dryRunTimeoutMinutes: 30,
    incremental: true,
    incrementalFile: `${reports}/incremental.json`,
    reporters: ['clear-text', 'progress', 'html', 'json'],
    htmlReporter: { fileName: `${reports}/index.html` },
    jsonReporter: { fileName: `${reports}/mutation.json` },
    tempDirName: '.stryker-tmp',
    cleanTempDir: true,
    ignorePatterns: ['reports', 'data', 'dist', 'artifacts', 'coverage', 'bench', 'docs'],
    // Reporting only: the scores are read, not enforced (the run is too slow for CI).
    thresholds: { high: 90, low: 80, break: null },
  };
}
