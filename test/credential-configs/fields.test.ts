// The field model's pure functions: the derived JSON Schema, the claims validator, the defaults and
// the structural checks. Through HTTP they are exercised in credential-configs.test.ts.
import { describe, expect, it } from 'vitest';
import {
  claimsSchema,
  defaultClaims,
  type FieldModel,
  fieldErrors,
  IMAGE_PATTERN,
  validateClaims,
} from '../../src/credential-configs/fields.js';
import type { FieldDefinition } from '../../src/credential-configs/schemas.js';

const sdJwt = (fields: FieldDefinition[]): FieldModel => ({ config: { format: 'dc+sd-jwt' }, fields });
const mdoc = (fields: FieldDefinition[]): FieldModel => ({ config: { format: 'mso_mdoc' }, fields });
const PORTRAIT = 'data:image/png;base64,iVBORw0KGgo=';

/** A PID-like configuration touching every feature of the model. */
const PID = sdJwt([
  { path: ['given_name'], type: 'string', mandatory: true, defaultValue: 'ERIKA', display: [{ locale: 'en', name: 'Given name' }] },
  { path: ['family_name'], type: 'string', mandatory: true, constraints: { minLength: 1, maxLength: 50 } },
  { path: ['birthdate'], type: 'date', mandatory: true, defaultValue: '1964-08-12' },
  { path: ['age_in_years'], type: 'integer', constraints: { minimum: 0, maximum: 150 } },
  { path: ['height'], type: 'number', constraints: { exclusiveMinimum: 0 } },
  { path: ['is_over_18'], type: 'boolean' },
  { path: ['issued_at_office'], type: 'datetime' },
  { path: ['picture'], type: 'image' },
  { path: ['sex'], type: 'integer', constraints: { enum: [0, 1, 2, 9] } },
  { path: ['document_number'], type: 'string', constraints: { pattern: '^[A-Z0-9]{9}$' } },
  {
    path: ['address'],
    type: 'object',
    display: [{ name: 'Address', description: 'Where the holder lives' }],
    children: [
      { path: ['locality'], type: 'string', mandatory: true, defaultValue: 'KÖLN' },
      { path: ['postal_code'], type: 'string', defaultValue: '51147' },
    ],
  },
  { path: ['place_of_birth', 'country'], type: 'string', mandatory: true, defaultValue: 'DE' },
  { path: ['nationalities'], type: 'array', constraints: { maxItems: 3 }, children: [{ path: [null], type: 'string', mandatory: true }] },
  { path: ['phones', 0], type: 'string', defaultValue: '+49 1' },
  { path: ['preferences'], type: 'object' },
]);

const VALID = {
  given_name: 'Erika',
  family_name: 'Mustermann',
  birthdate: '1964-08-12',
  age_in_years: 59,
  height: 1.7,
  is_over_18: true,
  issued_at_office: '2024-05-01T12:00:00.5+02:00',
  picture: PORTRAIT,
  sex: 2,
  document_number: 'T22000129',
  address: { locality: 'Köln', postal_code: '51147' },
  place_of_birth: { country: 'DE' },
  nationalities: ['DE'],
  phones: ['+49 1', 'extra element is fine'],
  preferences: { anything: ['goes', 1] },
};

