// Rewrites a version-4 credential configuration into the field model of version 5: claims become
// fields[].defaultValue, disclosureFrame fields[].disclosable, config.claimsMetadata fields[].display
// and fields[].mandatory, config.namespace and config.claimsByNamespace fields[].namespace, and the
// JSON schema, which version 5 derives from the fields, gives them their types, required claims and
// constraints. What has no place in version 5 is refused, never dropped.
import { checkConfiguration } from '../credential-configs/checks.js';
import {
  type ConfigurationDocument,
  CreateBody,
  FIELD_TYPES,
  type FieldDefinition,
  type FieldType,
} from '../credential-configs/schemas.js';
import { type CredentialFormat, formatIdsWith, formatOf } from '../formats/index.js';
import { isJsonObject } from '../platform/json.js';

export interface Conversion {
  /** The version-5 document; absent when something was refused. */
  document?: Record<string, unknown>;
  /** What was rewritten, one line each. */
  changes: string[];
  /** What cannot be mapped, each naming the version-4 key. */
  refusals: string[];
}

export type Json = Record<string, unknown>;
type Display = NonNullable<FieldDefinition['display']>[number];

/** A field being assembled from the version-4 sources, keyed by claim name below its parent. */
interface Draft {
  type?: FieldType;
  defaultValue?: unknown;
  mandatory?: boolean;
  disclosed?: boolean;
  display?: Display[];
  constraints?: Json;
  children: Map<string, Draft>;
  /** The elements of an array (a child with path [null]), from the schema's items. */
  items?: Draft;
}

const TOP_LEVEL_V4 = ['claims', 'disclosureFrame', 'schema'] as const;
const CONFIG_V4 = ['namespace', 'claimsByNamespace', 'claimsMetadata'] as const;
/** Version-4 keys with no counterpart that a converter could fill in. */
const NO_COUNTERPART: Record<string, string> = {
  certId: 'set keyChainId to the key chain that holds this certificate',
  claimsWebhook: 'make an attribute provider (attribute-providers/<id>.json) and set attributeProviderId',
  notificationWebhook: 'make a webhook endpoint (webhook-endpoints/<id>.json) and set webhookEndpointId',
};
const CONSTRAINTS = [
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minItems',
  'maxItems',
  'enum',
] as const;
/** Schema keywords that only document, or that the derived schema sets itself. */
const SCHEMA_IGNORED = new Set(['$schema', '$id', '$comment', 'additionalProperties', 'examples']);

const newDraft = (): Draft => ({ children: new Map() });

function getOrCreate<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  const found = map.get(key);
  if (found !== undefined) return found;
  const made = make();
  map.set(key, made);
  return made;
}

/** The format a version-4 configuration names: one that version 4 had (whose mapping the format declares). */
function version4Format(config: Json): CredentialFormat | undefined {
  const format = typeof config.format === 'string' ? formatOf(config.format) : undefined;
  return format?.version4 ? format : undefined;
}

/** The formats whose claims are keyed by namespace, for messages. */
const namespacedFormats = () => formatIdsWith((format) => format.claimsLayout?.namespaced).join(' or ');

/** A credential configuration file (config.format of version 4 or 5) that carries a version-4 key. */
export function isVersion4(document: unknown): document is Json {
  if (!isJsonObject(document)) return false;
  const config = document.config;
  if (!isJsonObject(config) || !version4Format(config)) return false;
  return TOP_LEVEL_V4.some((key) => key in document) || CONFIG_V4.some((key) => key in config);
}

export function convertV4(original: Json, fileId: string): Conversion {
  return new Converter(structuredClone(original)).run(fileId);
}

class Converter {
  readonly changes: string[] = [];
  readonly refusals: string[] = [];
  /** Top-level drafts per namespace; '' for a format without namespaces. */
  private readonly roots = new Map<string, Map<string, Draft>>();
  private readonly config: Json;
  /** isVersion4 admitted only formats that declare their version-4 mapping. */
  private readonly format: CredentialFormat;
  /** Whether the format keys its claims by namespace (config.namespace and config.claimsByNamespace place them). */
  private readonly namespaced: boolean;

