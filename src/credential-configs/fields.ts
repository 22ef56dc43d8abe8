// The field model: every field names one claim by its path. From the fields of a configuration the
// service derives the JSON Schema (draft 2020-12) of the credential's claims, checks claims against
// it when an offer is made, and builds the default claims. The derived schemas use a small subset of
// JSON Schema and the validator below checks exactly that subset, so no schema library is needed.
//
// The claims object of a configuration holds the claims themselves, unless its format keys them by
// namespace first (claimsLayout.namespaced): { "org.iso.18013.5.1": { "given_name": "Erika" } }.
// Which names a format keeps for itself is the format's too (src/formats/).
import { formatIdsWith, knownFormat } from '../formats/index.js';
import type { FieldError } from '../platform/http/problem.js';
import { isJsonObject } from '../platform/json.js';
import { matchesPattern, patternProblem } from './patterns.js';
import type { CredentialFormat, FieldDefinition, FieldType } from './schemas.js';

export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

type Segment = string | number | null;
type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array';

/** A node of a derived schema: only the JSON Schema keywords the derivation produces. */
export interface SchemaNode {
  type?: JsonType;
  format?: 'date' | 'date-time';
  title?: string;
  description?: string;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  additionalProperties?: false;
  items?: SchemaNode;
  prefixItems?: SchemaNode[];
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  enum?: unknown[];
}
export type ClaimsSchema = SchemaNode & { $schema: string };

export interface ClaimProblem {
  /** Where in the claims object: object keys and array indexes (a namespaced format's namespace first). */
  path: (string | number)[];
  message: string;
}

/** What the derivation needs of a configuration. */
export interface FieldModel {
  config: { format: CredentialFormat };
  fields: FieldDefinition[];
}

const JSON_TYPE: Record<FieldType, JsonType> = {
  string: 'string',
  number: 'number',
  integer: 'integer',
  boolean: 'boolean',
  date: 'string',
  datetime: 'string',
  image: 'string',
  object: 'object',
  array: 'array',
};

type ConstraintName = keyof NonNullable<FieldDefinition['constraints']>;
const NUMERIC: ConstraintName[] = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'enum'];
const CONSTRAINTS_OF: Record<FieldType, ConstraintName[]> = {
  string: ['minLength', 'maxLength', 'pattern', 'enum'],
  date: ['pattern', 'enum'],
  datetime: ['pattern', 'enum'],
  image: ['minLength', 'maxLength'],
  number: NUMERIC,
  integer: NUMERIC,
  boolean: ['enum'],
  object: [],
  array: ['minItems', 'maxItems'],
};

/** An image claim is a data: URL with base64 content, the form SD-JWT VC uses for pictures. */
export const IMAGE_PATTERN = '^data:image/[A-Za-z0-9.+-]+;base64,[A-Za-z0-9+/]+={0,2}$';

interface FlatField {
  field: FieldDefinition;
  /** From the root of the claims object: for a namespaced format the namespace comes first. */
  path: Segment[];
  /** Where the field is in the configuration, as errors name it: fields.0.children.1 */
  where: string;
  /** Length of the parent field's path: mandatory makes required only what the field's own path adds. */
  parentDepth: number;
  node?: SchemaNode;
}

interface Derived {
  root: SchemaNode;
  flat: FlatField[];
  errors: FieldError[];
}

const TYPE_NAME: Record<JsonType, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
};

const describePath = (path: Segment[]) => (path.length ? path.map((s) => (s === null ? '[*]' : String(s))).join('.') : 'the claims');

/** The formats whose claims are keyed by namespace, for messages. */
const namespacedFormats = () => formatIdsWith((format) => format.claimsLayout?.namespaced).join(' or ');

