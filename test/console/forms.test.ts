// The console's forms against the OpenAPI document the service serves: every field of every form is
// a property of the request body of the operation the form fills, and a select's or checkbox list's
// options are among the values the schema allows. A renamed or removed property fails here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLOW_FORMS, FORMS, type FormField, SETTINGS_FORMS } from '../../console/src/forms.js';
import { startService, type TestService } from '../support/service.js';

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  items?: Schema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
};
interface Document {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>;
  components: { schemas: Record<string, Schema> };
}

let svc: TestService;
let openapi: Document;
beforeAll(async () => {
  svc = await startService();
  openapi = (await svc.raw('GET', '/api/openapi.json')).body;
}, 60_000);
afterAll(() => svc?.stop());

/** The alternatives a schema stands for: references resolved, anyOf / oneOf / allOf spread out. */
function alternatives(schema: Schema): Schema[] {
  if (schema.$ref) return alternatives(openapi.components.schemas[schema.$ref.split('/').at(-1) as string] as Schema);
  const parts = [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])];
  return parts.length ? [schema, ...parts.flatMap(alternatives)] : [schema];
}

/** The schemas the property at `path` may have (none: the body has no such property). */
function propertyAt(body: Schema, path: string): Schema[] {
  let current = [body];
  for (const key of path.split('.')) {
    current = current.flatMap(alternatives).flatMap((s) => (s.properties?.[key] ? [s.properties[key] as Schema] : []));
  }
  return current;
}

/** Every value the schemas name (enum and const), or undefined when one of them allows any value of its type. */
function allowedValues(schemas: Schema[]): Set<unknown> {
  return new Set(schemas.flatMap(alternatives).flatMap((s) => [...(s.enum ?? []), ...(s.const !== undefined ? [s.const] : [])]));
}

function check(field: FormField, body: Schema): string[] {
  const property = propertyAt(body, field.path);
  if (property.length === 0) return [`${field.path}: not a property of the body`];
  if (field.kind === 'select') {
    const allowed = allowedValues(property);
    return field.options.filter((o) => !allowed.has(o)).map((o) => `${field.path}: option ${o} is not allowed by the schema`);
  }
  if (field.kind === 'multi') {
    const allowed = allowedValues(property.flatMap(alternatives).flatMap((s) => (s.items ? [s.items] : [])));
    return field.options.filter((o) => !allowed.has(o)).map((o) => `${field.path}: option ${o} is not allowed by the schema`);
  }
  // Ids the page lists at run time: a list field must be an array of strings, a single id a string.
  const types = (schemas: Schema[]) => new Set(schemas.flatMap(alternatives).flatMap((s) => [s.type ?? []].flat()));
  if (field.kind === 'ids' || field.kind === 'list') {
    const items = property.flatMap(alternatives).flatMap((s) => (s.items ? [s.items] : []));
    if (!types(items).has('string')) return [`${field.path}: not an array of strings`];
  }
  if (field.kind === 'id' && !types(property).has('string')) return [`${field.path}: not a string`];
  if (field.kind === 'integer') {
    const bounds = property.flatMap(alternatives);
    const { min, max } = field;
    const problems: string[] = [];
    // z.number().int().positive() is exclusiveMinimum 0: an integer's minimum 1.
    if (min !== undefined && !bounds.some((s) => s.minimum === min || s.exclusiveMinimum === min - 1))
      problems.push(`${field.path}: min ${min} is not the schema's`);
    if (max !== undefined && !bounds.some((s) => s.maximum === max)) problems.push(`${field.path}: max ${max} is not the schema's`);
    return problems;
  }
  // A list of objects: each of its fields is a property of the items.
  if (field.kind === 'objects') {
    const items = property.flatMap(alternatives).flatMap((s) => (s.items ? [s.items] : []));
    if (items.length === 0) return [`${field.path}: not an array`];
    const item: Schema = { anyOf: items };
    return field.fields.flatMap((member) => check(member, item).map((p) => `${field.path}[]: ${p}`));
  }
  return [];
}

describe('console forms', () => {
  it('name only properties of the request bodies they fill, with the values those allow', () => {
    const problems = Object.entries({ ...FORMS, ...FLOW_FORMS, ...SETTINGS_FORMS }).flatMap(([name, spec]) => {
      const operation = openapi.paths[spec.operation.path]?.[spec.operation.method];
      const body = operation?.requestBody?.content['application/json']?.schema;
      if (!body) return [`${name}: ${spec.operation.method.toUpperCase()} ${spec.operation.path} takes no JSON body`];
      return spec.fields.flatMap((field) => check(field, body).map((p) => `${name}: ${p}`));
    });
    expect(problems).toEqual([]);
  });

  it('would notice a field the body does not have', () => {
    const body = openapi.paths['/api/tenant']?.post?.requestBody?.content['application/json']?.schema as Schema;
    expect(check({ kind: 'text', path: 'nmae', label: 'Name' }, body)).toEqual(['nmae: not a property of the body']);
    expect(check({ kind: 'multi', path: 'roles', label: 'Roles', options: ['issuance:manage', 'root'] }, body)).toEqual([
      'roles: option root is not allowed by the schema',
    ]);
    expect(check({ kind: 'ids', path: 'name', label: 'Name' }, body)).toEqual(['name: not an array of strings']);
    expect(check({ kind: 'id', path: 'roles', label: 'Roles' }, body)).toEqual(['roles: not a string']);
    const settings = openapi.paths['/api/issuer/config']?.put?.requestBody?.content['application/json']?.schema as Schema;
    expect(check({ kind: 'integer', path: 'batchSize', label: 'Batch size', min: 1, max: 1000 }, settings)).toEqual([
      "batchSize: max 1000 is not the schema's",
    ]);
    expect(
      check(
        {
          kind: 'objects',
          path: 'display',
          label: 'Display',
          item: 'Display',
          empty: {},
          fields: [{ kind: 'text', path: 'nmae', label: 'Name' }],
        },
        settings,
      ),
    ).toEqual(['display[]: nmae: not a property of the body']);
  });
});
