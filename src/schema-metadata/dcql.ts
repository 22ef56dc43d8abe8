// From the JSON Schema of an attestation's claims to the claims a DCQL query asks for: every leaf
// the schema names becomes one claim path (an array's elements are selected by null). For mso_mdoc
// the schema's first level are the namespaces and the second their data elements, as DCQL's mdoc
// paths are [namespace, element]. Schemas come from outside: depth and count are bounded.

import type { SchemaFormat } from '../credential-configs/schema-meta.js';
import { isJsonObject } from '../platform/json.js';

export type ClaimPath = (string | null)[];
export interface SchemaClaim {
  path: ClaimPath;
  /** Required by the schema at every level of its path. */
  mandatory: boolean;
}
export interface FormatCredential {
  format: SchemaFormat;
  vct?: string;
  doctype?: string;
  claims: SchemaClaim[];
}

const MAX_DEPTH = 8;
const MAX_CLAIMS = 256;
const MAX_KEY = 256;

type Node = Record<string, unknown>;

/** The claim paths of a JSON Schema of SD-JWT VC claims; throws a reason when the schema is unusable. */
export function sdJwtClaims(schema: Node): SchemaClaim[] {
  const claims: SchemaClaim[] = [];
  walk(schema, [], true, claims, 0);
  return claims;
}

/** [namespace, element] for each data element of each namespace. */
export function mdocClaims(schema: Node): SchemaClaim[] {
  const claims: SchemaClaim[] = [];
  for (const [namespace, nsSchema, nsRequired] of propertiesOf(schema)) {
    for (const [element, , required] of isJsonObject(nsSchema) ? propertiesOf(nsSchema) : []) {
      add(claims, { path: [namespace, element], mandatory: nsRequired && required });
    }
  }
  return claims;
}

function walk(node: Node, path: ClaimPath, mandatory: boolean, claims: SchemaClaim[], depth: number) {
  if (depth > MAX_DEPTH) throw new Error(`the schema nests deeper than ${MAX_DEPTH} levels`);
  const properties = propertiesOf(node);
  if (properties.length) {
    for (const [key, child, required] of properties)
      walk(isJsonObject(child) ? child : {}, [...path, key], mandatory && required, claims, depth + 1);
    return;
  }
  if (isJsonObject(node.items) && propertiesOf(node.items).length) {
    walk(node.items, [...path, null], false, claims, depth + 1);
    return;
  }
  if (path.length) add(claims, { path, mandatory });
}

/** [key, schema, required] of an object schema's properties. */
function propertiesOf(node: Node): [string, unknown, boolean][] {
  if (!isJsonObject(node.properties)) return [];
  const required = Array.isArray(node.required) ? node.required : [];
  return Object.entries(node.properties).map(([key, child]) => {
    if (key.length > MAX_KEY) throw new Error(`a property name is longer than ${MAX_KEY} characters`);
    return [key, child, required.includes(key)];
  });
}

function add(claims: SchemaClaim[], claim: SchemaClaim) {
  if (claims.length === MAX_CLAIMS) throw new Error(`the schema names more than ${MAX_CLAIMS} claims`);
  claims.push(claim);
}

/** One DCQL credential query per format, its meta as OpenID4VP 1.0 defines it for the format. */
export function dcqlQueryOf(credentials: FormatCredential[]): { credentials: Record<string, unknown>[] } {
  return {
    credentials: credentials.map((credential) => ({
      id: credential.format === 'mso_mdoc' ? 'mso_mdoc' : 'dc_sd_jwt',
      format: credential.format,
      meta: credential.format === 'mso_mdoc' ? { doctype_value: credential.doctype } : { vct_values: [credential.vct] },
      ...(credential.claims.length && { claims: credential.claims.map((claim) => ({ path: claim.path })) }),
    })),
  };
}