/** Fields with absolute paths, parents before their children; structural mistakes go to `errors`. */
function flatten(model: FieldModel, errors: FieldError[]): FlatField[] {
  const format = knownFormat(model.config.format);
  const layout = format.claimsLayout ?? {};
  const flat: FlatField[] = [];
  const visit = (field: FieldDefinition, where: string, path: Segment[], parentDepth: number, namespace: string | undefined) => {
    flat.push({ field, path, where, parentDepth });
    for (const segment of field.path) {
      const reserved = typeof segment === 'string' ? layout.reservedAnywhere?.(segment) : undefined;
      if (reserved !== undefined) {
        errors.push({ field: `${where}.path`, message: reserved });
        break;
      }
    }
    if (!field.children?.length) return;
    if (field.type !== 'object' && field.type !== 'array') {
      errors.push({ field: `${where}.children`, message: `only object and array fields have children; this field is ${field.type}` });
      return;
    }
    field.children.forEach((child, j) => {
      const childWhere = `${where}.children.${j}`;
      if (child.namespace !== undefined && child.namespace !== namespace) {
        const message = layout.namespaced
          ? `must be absent or the parent's namespace '${namespace}'`
          : `is for ${namespacedFormats()} only`;
        errors.push({ field: `${childWhere}.namespace`, message });
      }
      visit(child, childWhere, [...path, ...child.path], path.length, namespace);
    });
  };
  model.fields.forEach((field, i) => {
    const where = `fields.${i}`;
    const [first] = field.path;
    if (typeof first !== 'string') {
      errors.push({ field: `${where}.path`, message: 'must start with a claim name (a string): the claims are an object' });
      return;
    }
    if (layout.namespaced) {
      if (!field.namespace) {
        errors.push({ field: `${where}.namespace`, message: `is required on every field when config.format is ${format.id}` });
        return;
      }
    } else if (field.namespace !== undefined) {
      errors.push({ field: `${where}.namespace`, message: `is for ${namespacedFormats()} only; ${format.id} claims have no namespaces` });
    }
    const reserved = layout.reservedTopLevel?.(first);
    if (reserved !== undefined) errors.push({ field: `${where}.path`, message: reserved });
    const namespace = layout.namespaced ? field.namespace : undefined;
    visit(field, where, namespace ? [namespace, ...field.path] : [...field.path], 0, namespace);
  });
  return flat;
}

/** Builds the schema tree from the flattened fields, reporting paths that contradict each other. */
class TreeBuilder {
  readonly root: SchemaNode = { type: 'object', properties: {} };
  private readonly declaredBy = new Map<SchemaNode, { where: string; type: FieldType }>();
  /** Who first nested something below a node, making it a container. */
  private readonly nestedBy = new Map<SchemaNode, string>();

  constructor(private readonly errors: FieldError[]) {}

  add(flat: FlatField) {
    const { field, path, where, parentDepth } = flat;
    let node = this.root;
    for (let i = 0; i < path.length; i++) {
      const segment = path[i] as Segment;
      const child = this.child(node, segment, where, path.slice(0, i));
      if (!child) return;
      if (field.mandatory && i >= parentDepth) markPresent(node, segment);
      node = child;
    }
    if (this.declare(node, flat)) flat.node = node;
  }

  private child(node: SchemaNode, segment: Segment, where: string, at: Segment[]): SchemaNode | undefined {
    const kind: JsonType = typeof segment === 'string' ? 'object' : 'array';
    if (node.type === undefined) node.type = kind;
    if (node.type !== kind) {
      const declared = this.declaredBy.get(node);
      const what = declared ? `is ${declared.type} (${declared.where})` : `holds ${kind === 'object' ? 'array elements' : 'named claims'}`;
      const below = segment === null ? 'every element' : typeof segment === 'number' ? `index ${segment}` : `'${segment}'`;
      this.errors.push({ field: `${where}.path`, message: `${describePath(at)} ${what}, so it cannot contain ${below}` });
      return undefined;
    }
    if (!this.nestedBy.has(node)) this.nestedBy.set(node, where);
    if (typeof segment === 'string') {
      node.properties ??= {};
      if (!Object.hasOwn(node.properties, segment)) node.properties[segment] = {};
      return node.properties[segment];
    }
    if (segment === null ? node.prefixItems : node.items) {
      this.errors.push({
        field: `${where}.path`,
        message: `${describePath(at)} is addressed both by index and by every element (null); use one of them`,
      });
      return undefined;
    }
    if (segment === null) {
      node.items ??= {};
      return node.items;
    }
    node.prefixItems ??= [];
    while (node.prefixItems.length <= segment) node.prefixItems.push({});
    return node.prefixItems[segment];
  }

  private declare(node: SchemaNode, flat: FlatField): boolean {
    const { field, where } = flat;
    const prior = this.declaredBy.get(node);
    if (prior) {
      this.errors.push({ field: `${where}.path`, message: `declares the same claim as ${prior.where}` });
      return false;
    }
    const type = JSON_TYPE[field.type];
    if (node.type !== undefined && node.type !== type) {
      this.errors.push({
        field: `${where}.type`,
        message: `is ${field.type}, but ${this.nestedBy.get(node)} nests claims below ${describePath(flat.path)}`,
      });
      return false;
    }
    node.type = type;
    if (field.type === 'date') node.format = 'date';
    if (field.type === 'datetime') node.format = 'date-time';
    if (field.type === 'image') node.pattern = IMAGE_PATTERN;
    const [display] = field.display ?? [];
    if (display) {
      node.title = display.name;
      if (display.description) node.description = display.description;
    }
    this.constrain(node, field, where);
    this.declaredBy.set(node, { where, type: field.type });
    return true;
  }

