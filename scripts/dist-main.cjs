'use strict';
// dist/main.js, the compiled service's entry: loads the bundle (dist/service-<hash>.js) and its
// chunks with V8's code cache. Parsing and compiling the bundle's JavaScript was a quarter of the time
// to the first answer; from the cache V8 takes the bytecode it made on an earlier run instead (Node 20
// caches no ES module, hence the CommonJS build, scripts/build.mjs).
// The cache of a file is written the first time it runs without one: 2 s after it was loaded (the
// start-up code has run and been compiled by then) or at exit, if that comes first. `npm run build`
// starts the service once to write it. V8 refuses a cache made by another Node.js version or under
// other V8 flags, so each set of flags has its own folder. V8 checks a cache against the length of
// the source only: each file is found by its own name, which carries a hash of its content
// (build.mjs). A folder it cannot write (a read-only image) only means no cache.
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const Module = require('node:module');
const { dirname, join, relative, sep } = require('node:path');
const { Script } = require('node:vm');

/** The bundle's entry, under its content-hashed name: the build writes it here. */
const SERVICE = './service.js';
const FLUSH_AFTER_MS = 2000;
const runtime = createHash('sha256')
  .update([process.version, process.arch, ...process.execArgv, process.env.NODE_OPTIONS ?? ''].join('\n'))
  .digest('hex')
  .slice(0, 16);
const cacheDir = join(__dirname, 'v8-cache', runtime);

/** Scripts compiled without a usable cache, by the cache file each should write. */
const unwritten = new Map();
let flushTimer;

function cacheFileOf(filename) {
  return join(cacheDir, `${relative(__dirname, filename).split(sep).join('__')}.bin`);
}

function readCache(file) {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

function flush() {
  clearTimeout(flushTimer);
  flushTimer = undefined;
  for (const [file, script] of unwritten) {
    unwritten.delete(file);
    try {
      mkdirSync(cacheDir, { recursive: true });
      const aside = `${file}.${process.pid}.tmp`;
      writeFileSync(aside, script.createCachedData());
      renameSync(aside, file);
    } catch {
      // Not writable here: the next start compiles as this one did.
    }
  }
}

const compile = Module.prototype._compile;
Module.prototype._compile = function compileWithCache(content, filename) {
  if (relative(__dirname, filename).startsWith('..')) return compile.call(this, content, filename);
  const file = cacheFileOf(filename);
  const cachedData = readCache(file);
  const script = new Script(Module.wrap(content), { filename, cachedData });
  if (cachedData === undefined || script.cachedDataRejected) {
    unwritten.set(file, script);
    flushTimer ??= setTimeout(flush, FLUSH_AFTER_MS).unref();
  }
  const wrapper = script.runInThisContext({ displayErrors: true });
  return wrapper.call(this.exports, this.exports, Module.createRequire(filename), this, filename, dirname(filename));
};
process.once('exit', flush);

require(SERVICE);
