// The credential formats (src/formats/) stand below the credential configurations, issuance and
// verification: a format folder imports only shared ground (platform, key chains, trust, DIDs) and
// the formats' common files, never the features that dispatch to it; and every format folder is
// reachable through the registry, so adding one is its folder and the registry's line.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatOf } from '../../src/formats/index.js';
import type { CredentialFormat } from '../../src/formats/types.js';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
const formatsRoot = join(src, 'formats');
/** The folders of src/ a format may import from. */
const GROUND = ['formats', 'platform', 'key-chains', 'trust', 'dids'];

function sources(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The src/ folder each relative import of a file lands in (import and import()). */
function importedFolders(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from\s+|import\()\s*'(\.[^']+)'/g)].map((m) => m[1] as string);
  return specifiers.map((specifier) => relative(src, resolve(dirname(file), specifier)).split('/')[0] as string);
}

describe('src/formats', () => {
  it('imports nothing above it: not credential configurations, issuance, verification or any other feature', () => {
    const files = sources(formatsRoot);
    expect(files.length).toBeGreaterThan(5);
    const upward = files.flatMap((file) =>
      importedFolders(file)
        .filter((folder) => !GROUND.includes(folder))
        .map((folder) => `${relative(src, file)} -> src/${folder}`),
    );
    expect(upward).toEqual([]);
  });

  it('dispatches to every format folder through the registry, by the id the folder declares', async () => {
    const folders = readdirSync(formatsRoot, { withFileTypes: true }).filter((entry) => entry.isDirectory());
    expect(folders.length).toBeGreaterThanOrEqual(2);
    for (const folder of folders) {
      const exported = Object.values(await import(join(formatsRoot, folder.name, 'index.ts'))) as CredentialFormat[];
      expect(exported, `${folder.name} exports one CredentialFormat`).toHaveLength(1);
      const [format] = exported as [CredentialFormat];
      expect(formatOf(format.id), folder.name).toBe(format);
    }
    expect(formatOf('constructor')).toBeUndefined();
    expect(formatOf('no-such-format')).toBeUndefined();
  });
});