  constructor(private readonly doc: Json) {
    this.config = doc.config as Json;
    this.format = version4Format(this.config) as CredentialFormat;
    this.namespaced = this.format.claimsLayout?.namespaced === true;
  }

  /** Whether disclosureFrame decides fields[].disclosable. */
  private get disclosureFrame(): boolean {
    return this.format.version4?.disclosureFrame === 'disclosable';
  }

  run(fileId: string): Conversion {
    if ('fields' in this.doc) this.refuse('fields', 'present beside version-4 keys; merge them by hand');
    for (const key of Object.keys(NO_COUNTERPART)) if (key in this.doc) this.refuse(key, `removed in version 5: ${NO_COUNTERPART[key]}`);
    this.placeClaims();
    this.placeSchema();
    this.placeMetadata();
    this.placeDisclosure();
    this.renameImageUrls();
    const fields = this.fields();
    if (this.refusals.length) return { changes: this.changes, refusals: this.refusals };
    const { claims: _c, disclosureFrame: _d, schema: _s, ...rest } = this.doc;
    const { namespace: _n, claimsByNamespace: _b, claimsMetadata: _m, ...config } = this.config;
    const document = { ...rest, config, fields };
    this.check({ id: fileId, ...document });
    return this.refusals.length ? { changes: this.changes, refusals: this.refusals } : { document, changes: this.changes, refusals: [] };
  }

  private refuse(at: string, message: string) {
    this.refusals.push(`${at}: ${message}`);
  }

  private root(namespace: string) {
    return getOrCreate(this.roots, namespace, () => new Map<string, Draft>());
  }

  private draft(parent: Map<string, Draft>, name: string) {
    return getOrCreate(parent, name, newDraft);
  }

  /** The namespace that flat claims, schema and metadata of a namespaced format belong to. */
  private get namespace(): string | undefined {
    return typeof this.config.namespace === 'string' ? this.config.namespace : undefined;
  }

  private placeClaims() {
    const { claims } = this.doc;
    const byNamespace = this.config.claimsByNamespace;
    if (!this.namespaced && (this.namespace !== undefined || byNamespace !== undefined)) {
      for (const key of CONFIG_V4.slice(0, 2)) if (key in this.config) this.refuse(`config.${key}`, `is for ${namespacedFormats()} only`);
    }
    if (byNamespace !== undefined) {
      if (!isJsonObject(byNamespace) || !Object.values(byNamespace).every(isJsonObject)) {
        this.refuse('config.claimsByNamespace', 'must map each namespace to its claims');
      } else {
        for (const [namespace, values] of Object.entries(byNamespace)) this.placeValues(this.root(namespace), values as Json, [namespace]);
        this.changes.push(
          `config.claimsByNamespace -> fields[].namespace and fields[].defaultValue (${Object.keys(byNamespace).join(', ')})`,
        );
      }
    }
    if (this.namespace !== undefined && this.namespaced) this.changes.push(`config.namespace -> fields[].namespace (${this.namespace})`);
    if (claims === undefined) return;
    if (!isJsonObject(claims)) return this.refuse('claims', 'must be an object');
    if (this.namespaced && this.namespace === undefined) {
      const message = `an ${this.format.id} configuration needs config.namespace to place its claims (or config.claimsByNamespace)`;
      return this.refuse('claims', message);
    }
    this.placeValues(this.root(this.namespace ?? ''), claims, ['claims']);
    this.changes.push(`claims -> fields[].defaultValue (${Object.keys(claims).join(', ')})`);
  }

  /** Claim values become defaults; an object's members become its children. */
  private placeValues(parent: Map<string, Draft>, values: Json, at: string[]) {
    for (const [name, value] of Object.entries(values)) {
      const draft = this.draft(parent, name);
      if (isJsonObject(value) && Object.keys(value).length) {
        draft.type = 'object';
        this.placeValues(draft.children, value, [...at, name]);
      } else if (value !== null) {
        draft.type = typeOfValue(value);
        draft.defaultValue = value;
      }
    }
  }

