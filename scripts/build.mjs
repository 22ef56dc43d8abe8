// Compiles the service for `npm start`: dist/main.js (the entry, scripts/dist-main.mjs), the bundle
// dist/service.js and, in dist/chunks/, the code that is loaded on first use (the protocol libraries
// behind `lazy()` imports, tracing, the PostgreSQL driver), one ES module graph; then starts the
// service once so that Node's compile cache (dist/compile-cache) holds the bundle's compiled code.
// Packages are bundled too: loading a few files instead of a few thousand halves the time to the
// first answer. Left outside: pg's optional native binding, which the service does not install.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundledPackages, checkDeclared, runTimePackages, writeSbom } from './shipped-packages.mjs';

const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const ENTRY = root('src/main.ts');
const DIST = root('dist');
const OUTFILE = join(DIST, 'main.js');
const EXTERNAL = ['pg-native'];
/**
 * Packages that bundled CommonJS code requires at load time but uses only on rare paths: each is
 * replaced by a stand-in that requires the real package from node_modules at its first use, so a
 * start neither reads nor keeps their code. yaml: the explorer's YAML document; json-schema-resolver:
 * the first OpenAPI document; Fastify's own schema compilers (Ajv, fast-json-stringify): never, as
 * Zod validates and serializes every route (app.ts). Node's own modules too, which it compiles at
 * their first load: HTTPS (with TLS) at the first outbound https: call, HTTP/2 never (Fastify's
 * server module and prom-client's push gateway name them, with or without the node: prefix).
 * Measured on Node 24 (three starts each, 30 s idle): without the packages' stand-ins the idle
 * service holds 2.5 MiB more (91.2 against 88.7 MiB) and answers no sooner; the Node modules' gain
 * (10 ms on Node 20) is within this machine's noise.
 */
const LOADED_ON_FIRST_USE = [
  'yaml',
  'json-schema-resolver',
  '@fastify/ajv-compiler',
  '@fastify/fast-json-stringify-compiler',
  'https',
  'http2',
];
/**
 * Bundled CommonJS code calls require() for the packages left outside and for Node's own modules, and
 * names its own file and folder; an ES module has none of these, so each output file gets them (its
 * own file and folder in dist/, as a CommonJS build would give).
 */
const COMMONJS_NAMES = [
  'import { createRequire as __svcCreateRequire } from "node:module";',
  'const require = __svcCreateRequire(import.meta.url), __filename = import.meta.filename, __dirname = import.meta.dirname;',
].join('');

/**
 * Packages the service's own code loads from node_modules at run time, past the bundle: the RE2
 * engine of claim patterns (required at its first use, src/platform/lazy.ts), Swagger UI's files,
 * which the explorer serves (src/platform/http/explorer.ts), and koffi, the foreign function
 * interface of PKCS#11 providers (src/key-chains/providers/pkcs11/cryptoki.ts): its native binary, prebuilt
 * for each platform in a package of its own, cannot be bundled.
 */
const READ_AT_RUN_TIME = ['re2js', 'swagger-ui-dist', 'koffi'];
/** Every package the compiled service loads from node_modules rather than from its bundle. */
export const RUN_TIME_PACKAGES = [...READ_AT_RUN_TIME, ...LOADED_ON_FIRST_USE.filter((name) => !isBuiltin(name))];

export async function buildService() {
  const { build, stop } = await import('esbuild');
  const consoleMetafile = await buildConsole(build);
  const result = await build({
    write: false,
    entryPoints: { service: ENTRY },
    outdir: DIST,
    // Chunks are named by their content: a process still running an earlier build finds its own.
    chunkNames: 'chunks/[name]-[hash]',
    splitting: true,
    bundle: true,
    // Less text to read and compile at every start; names stay, so stack traces still read well.
    minifyWhitespace: true,
    minifySyntax: true,
    // The packages' licence comments go to dist/*.LEGAL.txt: in the code, one non-ASCII letter in them
    // (a name) made V8 hold the whole 1.4 MB bundle's source as two bytes a character.
    legalComments: 'external',
    external: EXTERNAL,
    plugins: [builtinsRequired, loadOnFirstUse(LOADED_ON_FIRST_USE), zodEnglishOnly],
    platform: 'node',
    format: 'esm',
    target: 'node22',
    banner: { js: COMMONJS_NAMES },
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
  });
  const shipped = [...bundledPackages(result.metafile, consoleMetafile), ...runTimePackages(RUN_TIME_PACKAGES)];
  checkDeclared(shipped);
  // esbuild keeps a helper process for further builds; the service needs none.
  await stop();
  // The CommonJS build that came before this one left a package.json that would make Node read
  // every file here as CommonJS, and its own code cache. The compile cache of earlier builds goes
  // too: Node keeps a folder per set of V8 flags and never removes one, and the warm-up below
  // writes the one this build's starts read.
  for (const old of ['package.json', 'v8-cache', 'compile-cache']) rmSync(join(DIST, old), { recursive: true, force: true });
  // The bundle first, the entry that loads it last.
  writeAll([...result.outputFiles, { path: OUTFILE, contents: entryFile() }]);
  chmodSync(OUTFILE, 0o755);
  writeSbom(DIST, shipped, ['main.js', 'service.js']);
  buildDocs();
  await writeCompileCache();
}

