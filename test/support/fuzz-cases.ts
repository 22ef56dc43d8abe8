// Malformed requests for one operation of the OpenAPI document, generated deterministically from a
// seed: wrong types, huge and NUL-bearing strings, deep nesting, long arrays, numbers JSON cannot
// hold, broken JSON, wrong media types, and path and query values that try to escape or break out.

/** A JSON Schema node of the OpenAPI 3.1 document, as far as generation needs it. */
export interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  minimum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
  default?: unknown;
  additionalProperties?: boolean | Schema;
  propertyNames?: Schema;
}

export interface FuzzRequest {
  name: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Blob;
}

/** A small, fast PRNG (mulberry32): the same seed gives the same cases on every run. */
export function seeded(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return { pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T };
}

const DEPTH = 5_000;
const HUGE = `"${'x'.repeat(200_000)}"`;
const DEEP_ARRAY = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
const DEEP_OBJECT = `${'{"a":'.repeat(DEPTH)}null${'}'.repeat(DEPTH)}`;
const LONG_ARRAY = `[${new Array(100_000).fill('"a"').join(',')}]`;
/** Raw JSON text: JSON.stringify cannot write a number that overflows to Infinity. */
const OVERFLOW = ['1e309', '-1e309'];
const WRONG_TYPES = ['0', '-1', '1.5', 'true', 'false', 'null', '"fuzz"', '""', '{}', '[]', '{"a":[1]}', '[{"a":1}]'];
const ODD_STRINGS = ['"a\\u0000b"', '"\\u0000"', '"../../etc/passwd"', '"\\ud800"', '"%00"', '" "', '"<script>"', '"\\u202e"'];

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const jwt = (header: unknown, payload: unknown = {}) => `${b64(header)}.${b64(payload)}.AAAA`;
const BAD_EC = { kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' };
/**
 * Tokens that parse far enough to reach key import and signature checks: keys off their curve or of
 * odd kinds, garbage certificates, alg none, headers that are not objects, SD-JWT and CBOR debris.
 */
export const HOSTILE_TOKENS = [
  'a.b.c',
  jwt({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: BAD_EC }, { aud: 'x', nonce: 'x', iat: 1 }),
  jwt({ alg: 'ES256', typ: 'dpop+jwt', jwk: { ...BAD_EC, crv: 'P-384' } }, { htm: 'POST', htu: 'x', iat: 1, jti: 'x' }),
  jwt({ alg: 'ES256', jwk: { kty: 'RSA', n: 'AA', e: 'AA' } }),
  jwt({ alg: 'EdDSA', jwk: { kty: 'OKP', crv: 'Ed25519', x: 'AA' } }),
  jwt({ alg: 'ES256', x5c: ['AAAA', 'not base64'] }),
  jwt({ alg: 'ES256', kid: 'did:jwk:AAAA#0' }),
  jwt({ alg: 'none' }),
  jwt({ alg: 'ES256', enc: 'A256GCM', epk: BAD_EC }),
  jwt([]),
  `${b64('not json')}.${b64('{}')}.AAAA`,
  `${jwt({ alg: 'ES256', typ: 'dc+sd-jwt' })}~WyJhIiwiYiJd~${jwt({ alg: 'ES256', typ: 'kb+jwt' })}`,
  '~~~',
  'o2d2ZXJzaW9u',
  'eyJ.eyJ.eyJ.eyJ.eyJ',
];

/** Values for one path parameter that try traversal, NUL bytes, broken escapes and length. */
export const PATH_VALUES = [
  '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e%2f%2e%2e%2f',
  '%00',
  'a%00b',
  '%E0%A4%A',
  '%ff',
  '%F0%9F%98%80',
  '%20',
  "'%20OR%20'1'%3D'1",
  '1e309',
  '-1',
  'a'.repeat(300),
];
const QUERY_VALUES = ['abc', '-1', '0', '1e309', '%00', 'a%00b', '%E0%A4%A', '', 'x'.repeat(8_000)];

const MARK = '@@fuzz@@';
const JSON_TYPE = { 'content-type': 'application/json' };

export class Generator {
  constructor(private readonly components: Record<string, Schema>) {}

  resolve(schema: Schema | undefined): Schema {
    let node = schema ?? {};
    for (let hops = 0; node.$ref && hops < 20; hops++) node = this.components[node.$ref.split('/').pop() as string] ?? {};
    if (node.allOf?.length) return this.resolve(node.allOf[0]);
    const options = node.anyOf ?? node.oneOf;
    if (options?.length) return this.resolve(options.find((o) => this.resolve(o).type !== 'null') ?? options[0]);
    return node;
  }

  /** A value the schema accepts where that is easy to see; semantic rules may still refuse it. */
  sample(input: Schema | undefined, depth = 0): unknown {
    const schema = this.resolve(input);
    if (schema.const !== undefined) return schema.const;
    if (schema.enum?.length) return schema.enum[0];
    if (schema.default !== undefined) return schema.default;
    const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
    if (type === 'object' || schema.properties) {
      const value: Record<string, unknown> = {};
      if (depth > 6) return value;
      for (const key of schema.required ?? []) value[key] = this.sample(schema.properties?.[key], depth + 1);
      return value;
    }
    if (type === 'array') return Array.from({ length: schema.minItems ?? 0 }, () => this.sample(schema.items, depth + 1));
    if (type === 'integer' || type === 'number') return Math.max(1, Math.ceil(schema.minimum ?? schema.exclusiveMinimum ?? 1));
    if (type === 'boolean') return true;
    if (type === 'string') return sampleString(schema);
    return 'fuzz';
  }

  /** Every property (nested objects and the first array item included, three levels down) with its schema. */
  properties(input: Schema | undefined, prefix: (string | number)[] = []): { path: (string | number)[]; schema: Schema }[] {
    const schema = this.resolve(input);
    if (prefix.length >= 3) return [];
    const found: { path: (string | number)[]; schema: Schema }[] = [];
    for (const [key, child] of Object.entries(schema.properties ?? {})) {
      const path = [...prefix, key];
      found.push({ path, schema: this.resolve(child) });
      found.push(...this.properties(child, path));
    }
    if (schema.type === 'array' && schema.items) found.push(...this.properties(schema.items, [...prefix, 0]));
    return found;
  }

  /**
   * 100,000 copies of a valid item, so the array passes item validation and reaches the service;
   * fewer where 100,000 would not fit under the 1 MiB body limit.
   */
  private longArray(items: Schema | undefined): string {
    const item = JSON.stringify(this.sample(items)) ?? 'null';
    const count = Math.min(100_000, Math.floor(1_000_000 / (item.length + 1)));
    return `[${new Array(count).fill(item).join(',')}]`;
  }

  /** Malformed bodies: whole-body breakage, then each property given values of the wrong kind. */
  bodies(schema: Schema, base: unknown, seed: number): FuzzRequest[] {
    const random = seeded(seed);
    const cases: FuzzRequest[] = [
      raw('invalid JSON', '{"a":'),
      raw('truncated string', '{"a":"'),
      raw('empty JSON body', ''),
      raw('top-level array', '[]'),
      raw('top-level string', '"fuzz"'),
      raw('top-level null', 'null'),
      raw('top-level overflowing number', '1e309'),
      raw('__proto__ key', '{"__proto__":{"polluted":true}}'),
      raw('constructor.prototype key', '{"constructor":{"prototype":{"polluted":true}}}'),
      raw('deep array body', DEEP_ARRAY),
      raw('deep object body', DEEP_OBJECT),
      raw('100k-element array body', LONG_ARRAY),
      raw('unknown property with NUL key', spliced(base, ['a\u0000b'], '1')),
      raw('over 1 MiB', spliced(base, ['padding'], `"${'x'.repeat(1_100_000)}"`)),
      { name: 'text/plain', path: '', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(base) },
      { name: 'application/xml', path: '', headers: { 'content-type': 'application/xml' }, body: '<a/>' },
      { name: 'form with NUL', path: '', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=%00&b=%E0%A4%A&c' },
      { name: 'multipart without boundary', path: '', headers: { 'content-type': 'multipart/form-data' }, body: 'x' },
      { name: 'json with latin1 charset', path: '', headers: { 'content-type': 'application/json; charset=latin1' }, body: '{}' },
      // A Blob without a type is sent without a content-type header.
      { name: 'no content type', path: '', headers: {}, body: new Blob([JSON.stringify(base)]) },
    ];
    for (const { path, schema: property } of this.properties(schema)) {
      const at = path.join('.');
      const values = [
        random.pick(WRONG_TYPES),
        random.pick(WRONG_TYPES),
        random.pick(ODD_STRINGS),
        '"a\\u0000b"',
        HUGE,
        random.pick([DEEP_ARRAY, DEEP_OBJECT]),
        random.pick(OVERFLOW),
        JSON.stringify(random.pick(HOSTILE_TOKENS)),
        // Anything but an array is refused by its type at once; an array of valid items goes deeper.
        ...(property.type === 'array' ? [this.longArray(property.items)] : []),
      ];
      for (const value of new Set(values)) cases.push(raw(`${at} = ${value.slice(0, 24)}`, spliced(base, path, value)));
    }
    return cases;
  }
}

function sampleString(schema: Schema): string {
  const byFormat: Record<string, string> = {
    uri: 'https://example.com/fuzz',
    url: 'https://example.com/fuzz',
    email: 'fuzz@example.com',
    'date-time': '2030-01-01T00:00:00.000Z',
    date: '2030-01-01',
    uuid: '00000000-0000-4000-8000-000000000000',
  };
  if (schema.format && byFormat[schema.format]) return byFormat[schema.format] as string;
  const candidates = ['fuzz', 'DE', 'fuzz-1', 'a', '1', 'https://example.com/fuzz'];
  const fits = (value: string) => {
    if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value)) return false;
    return value.length >= (schema.minLength ?? 0);
  };
  return candidates.find(fits) ?? 'x'.repeat(schema.minLength ?? 4);
}

