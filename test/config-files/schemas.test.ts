// The JSON Schemas of the configuration files in docs/config-files/ are made from the schemas that
// check the files (and the API requests), and say where a reference may stand in for a secret.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configFileSchemas } from '../../src/config-files/json-schemas.js';
import { root } from '../support/process.js';

const schemas = configFileSchemas();

describe('docs/config-files', () => {
  it.each(Object.keys(schemas))('%s is current (npm run docs:config-files)', (name) => {
    expect(JSON.parse(readFileSync(`${root}docs/config-files/${name}`, 'utf8'))).toEqual(schemas[name]);
  });

  it('lets a reference stand where a secret belongs, and the id be given by the file name', () => {
    const client = schemas['client.schema.json'] as any;
    expect(client.properties.secret.anyOf).toContainEqual({ $ref: '#/$defs/Reference' });
    expect(client.required).toEqual(['roles', 'secret']);
    expect(client.properties.$schema).toMatchObject({ type: 'string' });
    const endpoint = schemas['webhook-endpoint.schema.json'] as any;
    const header = endpoint.properties.auth.oneOf.find((branch: any) => branch.properties.type.const === 'header');
    expect(header.properties.header.properties.value.anyOf).toContainEqual({ $ref: '#/$defs/Reference' });
    const keyChain = schemas['key-chain.schema.json'] as any;
    expect(keyChain.anyOf).toHaveLength(3);
    expect(keyChain.anyOf[0].properties.privateJwk.anyOf).toContainEqual({ $ref: '#/$defs/Reference' });
    expect(JSON.stringify(schemas['credential-config.schema.json'])).not.toContain('Reference"}');
  });
});