/**
 * dist/docs, the documentation site the service serves at /docs (`npm run docs` alone rebuilds just
 * it): built with the service, so that a fresh `npm start` serves it too. Its builder is TypeScript,
 * run through tsx as `npm run docs` runs it.
 */
function buildDocs() {
  const docs = spawnSync(process.execPath, ['--import', 'tsx', root('scripts/docs/build.ts')], { cwd: root('.'), encoding: 'utf8' });
  if (docs.status !== 0) throw new Error(`the documentation site did not build:\n${docs.stderr || docs.stdout}`);
}

/**
 * dist/main.js: scripts/dist-main.mjs under a shebang with `npm start`'s runtime settings, so that
 * whatever runs the file itself (the Dockerfile's CMD) runs it as `npm start` does.
 */
function entryFile() {
  const { env, nodeFlags } = runtimeSettings();
  const settings = [...Object.entries(env).map(([name, value]) => `${name}=${value}`), 'node', ...nodeFlags];
  return `#!/usr/bin/env -S ${settings.join(' ')}\n${readFileSync(root('scripts/dist-main.mjs'), 'utf8')}`;
}

/**
 * Starts the built service once, as `npm start` does, and stops it after its first answer: Node
 * writes its compile cache at exit, so the first `npm start` after a build is as fast as the next
 * ones. The cache only saves time: a service that does not answer here leaves the build as it is,
 * with a warning.
 */
async function writeCompileCache() {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-build-'));
  const { env, nodeFlags } = runtimeSettings();
  const child = spawn(process.execPath, [...nodeFlags, OUTFILE], {
    cwd: root('.'),
    env: { PATH: process.env.PATH ?? '', ...env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    const port = await new Promise((resolve, reject) => {
      const read = (chunk) => {
        output += chunk;
        const listening = /Server listening at http:\/\/[^:]+:(\d+)/.exec(output);
        if (listening) resolve(Number(listening[1]));
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
      exited.then(() => reject(new Error('it stopped')));
      setTimeout(() => reject(new Error('it did not listen within 30 s')), 30_000).unref();
    });
    await fetch(`http://127.0.0.1:${port}/health`).then((response) => response.arrayBuffer());
  } catch (err) {
    console.warn(`build: no compile cache written, the built service did not answer (${err.message}):\n${output}`);
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * The runtime settings of `npm start`, the one place they are written (package.json's start script:
 * `exec env NAME=value ... node --flag ... scripts/start.cjs`): environment variables and node flags.
 * The build writes them into dist/main.js's shebang and warms the cache up with them (V8 refuses a
 * cache made under other flags); the benchmarks start the service with them.
 */
export function runtimeSettings() {
  const pkg = JSON.parse(readFileSync(root('package.json'), 'utf8'));
  const command = /^exec env((?:\s+[A-Z_]+=\S+)*)\s+node((?:\s+--\S+)*)\s+scripts\/start\.cjs$/.exec(pkg.scripts.start);
  if (!command) throw new Error('package.json: the start script is no longer `exec env NAME=value... node --flag... scripts/start.cjs`');
  const words = (text) => text.trim().split(/\s+/).filter(Boolean);
  return { env: Object.fromEntries(words(command[1]).map((pair) => pair.split('='))), nodeFlags: words(command[2]) };
}

/**
 * Node's own modules as require() where the service's own code (src/) imports them. An ES module
 * import of a built-in reads every one of its exports to make the namespace, and reading some of them
 * loads more: `node:http`'s WebSocket, CloseEvent and MessageEvent load Node's whole fetch
 * implementation (undici), which loads TLS, HTTP/2 and worker threads. Measured on Node 24.21: an
 * idle process that imports `node:http` holds 13 MiB more than one that requires it. Through
 * require(), esbuild reads each export at its use, and what the service never touches stays unloaded.
 */
const builtinsRequired = {
  name: 'builtins-required',
  setup(build) {
    build.onResolve({ filter: /^[a-z]/ }, (args) => {
      if (!isBuiltin(args.path) || (args.kind !== 'import-statement' && args.kind !== 'dynamic-import')) return undefined;
      // The service's own code only: a package's imports stay as they are (OpenTelemetry's exporter,
      // loaded with tracing, no longer sent spans when its imports of Node's modules were rewritten).
      if (!args.importer.startsWith(root('src'))) return undefined;
      return { path: args.path.startsWith('node:') ? args.path : `node:${args.path}`, namespace: 'builtin-required' };
    });
    build.onLoad({ filter: /.*/, namespace: 'builtin-required' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

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
        // Only for require(): an import would see the stand-in through esbuild's interop copy, without
        // the package's named exports.
        if (args.kind !== 'require-call' || !names.has(args.path.replace(/^node:/, '')) || args.pluginData === 'plain') return undefined;
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
 * The web console (console/, Preact and TypeScript) as dist/console/{index.html,styles.css,favicon.svg,app.js},
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
    metafile: true,
    logLevel: 'warning',
  });
  const copied = ['index.html', 'styles.css', 'favicon.svg'].map((name) => ({
    path: join(outdir, name),
    contents: readFileSync(root(`console/${name}`)),
  }));
  writeAll([...result.outputFiles, ...copied]);
  return result.metafile;
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

if (fileURLToPath(import.meta.url) === process.argv[1]) await buildService();