  private placeSchema() {
    const { schema } = this.doc;
    if (schema === undefined) return;
    if (!isJsonObject(schema)) return this.refuse('schema', 'must be a JSON schema object');
    const properties = isJsonObject(schema.properties) ? schema.properties : {};
    const namespaces = Object.keys(properties);
    if (this.namespaced && namespaces.length && namespaces.every((ns) => this.roots.has(ns) || ns === this.namespace)) {
      for (const namespace of namespaces)
        this.applySchema(properties[namespace] as Json, this.root(namespace), ['schema', 'properties', namespace]);
    } else if (this.namespaced && this.namespace === undefined) {
      return this.refuse('schema', 'its properties are not the namespaces of the claims, and config.namespace is not set');
    } else {
      this.applySchemaMembers(schema, this.root(this.namespace ?? ''), ['schema']);
    }
    this.changes.push('schema -> fields[].type, fields[].mandatory, fields[].constraints (version 5 derives the schema from the fields)');
  }

  /** An object schema: its properties become drafts, `required` makes them mandatory. */
  private applySchemaMembers(schema: Json, parent: Map<string, Draft>, at: string[]) {
    const required = Array.isArray(schema.required) ? schema.required : [];
    for (const [name, property] of Object.entries(isJsonObject(schema.properties) ? schema.properties : {})) {
      const draft = this.draft(parent, name);
      if (!isJsonObject(property)) this.refuse([...at, 'properties', name].join('.'), 'must be a schema object');
      else this.applySchema(property, draft, [...at, 'properties', name]);
      if (required.includes(name)) draft.mandatory = true;
    }
  }

  private applySchema(schema: Json, target: Draft | Map<string, Draft>, at: string[]) {
    if (target instanceof Map) return this.applySchemaMembers(schema, target, at);
    const where = at.join('.');
    const type = schemaType(schema);
    if (typeof type === 'object') return this.refuse(`${where}.${type.keyword}`, type.problem);
    if (type) {
      if (target.defaultValue !== undefined && !fits(type, target.defaultValue)) {
        return this.refuse(where, `says ${type}, but the claim's value is ${JSON.stringify(target.defaultValue)}`);
      }
      target.type = type;
    }
    for (const [keyword, value] of Object.entries(schema)) {
      if (keyword === 'type' || keyword === 'format' || keyword === 'required' || SCHEMA_IGNORED.has(keyword)) continue;
      if (keyword === 'properties') this.applySchemaMembers(schema, target.children, at);
      else if (keyword === 'items' && isJsonObject(value)) {
        target.items ??= newDraft();
        this.applySchema(value, target.items, [...at, 'items']);
      } else if ((CONSTRAINTS as readonly string[]).includes(keyword)) target.constraints = { ...target.constraints, [keyword]: value };
      else if (keyword === 'title' && typeof value === 'string') {
        target.display ??= [{ name: value, ...(typeof schema.description === 'string' && { description: schema.description }) }];
      } else if (keyword !== 'description') this.refuse(`${where}.${keyword}`, 'has no counterpart in version-5 fields');
    }
  }

  private placeMetadata() {
    const metadata = this.config.claimsMetadata;
    if (metadata === undefined) return;
    if (!Array.isArray(metadata) && !isJsonObject(metadata)) {
      return this.refuse('config.claimsMetadata', 'must be a list of {path, mandatory, display}, or an object of them by claim name');
    }
    // A list carries claims paths (OpenID4VCI claims metadata); an object is keyed by claim name.
    const entries = Array.isArray(metadata)
      ? metadata.map((entry, i) => ({ entry, at: `config.claimsMetadata.${i}` }))
      : Object.entries(metadata).map(([name, entry]) => ({
          entry: isJsonObject(entry) ? { path: [name], ...entry } : entry,
          at: `config.claimsMetadata.${name}`,
        }));
    for (const { entry, at } of entries) {
      if (!isJsonObject(entry) || !Array.isArray(entry.path)) {
        this.refuse(at, 'must be {path, mandatory, display}');
        continue;
      }
      const draft = this.draftAt(entry.path, Array.isArray(metadata), `${at}.path`);
      if (!draft) continue;
      for (const [key, value] of Object.entries(entry)) {
        if (key === 'path') continue;
        if (key === 'mandatory' && typeof value === 'boolean') draft.mandatory = value;
        else if (key === 'display' && Array.isArray(value)) {
          const display = value.map((d, j) => this.displayEntry(d, `${at}.display.${j}`)).filter((d): d is Display => d !== undefined);
          draft.display = display;
        } else this.refuse(`${at}.${key}`, 'has no counterpart in version-5 fields');
      }
    }
    this.changes.push(`config.claimsMetadata -> fields[].display and fields[].mandatory (entries: ${entries.length})`);
  }

