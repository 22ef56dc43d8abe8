// A small Kustomize renderer for the manifests of deploy/kubernetes, so that the suite checks them on
// a machine without kubectl (CI). It follows exactly the features those files use - resources (files
// and directories), components, JSON 6902 patches with a kind/name target, and images - and refuses
// any other field of a kustomization, so that a feature added to the manifests cannot be skipped here
// silently. Where kubectl with Kustomize v5 is installed, the test compares its output with this one.
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** One rendered Kubernetes object: JSON as the API takes it. */
export type Resource = { apiVersion: string; kind: string; metadata: { name: string; [key: string]: unknown }; [key: string]: unknown };

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
interface PatchOperation {
  op: string;
  path: string;
  value?: Json;
}
interface PatchEntry {
  path: string;
  target: { kind: string; name: string };
}
interface ImageEntry {
  name: string;
  newName?: string;
  newTag?: string;
}
interface KustomizationFile {
  apiVersion?: string;
  kind?: string;
  resources?: string[];
  components?: string[];
  patches?: PatchEntry[];
  images?: ImageEntry[];
}

const KNOWN_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'components', 'patches', 'images']);

/** Every document of a YAML file, as plain JSON (comments dropped). */
export function readYamlDocuments(file: string): unknown[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((doc) => {
    const [error] = doc.errors;
    if (error) throw new Error(`${file}: ${error.message}`);
    return doc.toJS();
  });
}

/** The resources the kustomization in `dir` produces, in the order they were accumulated. */
export function render(dir: string): Resource[] {
  const kustomization = readKustomization(dir, 'Kustomization');
  const resources = (kustomization.resources ?? []).flatMap((entry) => resourcesOf(join(dir, entry)));
  for (const component of kustomization.components ?? []) applyComponent(join(dir, component), resources);
  applyPatches(dir, kustomization.patches ?? [], resources);
  for (const image of kustomization.images ?? []) setImage(resources, image);
  return resources;
}

function readKustomization(dir: string, kind: 'Kustomization' | 'Component'): KustomizationFile {
  const file = firstDocument(join(dir, 'kustomization.yaml')) as KustomizationFile;
  const unknown = Object.keys(file).filter((key) => !KNOWN_FIELDS.has(key));
  if (unknown.length) throw new Error(`${dir}: the test renderer does not handle ${unknown.join(', ')}`);
  if ((file.kind ?? 'Kustomization') !== kind) throw new Error(`${dir}: a ${file.kind} where a ${kind} was expected`);
  return file;
}

/** The one document of a file that must hold one. */
export function firstDocument(file: string): unknown {
  const [document, ...more] = readYamlDocuments(file);
  if (document === undefined || document === null || more.length) throw new Error(`${file}: expected one YAML document`);
  return document;
}

function resourcesOf(path: string): Resource[] {
  if (statSync(path).isDirectory()) return render(path);
  return readYamlDocuments(path).filter((doc) => doc !== null) as Resource[];
}

/** A component adds its resources to the ones accumulated so far, then patches them all. */
function applyComponent(dir: string, resources: Resource[]) {
  const component = readKustomization(dir, 'Component');
  if (component.images) throw new Error(`${dir}: images in a component are not handled by the test renderer`);
  resources.push(...(component.resources ?? []).flatMap((entry) => resourcesOf(join(dir, entry))));
  applyPatches(dir, component.patches ?? [], resources);
}

function applyPatches(dir: string, patches: PatchEntry[], resources: Resource[]) {
  for (const patch of patches) {
    const targets = resources.filter((r) => r.kind === patch.target.kind && r.metadata.name === patch.target.name);
    // Kustomize would pass over a target that matches nothing; a patch that does nothing is a mistake here.
    if (targets.length === 0) throw new Error(`${dir}/${patch.path}: no ${patch.target.kind} ${patch.target.name} to patch`);
    const operations = firstDocument(join(dir, patch.path)) as PatchOperation[];
    for (const target of targets) for (const operation of operations) applyOperation(target as unknown as Json, operation);
  }
}

/** One JSON Patch (RFC 6902) operation: add, replace or remove, the ones the manifests use. */
function applyOperation(document: Json, operation: PatchOperation) {
  const segments = operation.path
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  const last = segments.pop();
  if (last === undefined) throw new Error(`patch path ${operation.path}: the whole document cannot be patched`);
  let parent: Json = document;
  for (const segment of segments) parent = child(parent, segment, operation.path);
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length) throw new Error(`patch path ${operation.path}: no index ${last}`);
    if (operation.op === 'add') parent.splice(index, 0, operation.value ?? null);
    else if (operation.op === 'replace' && index < parent.length) parent[index] = operation.value ?? null;
    else if (operation.op === 'remove' && index < parent.length) parent.splice(index, 1);
    else throw new Error(`patch ${operation.op} ${operation.path}: not handled`);
    return;
  }
  if (parent === null || typeof parent !== 'object') throw new Error(`patch path ${operation.path}: not an object`);
  const present = Object.hasOwn(parent, last);
  if (operation.op === 'add' || (operation.op === 'replace' && present)) parent[last] = operation.value ?? null;
  else if (operation.op === 'remove' && present) delete parent[last];
  else throw new Error(`patch ${operation.op} ${operation.path}: not handled`);
}

function child(node: Json, segment: string, path: string): Json {
  if (Array.isArray(node)) {
    const index = Number(segment);
    const element = Number.isInteger(index) ? node[index] : undefined;
    if (element !== undefined) return element;
  } else if (node !== null && typeof node === 'object' && Object.hasOwn(node, segment)) {
    const value = node[segment];
    if (value !== undefined) return value;
  }
  throw new Error(`patch path ${path}: ${segment} does not exist`);
}

/** kustomize's `images:`: a container whose image is `name` (with or without a tag) gets the new name and tag. */
function setImage(resources: Resource[], image: ImageEntry) {
  for (const container of containersOf(resources)) {
    if (container.image.includes('@')) throw new Error(`image ${container.image}: digests are not handled by the test renderer`);
    const [, name, tag] = /^(.*?)(?::([^:/]+))?$/.exec(container.image) ?? [];
    if (name !== image.name) continue;
    const newTag = image.newTag ?? tag;
    container.image = `${image.newName ?? name}${newTag ? `:${newTag}` : ''}`;
  }
}

/** The containers of every workload that has a pod template (the manifests hold Deployments only). */
export function containersOf(resources: Resource[]): { name: string; image: string }[] {
  return resources.flatMap((r) => {
    const spec = (r.spec as { template?: { spec?: { containers?: { name: string; image: string }[] } } } | undefined)?.template?.spec;
    return spec?.containers ?? [];
  });
}

/**
 * Why `kubectl kustomize` cannot be compared here, if it cannot: no kubectl, or one whose Kustomize is
 * older than v5 (Debian's kubernetes-client is 1.20, with Kustomize v2).
 */
export function kubectlUnavailable(): string | undefined {
  let output: string;
  try {
    output = execFileSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return 'kubectl is not installed';
  }
  const { kustomizeVersion } = JSON.parse(output) as { kustomizeVersion?: string };
  const major = /^v(\d+)\./.exec(kustomizeVersion ?? '')?.[1];
  if (major === undefined) return 'kubectl names no Kustomize version';
  return Number(major) < 5 ? `kubectl's Kustomize is ${kustomizeVersion}, older than v5` : undefined;
}

/** `kubectl kustomize <dir>`'s resources (kubectlUnavailable() says whether it can run). */
export function kubectlKustomize(dir: string): Resource[] {
  const output = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
  return parseAllDocuments(output).map((doc) => doc.toJS() as Resource);
}
