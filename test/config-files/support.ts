// Folders of configuration files for the tests, written into temporary directories.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const made: string[] = [];

/** Writes `files` (path -> JSON value, or text as is) into a new temporary folder and returns it. */
export function writeFolder(files: Record<string, unknown>, into = mkdtempSync(join(tmpdir(), 'svc-config-'))): string {
  made.push(into);
  for (const [path, content] of Object.entries(files)) {
    const target = join(into, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`);
  }
  return into;
}

export function removeFolders() {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
