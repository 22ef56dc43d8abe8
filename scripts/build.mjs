// Compiles the service for `npm start`: dist/main.js (the entry, scripts/dist-main.cjs), the bundle
// dist/service-<hash>.js and, in dist/chunks/, the code that is loaded on first use (the protocol
// libraries behind `lazy()` imports, tracing, the PostgreSQL driver), as CommonJS for V8's code
// cache, which the build then writes by starting the service once. Packages are bundled too: loading
// a few files instead of a few thousand halves the time to the first answer. Left outside are the
// native SQLite binding and the packages that read their own files at run time.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const ENTRY = root('src/main.ts');
const DIST = root('dist');
const OUTFILE = join(DIST, 'main.js');
const EXTERNAL = ['better-sqlite3', 'pg-native'];
/**
 * Packages that bundled CommonJS code requires at load time but uses only on rare paths: each is
 * replaced by a stand-in that requires the real package from node_modules at its first use, so a
 * start neither reads nor keeps their code. yaml: the explorer's YAML document; json-schema-resolver:
 * the first OpenAPI document; Fastify's own schema compilers (Ajv, fast-json-stringify): never, as
 * Zod validates and serializes every route (app.ts). Node's own modules too, which it compiles at
 * their first load: HTTPS (with TLS) at the first outbound https: call, HTTP/2 never (Fastify's
 * server module and prom-client's push gateway name them, with or without the node: prefix).
 */
const LOADED_ON_FIRST_USE = [
  'yaml',
  'json-schema-resolver',
  '@fastify/ajv-compiler',
  '@fastify/fast-json-stringify-compiler',
  'https',
  'http2',
];

export async function buildService() {
  const { build, transform, stop } = await import('esbuild');
  await buildConsole(build);
  const result = await build({
    write: false,
    entryPoints: { service: ENTRY },
    outdir: DIST,
    // Every file's name carries a hash of its content: V8 checks a code cache against the length of
    // the source only, so a cache must never meet another file of the same name (dist-main.cjs).
    entryNames: '[name]-[hash]',
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
    // Inline, for the CommonJS pass to carry on to the sources.
    sourcemap: 'inline',
    logLevel: 'warning',
  });
  const files = (await Promise.all(result.outputFiles.map((file) => asCommonJs(transform, file)))).flat();
  // esbuild keeps a helper process for further builds; the service needs none.
  await stop();
  const service = result.outputFiles.find((file) => dirname(file.path) === DIST).path;
  // The bundle first (its names carry a content hash, so a running process keeps finding its own
  // chunks), the entry that names it last.
  writeAll([
    ...files,
    { path: join(DIST, 'package.json'), contents: '{ "type": "commonjs" }\n' },
    { path: OUTFILE, contents: entryLoading(basename(service)) },
  ]);
  rmSync(join(DIST, 'v8-cache'), { recursive: true, force: true });
  await writeCodeCache();
}

/** dist/main.js: scripts/dist-main.cjs, naming the bundle's entry file. */
function entryLoading(name) {
  const template = readFileSync(root('scripts/dist-main.cjs'), 'utf8');
  const placeholder = "const SERVICE = './service.js';";
  if (!template.includes(placeholder)) throw new Error(`scripts/dist-main.cjs: no line ${placeholder}`);
  return template.replace(placeholder, `const SERVICE = './${name}';`);
}

/**
 * esbuild splits code into chunks for ES modules only; this rewrites each chunk as CommonJS, whose
 * compiled code V8 can cache on Node 20 (scripts/dist-main.cjs). Strict, as the ES module was, and
 * with import() turned into require(): the chunks are CommonJS now.
 */
async function asCommonJs(transform, file) {
  const name = relative(DIST, file.path);
  const { code, map } = await transform(file.text, {
    sourcefile: name,
    loader: 'js',
    format: 'cjs',
    target: 'node20',
    platform: 'node',
    supported: { 'dynamic-import': false },
    define: { 'import.meta.url': '__svcModuleUrl' },
    banner: '"use strict";const __svcModuleUrl=require("node:url").pathToFileURL(__filename).href;',
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'external',
  });
  return [
    { path: file.path, contents: `${code}//# sourceMappingURL=${basename(file.path)}.map\n` },
    { path: `${file.path}.map`, contents: map },
  ];
}

/**
 * Starts the built service once, with the V8 flags `npm start` gives it, and stops it after its first
 * answer: its code cache is written at exit, so the first `npm start` after a build is as fast as the
 * next ones. The cache only saves time: a service that does not answer here leaves the build as it
 * is, with a warning.
 */
async function writeCodeCache() {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-build-'));
  const child = spawn(process.execPath, [...runtimeFlags(), OUTFILE], {
    cwd: root('.'),
    env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
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
    console.warn(`build: no code cache written, the built service did not answer (${err.message}):\n${output}`);
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The node flags of `npm start` (package.json), which the code cache must be made with. */
function runtimeFlags() {
  const pkg = JSON.parse(readFileSync(root('package.json'), 'utf8'));
  const command = /\bnode((?:\s+--\S+)*)\s+scripts\/start\.cjs/.exec(pkg.scripts.start);
  if (!command) throw new Error('package.json: the start script no longer runs node scripts/start.cjs');
  return command[1].trim().split(/\s+/).filter(Boolean);
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

if (fileURLToPath(import.meta.url) === process.argv[1]) await buildService();
