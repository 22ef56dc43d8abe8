// The claims of a JSON Schema of mdoc claims: its first level are the namespaces and the second
// their data elements, as DCQL's mdoc paths are [namespace, element].
import { isJsonObject } from '../../platform/json.js';
import { addClaim, propertiesOf, type SchemaClaim, type SchemaNode } from '../schema-claims.js';

/** [namespace, element] for each data element of each namespace. */
export function mdocClaims(schema: SchemaNode): SchemaClaim[] {
  const claims: SchemaClaim[] = [];
  for (const [namespace, nsSchema, nsRequired] of propertiesOf(schema)) {
    for (const [element, , required] of isJsonObject(nsSchema) ? propertiesOf(nsSchema) : []) {
      addClaim(claims, { path: [namespace, element], mandatory: nsRequired && required });
    }
  }
  return claims;
}
