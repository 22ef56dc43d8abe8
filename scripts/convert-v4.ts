// npm run convert-v4 -- <folder> [--out <folder>] [--dry-run]
// Rewrites the version-4 credential configuration files under <folder> (any depth) into the field
// model of version 5, in place or into --out, printing what changed in each. A file with anything
// that cannot be mapped is left as it is and named with the key; the exit code is then 1.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { convertV4, isVersion4 } from '../src/config-files/convert-v4.js';

const USAGE = 'usage: npm run convert-v4 -- <folder> [--out <folder>] [--dry-run]';

function parseArgs(args: string[]) {
  const options = { folder: undefined as string | undefined, out: undefined as string | undefined, dryRun: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--dry-run') options.dryRun = true;
    else if (arg === '--out') options.out = args[++i];
    else if (!arg.startsWith('--') && options.folder === undefined) options.folder = arg;
    else fail(`unknown argument ${arg}\n${USAGE}`);
  }
  if (!options.folder || (args.includes('--out') && !options.out)) fail(USAGE);
  if (!statSync(options.folder as string, { throwIfNoEntry: false })?.isDirectory()) fail(`${options.folder}: no such folder`);
  return options as typeof options & { folder: string };
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

function jsonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => !entry.name.startsWith('.'))
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return jsonFiles(path);
      return entry.name.endsWith('.json') ? [path] : [];
    });
}

const options = parseArgs(process.argv.slice(2));
const root = resolve(options.folder);
let converted = 0;
let refused = 0;
for (const file of jsonFiles(root)) {
  const name = relative(root, file);
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    continue; // not a configuration file of ours
  }
  if (!isVersion4(document)) continue;
  const result = convertV4(document, basename(file, '.json'));
  if (!result.document) {
    refused++;
    process.stderr.write(`${name}: refused, left unchanged\n${result.refusals.map((r) => `  ${r}\n`).join('')}`);
    continue;
  }
  converted++;
  process.stdout.write(`${name}: converted\n${result.changes.map((c) => `  ${c}\n`).join('')}`);
  if (options.dryRun) continue;
  const target = options.out ? join(resolve(options.out), name) : file;
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, `${JSON.stringify(result.document, null, 2)}\n`);
}
const where = options.dryRun ? ' (dry run: nothing written)' : options.out ? ` into ${options.out}` : '';
process.stdout.write(`${converted} file(s) converted${where}, ${refused} refused\n`);
process.exit(refused ? 1 : 0);
