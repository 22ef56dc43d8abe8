// Reads an import folder: every tenant folder, every file in it checked against its schema, with
// references to the environment and to other files resolved. Nothing is written here; every problem
// of every file is collected, each naming the file and the field.
import { createPrivateKey } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { z } from 'zod';
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
  env: Record<string, string | undefined>;
  problems: Problem[];
}

/** Reads every tenant folder under `root`; throws a ConfigImportError naming every problem found. */
export function readImportFolder(root: string, env: Record<string, string | undefined>): TenantFolder[] {
  const reader: Reader = { root: resolve(root), env, problems: [] };
  const tenants = visibleEntries(reader.root)
    .filter((name) => statSync(join(reader.root, name)).isDirectory())
    .map((name) => readTenant(reader, name))
    .filter((tenant): tenant is TenantFolder => tenant !== undefined);
  if (reader.problems.length) throw new ConfigImportError(reader.problems);
  return tenants;
}

const visibleEntries = (dir: string) =>
  readdirSync(dir)
    .filter((name) => !name.startsWith('.'))
    .sort();

function readTenant(reader: Reader, id: string): TenantFolder | undefined {
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
    reader.problems.push(`${id}/${KINDS.tenant.path}: missing; every tenant folder needs one`);
    return undefined;
  }
  const tenant = readFile(reader, KINDS.tenant, join(dir, KINDS.tenant.path), { key: 'id', value: id });
  const issuerPath = join(dir, KINDS.issuer.path);
  const issuer = existsSync(issuerPath) ? readFile(reader, KINDS.issuer, issuerPath) : undefined;
  const folder = Object.fromEntries(FOLDER_KINDS.map((key) => [key, readFolder(reader, key, join(dir, KINDS[key].path))]));
  if (!tenant) return undefined;
  return { id, tenant, ...(issuer && { issuer }), ...folder } as TenantFolder;
}

function readFolder(reader: Reader, key: KindKey, dir: string): ConfigFile<KindKey>[] {
  if (!existsSync(dir)) return [];
  const kind: FileKind = KINDS[key];
  return visibleEntries(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => readFile(reader, kind, join(dir, name), { key: kind.idKey ?? 'id', value: name.slice(0, -'.json'.length) }))
    .filter((file): file is ConfigFile<KindKey> => file !== undefined);
}

/**
 * One file: parsed, its id taken from the file name when absent (and refused when it differs),
 * references resolved, then checked by the kind's schema.
 */
function readFile(reader: Reader, kind: FileKind, file: string, id?: { key: string; value: string }): ConfigFile<KindKey> | undefined {
  const path = relative(reader.root, file);
  const fail = (problems: string[]) => {
    const v4 = problems.some((p) => p.includes(V4_REFUSAL));
    reader.problems.push(`${path}: ${[...problems, ...(v4 ? [V4_HINT] : [])].join('; ')}`);
    return undefined;
  };
  let content: unknown;
  try {
    content = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
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
    resolveReferences(reader, body, at.split('.'), [], decoding, dirname(file), problems);
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

/** Replaces each {"env"} or {"file"} found along `rest` (under `at`) by the value it names. */
function resolveReferences(
  reader: Reader,
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
      if (typeof value === 'object' && value !== null) resolveReferences(reader, value as never, further, field, decoding, dir, problems);
      continue;
    }
    if (!isReference(value)) continue;
    const text = referencedText(reader, value, dir);
    if (typeof text !== 'string') problems.push(`${field.join('.')}: ${text.problem}`);
    else {
      const decoded = decoding === 'jwk' ? decodePrivateKey(text) : text;
      if (typeof decoded === 'object' && decoded !== null && 'problem' in decoded) problems.push(`${field.join('.')}: ${decoded.problem}`);
      else container[key] = decoded;
    }
  }
}

function referencedText(reader: Reader, ref: { env: string } | { file: string }, dir: string): string | { problem: string } {
  if ('env' in ref) {
    const value = reader.env[ref.env];
    return value === undefined || value === '' ? { problem: `environment variable ${ref.env} is not set` } : value;
  }
  const target = resolve(dir, ref.file);
  const inside = relative(reader.root, target);
  if (inside.startsWith('..') || isAbsolute(inside)) return { problem: `file ${ref.file} is outside the import folder` };
  try {
    // Trailing line breaks are how editors end files, not part of a secret.
    return readFileSync(target, 'utf8').replace(/\s+$/, '');
  } catch (err) {
    return { problem: `cannot read file ${ref.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
}

/** A private key given as a JWK (JSON) or as PEM (PKCS#8 or SEC 1), as the JWK the import request takes. */
function decodePrivateKey(text: string): Record<string, unknown> | { problem: string } {
  if (text.trimStart().startsWith('{')) {
    try {
      return JSON.parse(text) as Record<string, unknown>;
    } catch {
      return { problem: 'is neither a JWK in JSON nor a PEM private key' };
    }
  }
  try {
    return createPrivateKey(text).export({ format: 'jwk' }) as Record<string, unknown>;
  } catch {
    return { problem: 'is neither a JWK in JSON nor a PEM private key' };
  }
}
