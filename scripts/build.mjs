// Compiles the service for `npm start`: dist/main.js and, in dist/chunks/, the code that is loaded
// on first use (the protocol libraries behind `lazy()` imports, tracing, the PostgreSQL driver).
// Packages are bundled too: loading a few files instead of a few thousand halves the time to the
// first answer. Left outside are the native SQLite binding and the packages that read their own
// files at run time.
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const ENTRY = root('src/main.ts');
export const OUTFILE = root('dist/main.js');
const EXTERNAL = ['better-sqlite3', 'pg-native'];

export async function buildService() {
  const { build, stop } = await import('esbuild');
  await buildConsole(build);
  const result = await build({
    write: false,
    entryPoints: { main: ENTRY },
    outdir: dirname(OUTFILE),
    chunkNames: 'chunks/[name]-[hash]',
    splitting: true,
    bundle: true,
    // Less text to read and compile at every start; names stay, so stack traces still read well.
    minifyWhitespace: true,
    minifySyntax: true,
    external: EXTERNAL,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
    // Bundled CommonJS packages call require(); an ES module has none of its own.
    banner: {
      js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);",
    },
  });
  // esbuild keeps a helper process for further builds; the service needs none.
  await stop();
  // Chunks first (their names carry a content hash, so a running process keeps finding its own),
  // main.js last.
  writeAll(result.outputFiles.sort((a, b) => Number(a.path === OUTFILE) - Number(b.path === OUTFILE)));
}

/**
 * The web console (console/, Preact and TypeScript) as dist/console/{index.html,styles.css,app.js},
 * which the service serves at /console.
 */
export async function buildConsole(build) {
  const outdir = root('dist/console');
  const result = await build({
    write: false,
    entryPoints: { app: root('console/src/main.tsx') },
    outdir,
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: root('console/tsconfig.json'),
    logLevel: 'warning',
  });
  const copied = ['index.html', 'styles.css'].map((name) => ({
    path: join(outdir, name),
    contents: readFileSync(root(`console/${name}`)),
  }));
  writeAll([...result.outputFiles, ...copied]);
}

/** Each file written aside and renamed into place, so a process reading meanwhile never gets half a file. */
function writeAll(files) {
  for (const file of files) {
    mkdirSync(dirname(file.path), { recursive: true });
    const aside = `${file.path}.${process.pid}.tmp`;
    writeFileSync(aside, file.contents);
    renameSync(aside, file.path);
  }
}

/** True when dist/main.js is missing or older than a source file (service or console), the lock file or this script. */
export async function buildIsStale() {
  const built = mtime(OUTFILE);
  if (built === undefined) return true;
  const inputs = [root('package-lock.json'), fileURLToPath(import.meta.url)];
  for (const dir of ['src', 'console', 'clients/typescript']) {
    for (const file of await readdir(root(dir), { recursive: true })) inputs.push(join(root(dir), file));
  }
  return inputs.some((file) => (mtime(file) ?? 0) > built);
}

function mtime(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

if (fileURLToPath(import.meta.url) === process.argv[1]) await buildService();
