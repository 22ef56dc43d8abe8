'use strict';
// `npm start`: runs the compiled service in this very process (so a signal sent to npm reaches the
// server), rebuilding it first only when a source changed since the last build. CommonJS, as dist/
// is: an ES module entry would cost Node another 20-30 ms of loader set-up at every start.
const { readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const ENTRY = join(root, 'dist', 'main.js');

/**
 * True when dist/main.js is missing or older than a source file or folder (service, console, client:
 * a folder's time changes when a file in it is deleted), the lock file or the build scripts.
 */
function buildIsStale() {
  const built = mtime(ENTRY);
  if (built === undefined) return true;
  const inputs = ['package-lock.json', 'scripts/build.mjs', 'scripts/dist-main.cjs'].map((file) => mtime(join(root, file)) ?? 0);
  const sources = ['src', 'console', 'clients/typescript'].map((dir) => newest(join(root, dir)));
  return Math.max(...inputs, ...sources) > built;
}

/** The latest modification time in a folder's tree (readdir's own recursion is three times slower). */
function newest(dir) {
  let latest = mtime(dir) ?? 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : (mtime(path) ?? 0));
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

if (buildIsStale()) {
  import('./build.mjs').then(({ buildService }) => buildService()).then(() => require(ENTRY));
} else {
  require(ENTRY);
}
