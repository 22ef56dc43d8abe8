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
/**
 * Packages that bundled CommonJS code requires at load time but uses only on rare paths: each is
 * replaced by a stand-in that requires the real package from node_modules at its first use, so a
 * start neither reads nor keeps their code. yaml: the explorer's YAML document; json-schema-resolver:
 * the first OpenAPI document; Fastify's own schema compilers (Ajv, fast-json-stringify): never, as
 * Zod validates and serializes every route (app.ts).
 */
const LOADED_ON_FIRST_USE = ['yaml', 'json-schema-resolver', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler'];

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
    plugins: [loadOnFirstUse(LOADED_ON_FIRST_USE), zodEnglishOnly],
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
 * The stand-ins of LOADED_ON_FIRST_USE. The build fails if node_modules would give the running
 * service another copy of a package than the one the bundling code resolves (a nested version).
 */
function loadOnFirstUse(packages) {
  const names = new Set(packages);
  return {
    name: 'load-on-first-use',
    setup(build) {
      build.onResolve({ filter: /^[@a-z]/ }, async (args) => {
        // pluginData 'plain': the resolutions asked below, answered by esbuild itself.
        if (!names.has(args.path) || args.pluginData === 'plain') return undefined;
        if (args.namespace === 'first-use') return { path: args.path, external: true };
        const resolve = (resolveDir) => build.resolve(args.path, { kind: args.kind, resolveDir, pluginData: 'plain' });
        const [bundled, atRunTime] = await Promise.all([resolve(args.resolveDir), resolve(dirname(OUTFILE))]);
        if (bundled.path !== atRunTime.path) {
          return { errors: [{ text: `${args.path}: ${args.importer} uses ${bundled.path}, the service would load ${atRunTime.path}` }] };
        }
        return { path: args.path, namespace: 'first-use' };
      });
      build.onLoad({ filter: /.*/, namespace: 'first-use' }, (args) => ({ contents: standIn(args.path), loader: 'js' }));
    },
  };
}

/** A module that behaves as the package's exports (an object or a function) and loads it on first touch. */
function standIn(name) {
  return `let loaded;
const load = () => (loaded ??= require(${JSON.stringify(name)}));
module.exports = new Proxy(function () {}, {
  get: (_, key) => load()[key],
  has: (_, key) => key in load(),
  apply: (_, self, args) => Reflect.apply(load(), self, args),
  construct: (_, args) => Reflect.construct(load(), args),
});
`;
}

/**
 * Zod's namespace exports its 40-odd message locales, 300 KB the service never uses (its messages
 * are English, platform/validation-messages.ts): the bundle keeps English alone.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: 'export { default as en } from "./en.js";',
      loader: 'js',
    }));
  },
};

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
