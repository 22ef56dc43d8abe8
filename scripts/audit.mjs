// CI's look at the advisories against what ships: `npm audit --omit=dev` (package.json's
// dependencies are exactly the packages whose code ships, scripts/shipped-packages.mjs), printed as
// one line per vulnerable package. A critical advisory fails the run; lower ones are reported. When
// the advisory database cannot be asked (a registry mirror without the audit endpoint, no network),
// that is said plainly and the run goes on: nothing was checked, and the line says so.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SEVERITIES = ['info', 'low', 'moderate', 'high', 'critical'];

/** The report of one `npm audit --json` output (its auditReportVersion 2 form): lines and whether it fails. */
export function auditReport(output) {
  let report;
  try {
    report = JSON.parse(output);
  } catch {
    return { lines: [`npm audit --omit=dev: no report (its output was not JSON): ${output.slice(0, 200)}`], fails: false };
  }
  const counts = report?.metadata?.vulnerabilities;
  if (!counts || typeof report.vulnerabilities !== 'object') {
    const why = report?.message ?? report?.error?.summary ?? 'no reason given';
    return { lines: [`npm audit --omit=dev: the advisory database could not be asked (${why}); nothing was checked`], fails: false };
  }
  const summary = SEVERITIES.map((severity) => `${counts[severity] ?? 0} ${severity}`).join(', ');
  const lines = [`npm audit --omit=dev: ${counts.total ?? 0} vulnerable packages (${summary})`];
  for (const entry of Object.values(report.vulnerabilities)) {
    const titles = (entry.via ?? []).map((via) => (typeof via === 'string' ? `through ${via}` : `${via.title} ${via.url ?? ''}`.trim()));
    const fix = entry.fixAvailable ? 'a fix is available' : 'no fix yet';
    lines.push(`  ${entry.severity} ${entry.name} ${entry.range ?? ''}: ${titles.join('; ')} (${fix})`);
  }
  return { lines, fails: (counts.critical ?? 0) > 0 };
}

if (fileURLToPath(import.meta.url) === process.argv[1]) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const run = spawnSync(npm, ['audit', '--omit=dev', '--json'], { encoding: 'utf8', timeout: 120_000 });
  const { lines, fails } = auditReport(run.stdout || run.stderr || String(run.error ?? ''));
  console.log(lines.join('\n'));
  process.exit(fails ? 1 : 0);
}