describe('claimsSchema', () => {
  it('derives a draft 2020-12 schema: nesting from paths and children, types, formats, required, constraints, titles', () => {
    expect(fieldErrors(PID)).toEqual([]);
    expect(claimsSchema(PID)).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        given_name: { type: 'string', title: 'Given name' },
        family_name: { type: 'string', minLength: 1, maxLength: 50 },
        birthdate: { type: 'string', format: 'date' },
        age_in_years: { type: 'integer', minimum: 0, maximum: 150 },
        height: { type: 'number', exclusiveMinimum: 0 },
        is_over_18: { type: 'boolean' },
        issued_at_office: { type: 'string', format: 'date-time' },
        picture: { type: 'string', pattern: IMAGE_PATTERN },
        sex: { type: 'integer', enum: [0, 1, 2, 9] },
        document_number: { type: 'string', pattern: '^[A-Z0-9]{9}$' },
        address: {
          type: 'object',
          title: 'Address',
          description: 'Where the holder lives',
          properties: { locality: { type: 'string' }, postal_code: { type: 'string' } },
          required: ['locality'],
          additionalProperties: false,
        },
        place_of_birth: {
          type: 'object',
          properties: { country: { type: 'string' } },
          required: ['country'],
          additionalProperties: false,
        },
        nationalities: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3 },
        phones: { type: 'array', prefixItems: [{ type: 'string' }] },
        preferences: { type: 'object' },
      },
      // mandatory claims are required with the objects their own path passes through; a mandatory
      // child is required within its parent only (address stays optional, nationalities too)
      required: ['given_name', 'family_name', 'birthdate', 'place_of_birth'],
      additionalProperties: false,
    });
  });

  it('keys mdoc claims by namespace, one entry per claim and namespace', () => {
    const model = mdoc([
      { path: ['given_name'], type: 'string', namespace: 'org.iso.18013.5.1', mandatory: true },
      { path: ['portrait'], type: 'image', namespace: 'org.iso.18013.5.1' },
      { path: ['resident_city'], type: 'string', namespace: 'org.iso.18013.5.1.aamva' },
      {
        path: ['driving_privileges'],
        type: 'array',
        namespace: 'org.iso.18013.5.1',
        children: [{ path: [null, 'vehicle_category_code'], type: 'string', mandatory: true }],
      },
    ]);
    expect(fieldErrors(model)).toEqual([]);
    expect(claimsSchema(model)).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        'org.iso.18013.5.1': {
          type: 'object',
          properties: {
            given_name: { type: 'string' },
            portrait: { type: 'string', pattern: IMAGE_PATTERN },
            driving_privileges: {
              type: 'array',
              items: {
                type: 'object',
                properties: { vehicle_category_code: { type: 'string' } },
                required: ['vehicle_category_code'],
                additionalProperties: false,
              },
              minItems: 1,
            },
          },
          required: ['given_name'],
          additionalProperties: false,
        },
        'org.iso.18013.5.1.aamva': {
          type: 'object',
          properties: { resident_city: { type: 'string' } },
          additionalProperties: false,
        },
      },
      required: ['org.iso.18013.5.1'],
      additionalProperties: false,
    });
  });

  it('returns a copy: changing it does not change what validation uses', () => {
    const schema = claimsSchema(PID);
    schema.properties = {};
    expect(validateClaims(PID, VALID)).toEqual([]);
  });
});

describe('validateClaims', () => {
  it('accepts claims that fit', () => {
    expect(validateClaims(PID, VALID)).toEqual([]);
  });

  it('names every problem by its claim path', () => {
    const claims = {
      ...VALID,
      given_name: 42,
      family_name: '',
      birthdate: '1964-02-30',
      age_in_years: 12.5,
      height: 0,
      is_over_18: 'yes',
      issued_at_office: '2024-05-01 12:00',
      picture: 'not-an-image',
      sex: 3,
      document_number: 't22000129',
      address: { postal_code: 51147, country: 'DE' },
      place_of_birth: undefined,
      nationalities: ['DE', 7, 'FR', 'NL'],
      phones: [1],
      surprise: true,
    };
    expect(validateClaims(PID, claims)).toEqual([
      { path: ['place_of_birth'], message: 'is required' },
      { path: ['given_name'], message: 'must be a string' },
      { path: ['family_name'], message: 'must be at least 1 characters long' },
      { path: ['birthdate'], message: 'must be a date (YYYY-MM-DD)' },
      { path: ['age_in_years'], message: 'must be an integer' },
      { path: ['height'], message: 'must be more than 0' },
      { path: ['is_over_18'], message: 'must be a boolean' },
      { path: ['issued_at_office'], message: 'must be a date-time (RFC 3339, e.g. 2024-05-01T12:00:00Z)' },
      { path: ['picture'], message: 'must be an image as a data: URL (data:image/...;base64,...)' },
      { path: ['sex'], message: 'must be one of 0, 1, 2, 9' },
      { path: ['document_number'], message: 'must match ^[A-Z0-9]{9}$' },
      { path: ['address', 'locality'], message: 'is required' },
      { path: ['address', 'postal_code'], message: 'must be a string' },
      { path: ['address', 'country'], message: 'is not a claim of this credential configuration' },
      { path: ['nationalities'], message: 'must have at most 3 element(s)' },
      { path: ['nationalities', 1], message: 'must be a string' },
      { path: ['phones', 0], message: 'must be a string' },
      { path: ['surprise'], message: 'is not a claim of this credential configuration' },
    ]);
  });

  it('checks array bounds, mandatory elements and the claims object itself', () => {
    expect(validateClaims(PID, { ...VALID, nationalities: [] })).toEqual([
      { path: ['nationalities'], message: 'must have at least 1 element(s)' },
    ]);
    expect(validateClaims(PID, ['not', 'an', 'object'])).toEqual([{ path: [], message: 'must be an object' }]);
    expect(validateClaims(PID, null)).toEqual([{ path: [], message: 'must be an object' }]);
  });

  it('counts string length in characters and accepts valid edge dates', () => {
    const model = sdJwt([
      { path: ['name'], type: 'string', constraints: { maxLength: 2 } },
      { path: ['day'], type: 'date' },
      { path: ['at'], type: 'datetime' },
    ]);
    expect(validateClaims(model, { name: '😀😀', day: '2024-02-29', at: '1990-12-31T23:59:60Z' })).toEqual([]);
    expect(validateClaims(model, { name: '😀😀😀', day: '2023-02-29', at: '2024-13-01T00:00:00Z' })).toEqual([
      { path: ['name'], message: 'must be at most 2 characters long' },
      { path: ['day'], message: 'must be a date (YYYY-MM-DD)' },
      { path: ['at'], message: 'must be a date-time (RFC 3339, e.g. 2024-05-01T12:00:00Z)' },
    ]);
  });

  it('validates mdoc claims per namespace', () => {
    const model = mdoc([
      { path: ['given_name'], type: 'string', namespace: 'org.iso.18013.5.1', mandatory: true },
      { path: ['age_over_18'], type: 'boolean', namespace: 'org.iso.18013.5.1' },
    ]);
    expect(validateClaims(model, { 'org.iso.18013.5.1': { given_name: 'Erika', age_over_18: true } })).toEqual([]);
    expect(validateClaims(model, { given_name: 'Erika' })).toEqual([
      { path: ['org.iso.18013.5.1'], message: 'is required' },
      { path: ['given_name'], message: 'is not a claim of this credential configuration' },
    ]);
    expect(validateClaims(model, { 'org.iso.18013.5.1': { age_over_18: 1 } })).toEqual([
      { path: ['org.iso.18013.5.1', 'given_name'], message: 'is required' },
      { path: ['org.iso.18013.5.1', 'age_over_18'], message: 'must be a boolean' },
    ]);
  });
});

