// What the docs site build (scripts/docs/build.ts) and the link test (test/system/docs.test.ts) both
// read from the markdown: which files are pages, the anchors of their headings (as GitHub names
// them, so that a link works the same on GitHub and in the built site) and their relative links.
import { readdirSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is scripts/docs/markdown.ts). */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The pages of the site, repository-relative: the README and every markdown file under docs/. */
export function pageFiles(): string[] {
  const found = ['README.md'];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(repoRoot, dir)).sort()) {
      if (name.startsWith('.')) continue;
      const path = posix.join(dir, name);
      if (statSync(join(repoRoot, path)).isDirectory()) walk(path);
      else if (name.endsWith('.md')) found.push(path);
    }
  };
  walk('docs');
  return found;
}

/** Where a page lands in the built site: docs/x.md is x.html, the README is readme.html. */
export function sitePathOf(page: string): string {
  if (page === 'README.md') return 'readme.html';
  return page.replace(/^docs\//, '').replace(/\.md$/, '.html');
}

/** GitHub's anchor of a heading's text: lower case, punctuation dropped, each space a hyphen. */
export function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Code fences and inline code hold no headings or links. */
function outsideCode(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/**
 * The anchor of a heading written as `text` (markdown), given the anchors seen before it on its page:
 * inline code keeps its text, a link its label, and a repeated anchor is numbered as GitHub does (`-1`).
 */
export function headingAnchor(text: string, seen: Map<string, number>): string {
  const plain = text.replace(/`([^`]*)`/g, '$1').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
  const base = slugOf(plain);
  const count = seen.get(base) ?? 0;
  seen.set(base, count + 1);
  return count === 0 ? base : `${base}-${count}`;
}

/** The anchors of a page's headings. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const withoutFences = markdown.replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...withoutFences.matchAll(/^#{1,6} (.+)$/gm)].map(([, text]) => headingAnchor(text as string, seen)));
}

/** A link that leaves the site's files: another scheme (https:, mailto:) or an absolute path. */
export function isExternal(href: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('/');
}

/** The targets of a page's markdown links, as written. */
export function linksOf(markdown: string): string[] {
  return [...outsideCode(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1] as string);
}
