// The registry these machines use lacks some platform-specific optional packages (other systems'
// biome binaries, cbor-extract prebuilds), so `npm install` leaves them out of package-lock.json and
// `npm ci` then refuses the lock file as out of sync. This adds the entries npm would have written:
// optional, with the os/cpu/libc taken from the package name, so each platform skips the others'.
// Run after every `npm install`: npm run lockfile
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const OS = ['android', 'darwin', 'linux', 'win32', 'freebsd'];
const CPU = ['x64', 'arm64', 'arm', 'ia32'];
let added = 0;
for (const meta of Object.values(lock.packages)) {
  for (const [name, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (lock.packages[key]) continue;
    const parts = name.split('/').pop().split('-');
    const entry = { version, optional: true, ...(meta.dev && { dev: true }) };
    const os = parts.find((p) => OS.includes(p));
    const cpu = parts.find((p) => CPU.includes(p));
    if (os) entry.os = [os];
    if (cpu) entry.cpu = [cpu];
    if (parts.includes('musl')) entry.libc = ['musl'];
    lock.packages[key] = entry;
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: ${added} optional platform entr${added === 1 ? 'y' : 'ies'} added`);