  private constrain(node: SchemaNode, field: FieldDefinition, where: string) {
    const constraints = field.constraints ?? {};
    const allowed = CONSTRAINTS_OF[field.type];
    for (const [name, value] of Object.entries(constraints) as [ConstraintName, unknown][]) {
      if (value === undefined) continue;
      const at = `${where}.constraints.${name}`;
      if (!allowed.includes(name)) {
        this.errors.push({ field: at, message: `does not apply to ${field.type} fields` });
        continue;
      }
      // A refused pattern stays on the node: a configuration stored before it was refused then
      // refuses claims rather than issuing them unchecked.
      const unusable = name === 'pattern' ? patternProblem(value as string) : undefined;
      if (unusable) this.errors.push({ field: at, message: unusable });
      if (name === 'enum') {
        const probe: SchemaNode = { type: node.type, ...(node.format && { format: node.format }) };
        const wrong = (value as unknown[]).filter((v) => check(probe, v, [], false).length > 0);
        if (wrong.length) {
          this.errors.push({ field: at, message: `every value must be ${describeType(field.type)}; not ${wrong.map(show).join(', ')}` });
          continue;
        }
      }
      if (name === 'minItems') node.minItems = Math.max(node.minItems ?? 0, value as number);
      else (node as Record<string, unknown>)[name] = value;
    }
    for (const [low, high] of [
      ['minLength', 'maxLength'],
      ['minimum', 'maximum'],
      ['minItems', 'maxItems'],
    ] as const) {
      const min = node[low];
      const max = node[high];
      if (min !== undefined && max !== undefined && min > max) {
        this.errors.push({ field: `${where}.constraints.${high}`, message: `must not be below ${low} (${min})` });
      }
    }
  }
}

/** The claim is always present: so it is required in its object, or its array has at least this many elements. */
function markPresent(node: SchemaNode, segment: Segment) {
  if (typeof segment === 'string') {
    node.required ??= [];
    if (!node.required.includes(segment)) node.required.push(segment);
  } else {
    node.minItems = Math.max(node.minItems ?? 0, (segment ?? 0) + 1);
  }
}

/** Objects whose claims the fields name take no others. */
function closeObjects(node: SchemaNode) {
  if (node.properties) {
    node.additionalProperties = false;
    for (const child of Object.values(node.properties)) closeObjects(child);
  }
  if (node.items) closeObjects(node.items);
  for (const child of node.prefixItems ?? []) closeObjects(child);
}

const derivedCache = new WeakMap<FieldModel, Derived>();

function derive(model: FieldModel): Derived {
  const cached = derivedCache.get(model);
  if (cached) return cached;
  const errors: FieldError[] = [];
  const flat = flatten(model, errors);
  const builder = new TreeBuilder(errors);
  for (const entry of flat) builder.add(entry);
  closeObjects(builder.root);
  for (const { field, node, where, path } of flat) {
    if (field.defaultValue === undefined || field.defaultValue === null || !node) continue;
    if (path.includes(null)) {
      errors.push({ field: `${where}.defaultValue`, message: 'is not allowed on a path that selects every element (null)' });
      continue;
    }
    const problems = check(node, field.defaultValue, [], false);
    if (problems.length) errors.push({ field: `${where}.defaultValue`, message: problems.map(describeProblem).join('; ') });
  }
  const derived = { root: builder.root, flat, errors };
  derivedCache.set(model, derived);
  return derived;
}

/** Mistakes in the fields of a configuration, named as in the configuration: fields.2.namespace. */
export function fieldErrors(model: FieldModel): FieldError[] {
  return derive(model).errors;
}

/** The JSON Schema (draft 2020-12) of the claims, derived from the fields. */
export function claimsSchema(model: FieldModel): ClaimsSchema {
  return { $schema: JSON_SCHEMA_DIALECT, ...structuredClone(derive(model).root) };
}

/**
 * Checks claims as they are to be issued (defaults already merged) against the derived schema:
 * types, formats, constraints, mandatory claims, and no claims the fields do not declare. Empty
 * when they fit.
 */
export function validateClaims(model: FieldModel, claims: unknown): ClaimProblem[] {
  return check(derive(model).root, claims, [], true);
}

/** The claims built from the fields' default values; a child's default wins over its parent's. */
export function defaultClaims(model: FieldModel): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  const withDefaults = derive(model)
    .flat.filter(({ field, path }) => field.defaultValue !== undefined && field.defaultValue !== null && !path.includes(null))
    .sort((a, b) => a.path.length - b.path.length);
  for (const { field, path } of withDefaults) setAt(claims, path as (string | number)[], structuredClone(field.defaultValue));
  return claims;
}

function setAt(target: Record<string, unknown>, path: (string | number)[], value: unknown) {
  let cursor = target as Record<string | number, unknown>;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i] as string | number;
    let next = Object.hasOwn(cursor, key) ? cursor[key] : undefined;
    if (typeof next !== 'object' || next === null) {
      next = typeof path[i + 1] === 'number' ? [] : {};
      cursor[key] = next;
    }
    cursor = next as Record<string | number, unknown>;
  }
  cursor[path[path.length - 1] as string | number] = value;
}