  /** The draft a claims path names: for a namespaced format the namespace first, unless the list is keyed by claim name. */
  private draftAt(path: unknown[], namespaced: boolean, at: string): Draft | undefined {
    const segments = [...path];
    const namespace = this.namespaced ? (namespaced ? segments.shift() : this.namespace) : '';
    if (typeof namespace !== 'string') {
      this.refuse(at, `an ${this.format.id} claim path starts with its namespace`);
      return undefined;
    }
    if (!segments.length || !segments.every((s) => typeof s === 'string')) {
      this.refuse(at, 'only paths of claim names can be placed on fields (no array indexes or null)');
      return undefined;
    }
    let parent = this.root(namespace);
    let draft: Draft | undefined;
    for (const name of segments as string[]) {
      draft = this.draft(parent, name);
      parent = draft.children;
    }
    return draft;
  }

  private displayEntry(entry: unknown, at: string): Display | undefined {
    if (!isJsonObject(entry)) {
      this.refuse(at, 'must be {name, locale, description}');
      return undefined;
    }
    const { name = entry.label, locale = entry.lang, description, label: _l, lang: _g, ...rest } = entry;
    for (const key of Object.keys(rest)) this.refuse(`${at}.${key}`, 'has no counterpart in fields[].display');
    if (typeof name !== 'string') {
      this.refuse(at, 'has no name');
      return undefined;
    }
    return {
      name,
      ...(typeof locale === 'string' && { locale }),
      ...(typeof description === 'string' && { description }),
    };
  }

  /** disclosureFrame lists what is selectively disclosable; in version 4 the rest was not. */
  private placeDisclosure() {
    const frame = this.doc.disclosureFrame;
    const mapping = this.format.version4?.disclosureFrame;
    if (typeof mapping === 'object') {
      if (frame !== undefined) this.changes.push(`disclosureFrame removed: ${mapping.dropped}`);
      return;
    }
    if (frame !== undefined) {
      if (!isJsonObject(frame)) return this.refuse('disclosureFrame', 'must be an object');
      this.walkFrame(frame, this.root(''), ['disclosureFrame']);
    }
    const marked = { yes: [] as string[], no: [] as string[] };
    const mark = (drafts: Map<string, Draft>, prefix: string) => {
      for (const [name, draft] of drafts) {
        (draft.disclosed ? marked.yes : marked.no).push(`${prefix}${name}`);
        mark(draft.children, `${prefix}${name}.`);
      }
    };
    mark(this.root(''), '');
    const summary = `disclosable: ${marked.yes.join(', ') || 'none'}; not disclosable: ${marked.no.join(', ') || 'none'}`;
    this.changes.push(
      frame === undefined
        ? `no disclosureFrame: nothing was disclosable, so fields[].disclosable is false (${summary})`
        : `disclosureFrame -> fields[].disclosable (${summary})`,
    );
  }

