// The claims of a JSON Schema of SD-JWT VC claims: every leaf the schema names becomes one claim
// path (an array's elements are selected by null).
import { isJsonObject } from '../../platform/json.js';
import { addClaim, type ClaimPath, MAX_SCHEMA_DEPTH, propertiesOf, type SchemaClaim, type SchemaNode } from '../schema-claims.js';

/** The claim paths of a JSON Schema of SD-JWT VC claims; throws a reason when the schema is unusable. */
export function sdJwtClaims(schema: SchemaNode): SchemaClaim[] {
  const claims: SchemaClaim[] = [];
  walk(schema, [], true, claims, 0);
  return claims;
}

function walk(node: SchemaNode, path: ClaimPath, mandatory: boolean, claims: SchemaClaim[], depth: number) {
  if (depth > MAX_SCHEMA_DEPTH) throw new Error(`the schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
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
  if (path.length) addClaim(claims, { path, mandatory });
}
