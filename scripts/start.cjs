'use strict';
// `npm start`: runs the compiled service in this very process (so a signal sent to npm reaches the
// server), rebuilding it first only when a source changed since the last build. dist/main.js is an ES
// module with top-level await, so it is imported, not required.
const { readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');
const { runUnderPinnedNode, supported } = require('./runtime.cjs');

const root = join(__dirname, '..');
const ENTRY = join(root, 'dist', 'main.js');

/**
 * True when dist/main.js is missing or older than a source file or folder (service, console, client:
 * a folder's time changes when a file in it is deleted), the documentation (the build makes its site
 * too), the lock file or the build scripts.
 */
function buildIsStale() {
  const built = mtime(ENTRY);
  if (built === undefined) return true;
  const inputs = ['package-lock.json', 'scripts/build.mjs', 'scripts/dist-main.mjs', 'README.md'].map(
    (file) => mtime(join(root, file)) ?? 0,
  );
  const sources = ['src', 'console', 'clients/typescript', 'docs', 'scripts/docs'].map((dir) => newest(join(root, dir)));
  return Math.max(...inputs, ...sources) > built;
}

/**
 * The latest modification time in a folder's tree: names and one stat each. The service runs in this
 * process afterwards, and the walk through Dirent entries and path.join it replaces left it 5 to 6 MiB
 * more resident when idle (85 MiB against 78.5, 30 s after its first answer, three starts each);
 * 4 to 15 ms for the 500 entries either way, readdir's own recursion being three times slower.
 */
function newest(dir) {
  let latest = mtime(dir) ?? 0;
  for (const name of readdirSync(dir)) {
    const path = `${dir}/${name}`;
    const stats = statSync(path, { throwIfNoEntry: false });
    if (stats === undefined) continue;
    const time = stats.isDirectory() ? newest(path) : stats.mtimeMs;
    if (time > latest) latest = time;
  }
  return latest;
}

function mtime(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

function start() {
  const built = buildIsStale() ? import('./build.mjs').then(({ buildService }) => buildService()) : Promise.resolve();
  built.then(() => import(pathToFileURL(ENTRY).href));
}

// On a Node too old for the service, the same start under the pinned Node, with the same flags.
if (supported()) start();
else runUnderPinnedNode(process.execArgv, [__filename, ...process.argv.slice(2)]);
