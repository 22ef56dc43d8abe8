// `npm run docs`: builds the documentation (README.md and docs/**/*.md) into static HTML in dist/docs/,
// which the service serves at /docs (src/docs/routes.ts). docs/index.md is the home page. Links
// between pages become links between the built pages; links to other files under docs/ (the JSON
// Schemas, the example pages) reach copies of them; links to the rest of the repository reach it
// from dist/docs/, so they work when the folder is opened from a checkout.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Marked, type Tokens } from 'marked';
import { headingAnchor, isExternal, pageFiles, repoRoot, sitePathOf } from './markdown.js';

/** The site's folder, repository-relative. */
export const SITE = 'dist/docs';

/** Folders under docs/ that are copied as they are (the pages link to their files). */
const ASSET_FOLDERS = ['config-files', 'examples'];

const STYLE = `body{margin:0;font:16px/1.55 system-ui,sans-serif;color:#1b1f24;background:#fff}
header{background:#1b1f24;padding:.6rem 1.5rem}header a{color:#fff;margin-right:1.2rem;text-decoration:none}
main{max-width:60rem;margin:0 auto;padding:1rem 1.5rem 4rem}a{color:#0b5cad}
pre{background:#f4f5f7;padding:.8rem;overflow-x:auto;border-radius:4px}code{font:14px/1.45 ui-monospace,monospace}
table{border-collapse:collapse;display:block;overflow-x:auto}th,td{border:1px solid #d0d7de;padding:.3rem .6rem;vertical-align:top}
h1,h2,h3{line-height:1.25}h2{border-bottom:1px solid #d0d7de;padding-bottom:.3rem;margin-top:2rem}
`;

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

/**
 * A link of `page` (repository-relative) as it must read in the built page: to the built page or the
 * copied file when it points into the site, else to the repository file seen from dist/docs/.
 */
export function siteHref(page: string, href: string): string {
  if (isExternal(href) || href.startsWith('#')) return href;
  const [path = '', anchor] = href.split('#', 2) as [string, string | undefined];
  const target = posix.normalize(posix.join(posix.dirname(page), path));
  const from = posix.dirname(sitePathOf(page));
  const suffix = anchor === undefined ? '' : `#${anchor}`;
  if (target.endsWith('.md') && (target === 'README.md' || target.startsWith('docs/'))) {
    return posix.relative(from, sitePathOf(target)) + suffix;
  }
  if (target.startsWith('docs/')) {
    const inSite = target.slice('docs/'.length);
    const folder = statSync(join(repoRoot, target), { throwIfNoEntry: false })?.isDirectory();
    return `${posix.relative(from, inSite) || '.'}${folder ? '/index.html' : ''}${suffix}`;
  }
  // Outside docs/: the repository file, from the page's folder inside dist/docs/.
  return posix.relative(posix.join(SITE, from), target) + suffix;
}

function render(page: string, markdown: string): { title: string; html: string } {
  const seen = new Map<string, number>();
  let title = page;
  const marked = new Marked({
    gfm: true,
    walkTokens(token) {
      if (token.type === 'link') (token as Tokens.Link).href = siteHref(page, (token as Tokens.Link).href);
    },
    renderer: {
      heading({ tokens, depth, text }) {
        if (depth === 1 && title === page) title = text.replace(/`/g, '');
        const id = headingAnchor(text, seen);
        return `<h${depth} id="${id}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
      },
    },
  });
  // Parsed first: the renderer finds the title on its way.
  const html = marked.parse(markdown, { async: false });
  return { title, html };
}

function layout(page: string, title: string, body: string): string {
  const up = posix.relative(posix.dirname(sitePathOf(page)), '.') || '.';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · svc</title>
<link rel="stylesheet" href="${up}/style.css">
</head>
<body>
<header><a href="${up}/index.html">svc documentation</a><a href="${up}/readme.html">README and walkthrough</a></header>
<main>
${body}</main>
</body>
</html>
`;
}

/** A folder's listing, so that a link to the folder (docs/config-files/) has a page to reach. */
function listing(folder: string, files: string[]): string {
  const items = files.map((name) => `<li><a href="${encodeURIComponent(name)}">${escapeHtml(name)}</a></li>`).join('\n');
  return layout(`docs/${folder}/index.md`, folder, `<h1>${escapeHtml(folder)}</h1>\n<ul>\n${items}\n</ul>\n`);
}

/** Builds the site into `out` (absolute) and returns the built pages, site-relative. */
export function buildSite(out = join(repoRoot, SITE)): string[] {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const built: string[] = [];
  for (const page of pageFiles()) {
    const { title, html } = render(page, readFileSync(join(repoRoot, page), 'utf8'));
    const target = join(out, sitePathOf(page));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, layout(page, title, html));
    built.push(sitePathOf(page));
  }
  for (const folder of ASSET_FOLDERS) {
    const source = join(repoRoot, 'docs', folder);
    if (!existsSync(source)) continue;
    cpSync(source, join(out, folder), { recursive: true });
    writeFileSync(join(out, folder, 'index.html'), listing(folder, readdirSync(source).sort()));
  }
  writeFileSync(join(out, 'style.css'), STYLE);
  return built;
}

// Run as a script (npm run docs), not imported by the test.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = performance.now();
  const pages = buildSite();
  process.stdout.write(`docs: ${pages.length} pages in ${SITE}/ (${Math.round(performance.now() - started)} ms)\n`);
}
