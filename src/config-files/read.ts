// Reads an import folder: every tenant folder, every file in it checked against its schema, with
// references to the environment and to other files resolved. Nothing is written here; every problem
// of every file is collected, each naming the file and the field.
import { createPrivateKey } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { z } from 'zod';
import { PrototypeMemberRefused, parseOutsideJson } from '../platform/json.js';
import { isVersion4 } from './convert-v4.js';
import type { ImportEnvironment } from './environment.js';
import { type ConfigFile, type Decoding, type FileKind, FOLDER_KINDS, KINDS, type KindKey, type TenantFolder } from './layout.js';

/** One thing wrong, as the operator reads it: `acme/clients/app.json: roles.0: Invalid option`. */
export type Problem = string;

/** A folder of configuration files that cannot be imported; the message lists every problem. */
export class ConfigImportError extends Error {
  constructor(readonly problems: Problem[]) {
    super(problems.join('; '));
    this.name = 'ConfigImportError';
  }
}

/** What the version-4 keys of a credential configuration are refused with (see credential-configs/schemas.ts). */
const V4_REFUSAL = 'removed in version 5';
const V4_HINT = 'a version-4 file: `npm run convert-v4 -- <folder>` rewrites it into the field model';

interface Reader {
  root: string;
  env: ImportEnvironment;
  problems: Problem[];
}

/** The tenant folder being read: a {"file"} reference may name only what lies inside it. */
interface TenantScope {
  reader: Reader;
  id: string;
  /** The folder's real path (links followed), which every referenced file's real path must be inside. */
  realDir: string;
}

/** Reads every tenant folder under `root`; throws a ConfigImportError naming every problem found. */
export function readImportFolder(root: string, env: ImportEnvironment): TenantFolder[] {
  const reader: Reader = { root: resolve(root), env, problems: [] };
  const tenants = visibleEntries(reader.root)
    .filter((name) => statSync(join(reader.root, name)).isDirectory())
    .map((name) => readTenant({ reader, id: name, realDir: realpathSync(join(reader.root, name)) }))
    .filter((tenant): tenant is TenantFolder => tenant !== undefined);
  if (reader.problems.length) throw new ConfigImportError(reader.problems);
  return tenants;
}

const visibleEntries = (dir: string) =>
  readdirSync(dir)
    .filter((name) => !name.startsWith('.'))
    .sort();

function readTenant(scope: TenantScope): TenantFolder | undefined {
  const { reader, id } = scope;
  const dir = join(reader.root, id);
  const known = new Set(Object.values(KINDS).map((kind) => kind.path));
  for (const name of visibleEntries(dir)) {
    const isFolder = statSync(join(dir, name)).isDirectory();
    if (!known.has(name) && (isFolder || name.endsWith('.json'))) {
      const expected = Object.values(KINDS)
        .map((kind) => (kind.folder ? `${kind.path}/` : kind.path))
        .join(', ');
      reader.problems.push(`${id}/${name}: not part of the layout (expected ${expected})`);
    }
  }
  if (!existsSync(join(dir, KINDS.tenant.path))) {
    reader.problems.push(missingTenantFile(reader, id));
    return undefined;
  }
  const tenant = readFile(scope, KINDS.tenant, join(dir, KINDS.tenant.path), { key: 'id', value: id });
  const issuerPath = join(dir, KINDS.issuer.path);
  const issuer = existsSync(issuerPath) ? readFile(scope, KINDS.issuer, issuerPath) : undefined;
  const trustPath = join(dir, KINDS.trust.path);
  const trust = existsSync(trustPath) ? readFile(scope, KINDS.trust, trustPath) : undefined;
  // The federation settings are one setting: issuer.json's federation is their alias, so one file says them.
  if (trust && issuer && (issuer as ConfigFile<'issuer'>).value.federation !== null)
    reader.problems.push(`${issuer.path}: federation: the trust settings are in ${KINDS.trust.path}: leave federation out here`);
  const folder = Object.fromEntries(FOLDER_KINDS.map((key) => [key, readFolder(scope, key, join(dir, KINDS[key].path))]));
  if (!tenant) return undefined;
  return { id, tenant, ...(issuer && { issuer }), ...(trust && { trust }), ...folder } as TenantFolder;
}

/**
 * A tenant folder without tenant.json is how version 4 laid them out: when its credential
 * configurations are version-4 files, the converter is what the operator needs to hear of, not the file.
 */
function missingTenantFile(reader: Reader, id: string): Problem {
  const configs = join(reader.root, id, KINDS.credentialConfigs.path);
  const legacy = existsSync(configs)
    ? visibleEntries(configs).filter((name) => name.endsWith('.json') && isVersion4(parsedOrUndefined(join(configs, name))))
    : [];
  if (!legacy.length) return `${id}/${KINDS.tenant.path}: missing; every tenant folder needs one`;
  const files = legacy.map((name) => `${KINDS.credentialConfigs.path}/${name}`).join(', ');
  return `${id}: a version-4 folder (no ${KINDS.tenant.path}; version-4 credential configurations: ${files}): \`npm run convert-v4 -- ${reader.root} --out <new folder>\` rewrites it into one this version imports, ${KINDS.tenant.path} included`;
}

function parsedOrUndefined(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined; // not JSON: not a version-4 file either
  }
}

function readFolder(scope: TenantScope, key: KindKey, dir: string): ConfigFile<KindKey>[] {
  if (!existsSync(dir)) return [];
  const kind: FileKind = KINDS[key];
  return visibleEntries(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => readFile(scope, kind, join(dir, name), { key: kind.idKey ?? 'id', value: name.slice(0, -'.json'.length) }))
    .filter((file): file is ConfigFile<KindKey> => file !== undefined);
}