  private walkFrame(frame: Json, parent: Map<string, Draft>, at: string[]) {
    for (const [key, value] of Object.entries(frame)) {
      const where = [...at, key].join('.');
      if (key === '_sd') {
        if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
          this.refuse(where, 'only claim names can be placed on fields (no array elements)');
          continue;
        }
        for (const name of value as string[]) this.draft(parent, name).disclosed = true;
      } else if (key.startsWith('_')) this.refuse(where, 'has no counterpart in version 5 (fields[].disclosable only)');
      else if (isJsonObject(value)) this.walkFrame(value, this.draft(parent, key).children, [...at, key]);
      else this.refuse(where, 'must be a nested disclosure frame');
    }
  }

  /** config.display[].logo.url and background_image.url of version 4 are uri in version 5. */
  private renameImageUrls() {
    const displays = Array.isArray(this.config.display) ? this.config.display : [];
    displays.forEach((display, i) => {
      for (const image of ['logo', 'background_image']) {
        const value = isJsonObject(display) ? display[image] : undefined;
        if (!isJsonObject(value) || !('url' in value)) continue;
        const { url, ...rest } = value;
        if (rest.uri === undefined) rest.uri = url;
        else if (rest.uri !== url) {
          this.refuse(`config.display.${i}.${image}.url`, 'differs from uri; keep one of them');
          continue;
        }
        (display as Json)[image] = rest;
        this.changes.push(`config.display.${i}.${image}.url -> uri`);
      }
    });
  }

  private fields(): FieldDefinition[] {
    const fields: FieldDefinition[] = [];
    for (const [namespace, drafts] of this.roots) {
      for (const [name, draft] of drafts) {
        const field = this.field(draft, [name], namespace ? [namespace, name] : [name]);
        if (field) fields.push(namespace ? { ...field, namespace } : field);
      }
    }
    return fields;
  }

  private field(draft: Draft, path: (string | null)[], claim: (string | null)[]): FieldDefinition | undefined {
    if (!draft.type) {
      this.refuse(`claim ${claim.map((s) => s ?? '[*]').join('.')}`, 'has no type: no value in claims and no type in schema');
      return undefined;
    }
    const children = [...draft.children].map(([name, child]) => this.field(child, [name], [...claim, name]));
    if (draft.items) children.push(this.field(draft.items, [null], [...claim, null]));
    return {
      path,
      type: draft.type,
      ...(draft.defaultValue !== undefined && { defaultValue: draft.defaultValue }),
      ...(draft.mandatory !== undefined && { mandatory: draft.mandatory }),
      ...(this.disclosureFrame && path[0] !== null && { disclosable: draft.disclosed === true }),
      ...(draft.display && { display: draft.display }),
      ...(draft.constraints && { constraints: draft.constraints }),
      ...(children.length && { children: children.filter((c): c is FieldDefinition => c !== undefined) }),
    };
  }

  /** The result must be what version 5 accepts: its request schema and its rules. */
  private check(document: Json) {
    const parsed = CreateBody.safeParse(document);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) this.refuse(issue.path.join('.') || '(file)', issue.message);
      return;
    }
    const { id: _id, ...input } = parsed.data;
    for (const error of checkConfiguration({ ...input, vct: input.vct ?? null } as ConfigurationDocument)) {
      this.refuse(error.field.replace(/^body\./, ''), error.message);
    }
  }
}

function typeOfValue(value: unknown): FieldType {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  return Array.isArray(value) ? 'array' : 'object';
}

/** The field type a property schema names, or why none can be named. */
function schemaType(schema: Json): FieldType | undefined | { keyword: string; problem: string } {
  const { type, format } = schema;
  if (type === undefined) return format === undefined ? undefined : { keyword: 'format', problem: 'without a type' };
  if (typeof type !== 'string' || !(FIELD_TYPES as readonly string[]).includes(type)) {
    return { keyword: 'type', problem: `${JSON.stringify(type)} is not one of ${FIELD_TYPES.join(', ')}` };
  }
  if (format === undefined) return type as FieldType;
  if (type === 'string' && format === 'date') return 'date';
  if (type === 'string' && format === 'date-time') return 'datetime';
  return {
    keyword: 'format',
    problem: `${JSON.stringify(format)} has no counterpart (only date and date-time have: fields of type date, datetime)`,
  };
}

function fits(type: FieldType, value: unknown): boolean {
  switch (type) {
    case 'integer':
      return Number.isInteger(value);
    case 'date':
    case 'datetime':
    case 'image':
      return typeof value === 'string';
    default:
      return typeOfValue(value) === type;
  }
}