describe('defaultClaims', () => {
  it('builds the claims from default values, nested by path, children included', () => {
    expect(defaultClaims(PID)).toEqual({
      given_name: 'ERIKA',
      birthdate: '1964-08-12',
      address: { locality: 'KÖLN', postal_code: '51147' },
      place_of_birth: { country: 'DE' },
      phones: ['+49 1'],
    });
  });

  it("lets a child's default win over its parent's, whatever the order, and never shares values with the configuration", () => {
    const model = sdJwt([
      { path: ['address', 'locality'], type: 'string', defaultValue: 'BERLIN' },
      { path: ['address'], type: 'object', defaultValue: { locality: 'KÖLN', street: 'HEIDESTRASSE 17' } },
      { path: ['tags'], type: 'array', defaultValue: ['a'] },
      { path: ['nothing'], type: 'string', defaultValue: null },
      { path: ['address', 'street'], type: 'string' },
    ]);
    expect(fieldErrors(model)).toEqual([]);
    const claims = defaultClaims(model);
    expect(claims).toEqual({ address: { locality: 'BERLIN', street: 'HEIDESTRASSE 17' }, tags: ['a'] });
    (claims.tags as string[]).push('b');
    expect(model.fields[2]?.defaultValue).toEqual(['a']);
    expect(model.fields[1]?.defaultValue).toEqual({ locality: 'KÖLN', street: 'HEIDESTRASSE 17' });
  });

  it('keys mdoc defaults by namespace', () => {
    const model = mdoc([
      { path: ['given_name'], type: 'string', namespace: 'org.iso.18013.5.1', defaultValue: 'ERIKA' },
      { path: ['resident_city'], type: 'string', namespace: 'org.iso.18013.5.1.aamva', defaultValue: 'KÖLN' },
    ]);
    expect(defaultClaims(model)).toEqual({
      'org.iso.18013.5.1': { given_name: 'ERIKA' },
      'org.iso.18013.5.1.aamva': { resident_city: 'KÖLN' },
    });
  });
});