const raw = (name: string, body: string): FuzzRequest => ({ name, path: '', headers: JSON_TYPE, body });

/** `base` as JSON with the raw JSON text `value` at `path` (objects made where the base has none). */
export function spliced(base: unknown, path: (string | number)[], value: string): string {
  const copy = structuredClone(base ?? {}) as Record<string | number, unknown>;
  let node: Record<string | number, unknown> = typeof copy === 'object' && copy !== null ? copy : {};
  const root = node;
  path.forEach((key, i) => {
    if (i === path.length - 1) {
      node[key] = MARK;
      return;
    }
    const next = node[key];
    const fresh = typeof path[i + 1] === 'number' ? [] : {};
    node[key] = typeof next === 'object' && next !== null ? next : fresh;
    node = node[key] as Record<string | number, unknown>;
  });
  return JSON.stringify(root).replace(`"${MARK}"`, () => value);
}

/** Each path parameter in turn replaced by a hostile value, the others left as given. */
export function pathCases(template: string, values: Record<string, string>): FuzzRequest[] {
  const params = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
  const fill = (override: Record<string, string>) =>
    template.replace(/\{([^}]+)\}/g, (_, name: string) => override[name] ?? encodeURIComponent(values[name] ?? 'missing'));
  return params.flatMap((param) =>
    PATH_VALUES.map((value) => ({ name: `path ${param} = ${value.slice(0, 24)}`, path: fill({ [param]: value }), headers: {} })),
  );
}

