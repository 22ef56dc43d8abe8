// From the JSON Schema of an attestation's claims to the claims a DCQL query asks for: each format
// reads its schema's shape (sd-jwt-vc/, mso-mdoc/), with the walk's common parts here. Schemas come
// from outside: depth and count are bounded.
import { isJsonObject } from '../platform/json.js';

export type ClaimPath = (string | null)[];
export interface SchemaClaim {
  path: ClaimPath;
  /** Required by the schema at every level of its path. */
  mandatory: boolean;
}

export type SchemaNode = Record<string, unknown>;

export const MAX_SCHEMA_DEPTH = 8;
const MAX_CLAIMS = 256;
const MAX_KEY = 256;

/** [key, schema, required] of an object schema's properties. */
export function propertiesOf(node: SchemaNode): [string, unknown, boolean][] {
  if (!isJsonObject(node.properties)) return [];
  const required = Array.isArray(node.required) ? node.required : [];
  return Object.entries(node.properties).map(([key, child]) => {
    if (key.length > MAX_KEY) throw new Error(`a property name is longer than ${MAX_KEY} characters`);
    return [key, child, required.includes(key)];
  });
}

export function addClaim(claims: SchemaClaim[], claim: SchemaClaim) {
  if (claims.length === MAX_CLAIMS) throw new Error(`the schema names more than ${MAX_CLAIMS} claims`);
  claims.push(claim);
}
