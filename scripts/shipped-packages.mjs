// What the compiled service ships of other people's code, and what it declares: the packages whose
// code esbuild put into the bundle (read from its metafile), the packages it loads from node_modules
// at run time (and what those need in turn, from package-lock.json), package.json's `dependencies`
// checked against both, and a CycloneDX SBOM of the two, dist/sbom.cdx.json; and the copy of the
// run-time packages alone that the image keeps of node_modules (scripts/image-modules.mjs).
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const readJson = (path) => JSON.parse(readFileSync(join(ROOT, path), 'utf8'));

/**
 * The packages esbuild took code from (the service's bundle and the console's), keyed by their folder (a package installed twice, at two
 * versions, is two entries): the innermost `node_modules/<name>` or `node_modules/@scope/<name>` of
 * each input file.
 */
export function bundledPackages(...metafiles) {
  const folders = new Set();
  for (const input of metafiles.flatMap((metafile) => Object.keys(metafile.inputs))) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match) folders.add(match[1]);
  }
  return [...folders].sort().map(packageAt);
}

/**
 * The packages the service loads from node_modules at run time (`roots`, package.json names) with
 * everything they require in turn, resolved as Node does (the nearest node_modules folder up from the
 * requiring package), from package-lock.json. Optional dependencies npm did not install (another
 * platform's binaries) are skipped.
 */
export function runTimePackages(roots) {
  const lock = readJson('package-lock.json').packages;
  const found = new Set();
  const visit = (folder) => {
    if (found.has(folder)) return;
    found.add(folder);
    const meta = lock[folder];
    const names = Object.keys({ ...meta.dependencies, ...meta.optionalDependencies, ...meta.peerDependencies });
    for (const name of names) {
      const resolved = resolveFrom(lock, folder, name);
      if (resolved) visit(resolved);
    }
  };
  for (const name of roots) {
    const folder = resolveFrom(lock, '', name);
    if (!folder) throw new Error(`package-lock.json: ${name} is loaded at run time but not installed`);
    visit(folder);
  }
  return [...found].sort().map(packageAt);
}

/** Node's lookup: <folder>/node_modules/<name>, then each enclosing package's, then the root's. */
function resolveFrom(lock, folder, name) {
  let from = folder;
  for (;;) {
    const candidate = `${from ? `${from}/` : ''}node_modules/${name}`;
    if (lock[candidate]) return existsSync(join(ROOT, candidate)) ? candidate : undefined;
    if (!from) return undefined;
    const cut = from.lastIndexOf('/node_modules/');
    from = cut === -1 ? '' : from.slice(0, cut);
  }
}

function packageAt(folder) {
  const { name, version, license } = readJson(join(folder, 'package.json'));
  return { folder, name, version, license };
}

/**
 * package.json's `dependencies` are exactly the packages of its own lists whose code ships: bundled
 * or loaded at run time. So `npm audit --omit=dev` and SBOM tools see what runs; devDependencies are
 * the tools and the tests' libraries. A mismatch fails the build, naming the package.
 */
export function checkDeclared(shipped) {
  const pkg = readJson('package.json');
  const shippedNames = new Set(shipped.map((p) => p.name));
  const problems = [
    ...Object.keys(pkg.devDependencies ?? {})
      .filter((name) => shippedNames.has(name))
      .map((name) => `${name}: its code ships (bundled or loaded at run time), so a dependency, not a devDependency`),
    ...Object.keys(pkg.dependencies ?? {})
      .filter((name) => !shippedNames.has(name))
      .map((name) => `${name}: nothing of it ships, so a devDependency`),
  ];
  if (problems.length > 0) throw new Error(`package.json:\n${problems.join('\n')}`);
}

/** One CycloneDX 1.6 component per package and version, named by its package URL. */
function component({ name, version, license }) {
  const [group, bare] = name.startsWith('@') ? name.split('/') : [undefined, name];
  const purl = `pkg:npm/${group ? `${encodeURIComponent(group)}/` : ''}${bare}@${version}`;
  return {
    type: 'library',
    'bom-ref': purl,
    ...(group && { group }),
    name: bare,
    version,
    purl,
    ...(typeof license === 'string' && { licenses: [{ expression: license }] }),
  };
}

/**
 * dist/sbom.cdx.json: the service (with the SHA-256 of the bundle's entry files) and every package
 * that ships with it. No timestamp or serial number, so that the same build writes the same file.
 */
export function writeSbom(dist, shipped, bundleFiles) {
  const pkg = readJson('package.json');
  const components = new Map(shipped.map((p) => [`${p.name}@${p.version}`, component(p)]));
  const sha256 = (file) =>
    createHash('sha256')
      .update(readFileSync(join(dist, file)))
      .digest('hex');
  const bom = {
    bomFormat: 'CycloneDX',
    specVersion: '1.6',
    version: 1,
    metadata: {
      tools: { components: [{ type: 'application', name: 'esbuild', version: readJson('node_modules/esbuild/package.json').version }] },
      component: {
        type: 'application',
        'bom-ref': `pkg:npm/${pkg.name}@${pkg.version}`,
        name: pkg.name,
        version: pkg.version,
        licenses: [{ expression: pkg.license }],
        hashes: bundleFiles.map((file) => ({ alg: 'SHA-256', content: sha256(file) })),
      },
    },
    components: [...components.values()].sort((a, b) => a['bom-ref'].localeCompare(b['bom-ref'])),
  };
  writeFileSync(join(dist, 'sbom.cdx.json'), `${JSON.stringify(bom, null, 2)}\n`);
}

/** Copies the run-time packages (runTimePackages) into <target>/node_modules, each at its folder. */
export function copyRunTimePackages(roots, target) {
  for (const { folder } of runTimePackages(roots)) {
    mkdirSync(join(target, folder), { recursive: true });
    cpSync(join(ROOT, folder), join(target, folder), { recursive: true, dereference: true });
  }
}