describe('fieldErrors', () => {
  const cases: [string, FieldModel, { field: string; message: string }[]][] = [
    [
      'a claim nested below a string',
      sdJwt([
        { path: ['address'], type: 'string' },
        { path: ['address', 'locality'], type: 'string' },
      ]),
      [{ field: 'fields.1.path', message: "address is string (fields.0), so it cannot contain 'locality'" }],
    ],
    [
      'a string declared where claims are nested',
      sdJwt([
        { path: ['address', 'locality'], type: 'string' },
        { path: ['address'], type: 'string' },
      ]),
      [{ field: 'fields.1.type', message: 'is string, but fields.0 nests claims below address' }],
    ],
    [
      'the same claim twice',
      sdJwt([
        { path: ['a'], type: 'string' },
        { path: ['b'], type: 'object', children: [] },
        { path: ['a'], type: 'number' },
      ]),
      [{ field: 'fields.2.path', message: 'declares the same claim as fields.0' }],
    ],
    [
      'an index below an object',
      sdJwt([
        { path: ['a'], type: 'object' },
        { path: ['a', 0], type: 'string' },
      ]),
      [{ field: 'fields.1.path', message: 'a is object (fields.0), so it cannot contain index 0' }],
    ],
    [
      'index and every element mixed',
      sdJwt([
        { path: ['a', 0], type: 'string' },
        { path: ['a', null], type: 'string' },
      ]),
      [{ field: 'fields.1.path', message: 'a is addressed both by index and by every element (null); use one of them' }],
    ],
    [
      'children of a string',
      sdJwt([{ path: ['a'], type: 'string', children: [{ path: ['b'], type: 'string' }] }]),
      [{ field: 'fields.0.children', message: 'only object and array fields have children; this field is string' }],
    ],
    [
      'a path starting with an index',
      sdJwt([{ path: [0], type: 'string' }]),
      [{ field: 'fields.0.path', message: 'must start with a claim name (a string): the claims are an object' }],
    ],
    [
      'constraints of another type, a bad pattern, enum values of another type, min above max',
      sdJwt([
        { path: ['a'], type: 'number', constraints: { minLength: 1 } },
        { path: ['b'], type: 'string', constraints: { pattern: '([a-z' } },
        { path: ['c'], type: 'integer', constraints: { enum: [1, 'two', 3.5] } },
        { path: ['d'], type: 'string', constraints: { minLength: 5, maxLength: 2 } },
        { path: ['e'], type: 'date', constraints: { enum: ['2024-01-01', '2024-02-30'] } },
      ]),
      [
        { field: 'fields.0.constraints.minLength', message: 'does not apply to number fields' },
        { field: 'fields.1.constraints.pattern', message: 'is not a valid regular expression: missing closing ]: `[a-z`' },
        { field: 'fields.2.constraints.enum', message: 'every value must be an integer; not "two", 3.5' },
        { field: 'fields.3.constraints.maxLength', message: 'must not be below minLength (5)' },
        { field: 'fields.4.constraints.enum', message: 'every value must be a date; not "2024-02-30"' },
      ],
    ],
    [
      'default values that do not fit their field',
      sdJwt([
        { path: ['a'], type: 'integer', defaultValue: 'one' },
        { path: ['b'], type: 'string', constraints: { maxLength: 2 }, defaultValue: 'abc' },
        { path: ['c'], type: 'object', children: [{ path: ['d'], type: 'boolean' }], defaultValue: { d: 'no', e: 1 } },
        { path: ['f'], type: 'array', children: [{ path: [null], type: 'string', defaultValue: 'x' }] },
      ]),
      [
        { field: 'fields.0.defaultValue', message: 'must be an integer' },
        { field: 'fields.1.defaultValue', message: 'must be at most 2 characters long' },
        { field: 'fields.2.defaultValue', message: 'd must be a boolean; e is not a claim of this credential configuration' },
        { field: 'fields.3.children.0.defaultValue', message: 'is not allowed on a path that selects every element (null)' },
      ],
    ],
    [
      'claims the service sets, and SD-JWT reserved names',
      sdJwt([
        { path: ['iss'], type: 'string' },
        { path: ['cnf'], type: 'object' },
        { path: ['a', '_sd'], type: 'string' },
      ]),
      [
        { field: 'fields.0.path', message: "'iss' is set by the service in every SD-JWT VC" },
        { field: 'fields.1.path', message: "'cnf' is set by the service in every SD-JWT VC" },
        { field: 'fields.2.path', message: "'_sd' is reserved by SD-JWT" },
      ],
    ],
    [
      'a namespace on an SD-JWT field',
      sdJwt([{ path: ['a'], type: 'object', namespace: 'x', children: [{ path: ['b'], type: 'string', namespace: 'x' }] }]),
      [
        { field: 'fields.0.namespace', message: 'is for mso_mdoc only; dc+sd-jwt claims have no namespaces' },
        { field: 'fields.0.children.0.namespace', message: 'is for mso_mdoc only' },
      ],
    ],
    [
      'mdoc fields without a namespace, or a child in another one',
      mdoc([
        { path: ['a'], type: 'string' },
        { path: ['b'], type: 'object', namespace: 'n1', children: [{ path: ['c'], type: 'string', namespace: 'n2' }] },
        { path: ['d'], type: 'string', namespace: 'n1' },
      ]),
      [
        { field: 'fields.0.namespace', message: 'is required on every field when config.format is mso_mdoc' },
        { field: 'fields.1.children.0.namespace', message: "must be absent or the parent's namespace 'n1'" },
      ],
    ],
  ];

  it.each(cases)('reports %s', (_name, model, errors) => {
    expect(fieldErrors(model)).toEqual(errors);
  });

  it('accepts the same claim name in two mdoc namespaces', () => {
    const model = mdoc([
      { path: ['a'], type: 'string', namespace: 'n1' },
      { path: ['a'], type: 'string', namespace: 'n2' },
    ]);
    expect(fieldErrors(model)).toEqual([]);
  });
});
