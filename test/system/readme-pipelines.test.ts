// The architecture page's section (docs/architecture.md) "The protocol pipelines" names, for each protocol endpoint, the method that
// lists its steps instead of restating them: each `Class.method` (or `.method` of the class before it)
// it names must be a method of that class in the file named beside it, so the pointers cannot drift.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const readme = readFileSync(new URL('docs/architecture.md', root), 'utf8');
const section = readme.slice(
  readme.indexOf('### The protocol pipelines'),
  readme.indexOf('\n## ', readme.indexOf('### The protocol pipelines')),
);
const list = section.slice(section.indexOf('Every protocol endpoint reads as its steps'));

/**
 * The pointers of one list item: `Class.method` names (`.method` continuing the last class), then the
 * file in parentheses; a bare `function` name is one of the file named just before it.
 */
function pointers(item: string): { file: string; owner: string; member: string }[] {
  const found: { file: string; owner: string; member: string }[] = [];
  const pending: { owner: string; member: string }[] = [];
  let owner = '';
  let folder = 'src/issuance/';
  let lastFile = '';
  for (const [, code] of item.matchAll(/`([^`]+)`/g)) {
    const name = code as string;
    if (name.endsWith('.ts')) {
      if (name.startsWith('src/')) folder = `${name.split('/').slice(0, 2).join('/')}/`;
      const file = name.startsWith('src/') ? name : `${folder}${name}`;
      lastFile = file;
      for (const p of pending.splice(0)) found.push({ file, ...p });
      continue;
    }
    const method = /^(\w*)\.(\w+)$/.exec(name);
    if (method) {
      owner = method[1] || owner;
      pending.push({ owner, member: method[2] as string });
    } else if (/^\w+$/.test(name)) found.push({ file: lastFile, owner: '', member: name });
  }
  return found;
}

describe('docs/architecture.md: the protocol pipelines', () => {
  const items = list.split('\n- ').slice(1);

  it('lists the pipelines', () => {
    expect(items.length).toBeGreaterThanOrEqual(7);
  });

  it('names only methods and functions that the files it names define', () => {
    const named = items.flatMap(pointers);
    expect(named.length).toBeGreaterThanOrEqual(15);
    for (const { file, owner, member } of named) {
      const source = readFileSync(new URL(file, root), 'utf8');
      if (owner) {
        expect(source, `${file} defines class ${owner}`).toMatch(new RegExp(`export class ${owner}\\b`));
        expect(source, `${owner}.${member} in ${file}`).toMatch(new RegExp(`\\n  (async )?${member}\\(`));
      } else {
        expect(source, `${member} in ${file}`).toMatch(new RegExp(`export (async )?function ${member}\\b`));
      }
    }
  });
});