/**
 * One file: parsed, its id taken from the file name when absent (and refused when it differs),
 * references resolved, then checked by the kind's schema.
 */
function readFile(scope: TenantScope, kind: FileKind, file: string, id?: { key: string; value: string }): ConfigFile<KindKey> | undefined {
  const { reader } = scope;
  const path = relative(reader.root, file);
  const fail = (problems: string[]) => {
    const v4 = problems.some((p) => p.includes(V4_REFUSAL));
    reader.problems.push(`${path}: ${[...problems, ...(v4 ? [V4_HINT] : [])].join('; ')}`);
    return undefined;
  };
  let content: unknown;
  try {
    content = parseOutsideJson(readFileSync(file, 'utf8'));
  } catch (err) {
    if (err instanceof PrototypeMemberRefused) return fail([err.message]);
    return fail([`not JSON: ${(err as Error).message}`]);
  }
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return fail(['must hold a JSON object']);
  // An editor's pointer to the JSON Schema is not part of the request.
  const { $schema: _schema, ...body } = content as Record<string, unknown>;
  if (id) {
    body[id.key] ??= id.value;
    if (body[id.key] !== id.value) return fail([`${id.key}: is ${JSON.stringify(body[id.key])}, but the file is named for '${id.value}'`]);
  }
  const problems: string[] = [];
  for (const [at, decoding] of Object.entries(kind.references)) {
    resolveReferences(scope, body, at.split('.'), [], decoding, dirname(file), problems);
  }
  if (problems.length) return fail(problems);
  const parsed = kind.schema.safeParse(body);
  if (!parsed.success) return fail(issuesOf(parsed.error));
  return { path, value: parsed.data as ConfigFile<KindKey>['value'] };
}

function issuesOf(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const field = issue.path.map(String).join('.');
    const keys = issue.code === 'unrecognized_keys' ? issue.keys : undefined;
    if (keys) return `${keys.map((k) => [field, k].filter(Boolean).join('.')).join(', ')}: unknown field(s)`;
    return field ? `${field}: ${issue.message}` : issue.message;
  });
}

const isReference = (value: unknown): value is { env: string } | { file: string } => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && (keys[0] === 'env' || keys[0] === 'file') && typeof Object.values(value)[0] === 'string';
};

/** An object or an array: what a path of a reference can go on into. */
const isContainer = (value: unknown): value is Record<string, unknown> | unknown[] => typeof value === 'object' && value !== null;

/** Replaces each {"env"} or {"file"} found along `rest` (under `at`) by the value it names. */
function resolveReferences(
  scope: TenantScope,
  holder: Record<string, unknown> | unknown[],
  rest: string[],
  at: string[],
  decoding: Decoding,
  dir: string,
  problems: string[],
) {
  const [segment, ...further] = rest;
  if (segment === undefined) return;
  const keys = segment === '*' ? (Array.isArray(holder) ? holder.map((_, i) => String(i)) : []) : [segment];
  for (const key of keys) {
    const container = holder as Record<string, unknown>;
    if (!Object.hasOwn(container, key)) continue;
    const value = container[key];
    const field = [...at, key];
    if (further.length) {
      if (isContainer(value)) resolveReferences(scope, value, further, field, decoding, dir, problems);
      continue;
    }
    if (!isReference(value)) continue;
    const text = referencedText(scope, value, dir);
    if (typeof text !== 'string') problems.push(`${field.join('.')}: ${text.problem}`);
    else {
      const decoded = decoding === 'jwk' ? decodePrivateKey(text) : text;
      if (typeof decoded === 'object' && decoded !== null && 'problem' in decoded) problems.push(`${field.join('.')}: ${decoded.problem}`);
      else container[key] = decoded;
    }
  }
}

function referencedText(scope: TenantScope, ref: { env: string } | { file: string }, dir: string): string | { problem: string } {
  if ('env' in ref) return scope.reader.env.read(ref.env);
  const real = realFileInside(scope, ref.file, resolve(dir, ref.file));
  if (typeof real !== 'string') return real;
  try {
    // Trailing line breaks are how editors end files, not part of a secret.
    return readFileSync(real, 'utf8').replace(/\s+$/, '');
  } catch (err) {
    return { problem: `cannot read file ${ref.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
}

/**
 * The real path of a referenced file, links followed, when it lies inside the referencing tenant's
 * own folder: a link (or ../) out of it would let one tenant's files read another tenant's secrets,
 * or anything the service may read. The real path is what is read, so a link changed after the check
 * is not followed again.
 */
function realFileInside(scope: TenantScope, named: string, target: string): string | { problem: string } {
  let real: string;
  try {
    real = realpathSync(target);
  } catch (err) {
    return { problem: `cannot read file ${named}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  const inside = relative(scope.realDir, real);
  if (!inside || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
    return {
      problem: `file ${named} is outside the folder of tenant '${scope.id}' (links followed): a file may name only files in its own tenant's folder`,
    };
  }
  if (!statSync(real).isFile()) return { problem: `file ${named} is not a regular file` };
  return real;
}

/** A private key given as a JWK (JSON) or as PEM (PKCS#8 or SEC 1), as the JWK the import request takes. */
function decodePrivateKey(text: string): Record<string, unknown> | { problem: string } {
  if (text.trimStart().startsWith('{')) {
    try {
      return parseOutsideJson(text) as Record<string, unknown>;
    } catch (err) {
      if (err instanceof PrototypeMemberRefused) return { problem: `is a JWK whose ${err.message}` };
      return { problem: 'is neither a JWK in JSON nor a PEM private key' };
    }
  }
  try {
    return createPrivateKey(text).export({ format: 'jwk' }) as Record<string, unknown>;
  } catch {
    return { problem: 'is neither a JWK in JSON nor a PEM private key' };
  }
}