/** Each documented query parameter given wrong or hostile values, plus repeated and unknown ones. */
export function queryCases(names: string[]): FuzzRequest[] {
  const cases = names.flatMap((name) => [
    ...QUERY_VALUES.map((value) => ({ name: `query ${name} = ${value.slice(0, 24)}`, path: `?${name}=${value}`, headers: {} })),
    { name: `query ${name} repeated`, path: `?${name}=1&${name}=2`, headers: {} },
    { name: `query ${name}[]`, path: `?${name}[a]=1`, headers: {} },
  ]);
  return [...cases, { name: 'unknown query parameter', path: '?fuzz=%00', headers: {} }];
}

/** Broken credentials for the public protocol endpoints, which read Authorization and DPoP themselves. */
export const PROTOCOL_HEADERS: FuzzRequest[] = [
  { name: 'bearer garbage', path: '', headers: { authorization: 'Bearer a.b.c' } },
  { name: 'bearer empty', path: '', headers: { authorization: 'Bearer ' } },
  { name: 'dpop garbage', path: '', headers: { authorization: 'DPoP a.b.c', dpop: 'a.b.c' } },
  { name: 'dpop huge', path: '', headers: { authorization: 'DPoP x', dpop: 'x'.repeat(8_000) } },
  { name: 'basic garbage', path: '', headers: { authorization: 'Basic %%%' } },
  { name: 'basic with NUL', path: '', headers: { authorization: `Basic ${Buffer.from('a\u0000:b').toString('base64')}` } },
  ...HOSTILE_TOKENS.map((token, i) => ({ name: `dpop hostile ${i}`, path: '', headers: { authorization: `DPoP ${token}`, dpop: token } })),
  { name: 'attestation garbage', path: '', headers: { 'oauth-client-attestation': 'a.b.c', 'oauth-client-attestation-pop': 'a.b.c' } },
];
