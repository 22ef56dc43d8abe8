// npm run convert-v4 -- <folder> [--out <folder>] [--dry-run]
// Rewrites the version-4 credential configuration files under <folder> (any depth) into the field
// model of version 5, in place or into --out, printing what changed in each. A file with anything
// that cannot be mapped is left as it is and named with the key; the exit code is then 1.
//
// With --out the new folder is one CONFIG_IMPORT reads: every other file is copied beside the
// converted ones (tenant.json, clients, key chains, configurations already in the version-5 model),
// and a tenant folder without tenant.json gets one naming the tenant after its folder. A refused
// file is left out of it (and named, as above).
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { convertV4, isVersion4, type Json } from '../src/config-files/convert-v4.js';

const USAGE = 'usage: npm run convert-v4 -- <folder> [--out <folder>] [--dry-run]';

/**
 * Without `--`, npm keeps the flags for itself: `npm run convert-v4 <folder> --out <dir>` hands the
 * script <folder> and <dir> and sets npm_config_out=true (`--out=<dir>`: npm_config_out=<dir>;
 * `--dry-run`: npm_config_dry_run=true). Both spellings are understood.
 */
function npmFlags(env: NodeJS.ProcessEnv) {
  const out = env.npm_config_out;
  return { outFollows: out === 'true', out: out && out !== 'true' ? out : undefined, dryRun: env.npm_config_dry_run === 'true' };
}

function parseArgs(args: string[], env: NodeJS.ProcessEnv) {
  const npm = npmFlags(env);
  const options = { folder: undefined as string | undefined, out: npm.out, dryRun: npm.dryRun };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--dry-run') options.dryRun = true;
    else if (arg === '--out') options.out = args[++i];
    else if (!arg.startsWith('--') && options.folder === undefined) options.folder = arg;
    else if (!arg.startsWith('--') && npm.outFollows && options.out === undefined) options.out = arg;
    else fail(`unknown argument ${arg}\n${USAGE}`);
  }
  if (npm.outFollows && options.out === undefined) fail(USAGE);
  if (!options.folder || (args.includes('--out') && !options.out)) fail(USAGE);
  if (!statSync(options.folder as string, { throwIfNoEntry: false })?.isDirectory()) fail(`${options.folder}: no such folder`);
  return options as typeof options & { folder: string };
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

/** Every visible file under `dir`, at any depth, in name order. */
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => !entry.name.startsWith('.'))
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      return entry.isDirectory() ? files(path) : [path];
    });
}

/** The version-4 document in `file`, or undefined for any other file (not JSON, or already version 5). */
function version4(file: string): Json | undefined {
  if (!file.endsWith('.json')) return undefined;
  try {
    const document: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return isVersion4(document) ? document : undefined;
  } catch {
    return undefined; // not a configuration file of ours
  }
}

function write(target: string, document: unknown) {
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, `${JSON.stringify(document, null, 2)}\n`);
}

/** --out: the tenant folders (the top-level folders of `out`) each get a tenant.json if they have none. */
function completeTenants(out: string) {
  for (const entry of readdirSync(out, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const tenantFile = join(out, entry.name, 'tenant.json');
    if (existsSync(tenantFile)) continue;
    write(tenantFile, { name: entry.name });
    process.stdout.write(`${entry.name}/tenant.json: written (name "${entry.name}"; change it as needed)\n`);
  }
}

const options = parseArgs(process.argv.slice(2), process.env);
const root = resolve(options.folder);
let converted = 0;
let refused = 0;
const out = options.out === undefined ? undefined : resolve(options.out);
for (const file of files(root)) {
  const name = relative(root, file);
  const document = version4(file);
  if (document === undefined) {
    if (out && !options.dryRun) {
      mkdirSync(dirname(join(out, name)), { recursive: true });
      copyFileSync(file, join(out, name));
    }
    continue;
  }
  const result = convertV4(document, basename(file, '.json'));
  if (!result.document) {
    refused++;
    process.stderr.write(`${name}: refused, left unchanged\n${result.refusals.map((r) => `  ${r}\n`).join('')}`);
    continue;
  }
  converted++;
  process.stdout.write(`${name}: converted\n${result.changes.map((c) => `  ${c}\n`).join('')}`);
  if (!options.dryRun) write(out ? join(out, name) : file, result.document);
}
if (out && !options.dryRun) completeTenants(out);
const where = options.dryRun ? ' (dry run: nothing written)' : options.out ? ` into ${options.out}` : '';
process.stdout.write(`${converted} file(s) converted${where}, ${refused} refused\n`);
process.exit(refused ? 1 : 0);