// --- the validator -----------------------------------------------------------------------------

function hasType(value: unknown, type: JsonType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'object':
      return isJsonObject(value);
    case 'array':
      return Array.isArray(value);
  }
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;

function isDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function isDateTime(value: string): boolean {
  const match = DATE_TIME.exec(value);
  if (!match || !isDate(match[1] as string)) return false;
  const [hour, minute, second] = [Number(match[2]), Number(match[3]), Number(match[4])];
  const offsetOk = match[7] === undefined || (Number(match[7]) < 24 && Number(match[8]) < 60);
  return hour < 24 && minute < 60 && second <= 60 && offsetOk;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

const show = (value: unknown) => JSON.stringify(value) ?? String(value);
const describeType = (type: FieldType) => (type === 'date' || type === 'datetime' ? `a ${type}` : TYPE_NAME[JSON_TYPE[type]]);
const describeProblem = (p: ClaimProblem) => (p.path.length ? `${p.path.join('.')} ${p.message}` : p.message);
const length = (value: string) => [...value].length; // in characters (code points), as JSON Schema counts

// The image pattern is ours, not a caller's, and free of nested quantifiers: the built-in engine runs
// it in linear time, and some fifty times faster than RE2 over a portrait of a hundred kilobytes.
const IMAGE = new RegExp(IMAGE_PATTERN);
const matches = (pattern: string, value: string) => (pattern === IMAGE_PATTERN ? IMAGE.test(value) : matchesPattern(pattern, value));

function patternMismatch(pattern: string): string {
  if (pattern === IMAGE_PATTERN) return 'must be an image as a data: URL (data:image/...;base64,...)';
  const unusable = patternProblem(pattern);
  return unusable ? `cannot be checked: the configuration's pattern ${unusable}; change the pattern` : `must match ${pattern}`;
}

function check(node: SchemaNode, value: unknown, path: (string | number)[], enforceRequired: boolean): ClaimProblem[] {
  const problems: ClaimProblem[] = [];
  const problem = (message: string, at = path) => problems.push({ path: at, message });
  if (node.type && !hasType(value, node.type)) {
    problem(`must be ${TYPE_NAME[node.type]}`);
    return problems;
  }
  if (node.enum && !node.enum.some((allowed) => deepEqual(allowed, value))) problem(`must be one of ${node.enum.map(show).join(', ')}`);
  if (typeof value === 'string') {
    if (node.format === 'date' && !isDate(value)) problem('must be a date (YYYY-MM-DD)');
    if (node.format === 'date-time' && !isDateTime(value)) problem('must be a date-time (RFC 3339, e.g. 2024-05-01T12:00:00Z)');
    if (node.minLength !== undefined && length(value) < node.minLength) problem(`must be at least ${node.minLength} characters long`);
    if (node.maxLength !== undefined && length(value) > node.maxLength) problem(`must be at most ${node.maxLength} characters long`);
    if (node.pattern !== undefined && !matches(node.pattern, value)) problem(patternMismatch(node.pattern));
  } else if (typeof value === 'number') {
    if (node.minimum !== undefined && value < node.minimum) problem(`must be at least ${node.minimum}`);
    if (node.maximum !== undefined && value > node.maximum) problem(`must be at most ${node.maximum}`);
    if (node.exclusiveMinimum !== undefined && value <= node.exclusiveMinimum) problem(`must be more than ${node.exclusiveMinimum}`);
    if (node.exclusiveMaximum !== undefined && value >= node.exclusiveMaximum) problem(`must be less than ${node.exclusiveMaximum}`);
  } else if (Array.isArray(value)) {
    if (node.minItems !== undefined && value.length < node.minItems) problem(`must have at least ${node.minItems} element(s)`);
    if (node.maxItems !== undefined && value.length > node.maxItems) problem(`must have at most ${node.maxItems} element(s)`);
    value.forEach((element, i) => {
      const itemNode = node.prefixItems?.[i] ?? node.items;
      if (itemNode) problems.push(...check(itemNode, element, [...path, i], enforceRequired));
    });
  } else if (isJsonObject(value)) {
    if (enforceRequired) {
      for (const name of node.required ?? [])
        if (!Object.hasOwn(value, name) || value[name] === undefined) problem('is required', [...path, name]);
    }
    for (const [name, member] of Object.entries(value)) {
      if (member === undefined) continue;
      if (node.properties && Object.hasOwn(node.properties, name)) {
        problems.push(...check(node.properties[name] as SchemaNode, member, [...path, name], enforceRequired));
      } else if (node.additionalProperties === false) {
        problem('is not a claim of this credential configuration', [...path, name]);
      }
    }
  }
  return problems;
}
