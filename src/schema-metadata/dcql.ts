// The DCQL query that asks for every claim an attestation's schemas name: one credential query per
// format, its meta as OpenID4VP 1.0 defines it for the format (src/formats/ reads each schema).
import type { SchemaFormat } from '../credential-configs/schema-meta.js';
import { knownFormat } from '../formats/index.js';
import type { SchemaClaim } from '../formats/schema-claims.js';

export interface FormatCredential {
  format: SchemaFormat;
  /** The credential type the schema metadata names for the format (a vct, a document type). */
  type: string;
  claims: SchemaClaim[];
}

/** One DCQL credential query per format, its meta as OpenID4VP 1.0 defines it for the format. */
export function dcqlQueryOf(credentials: FormatCredential[]): { credentials: Record<string, unknown>[] } {
  return {
    credentials: credentials.map((credential) => {
      const format = knownFormat(credential.format);
      return {
        id: format.dcqlQueryId,
        format: credential.format,
        meta: format.type.dcqlMeta(credential.type),
        ...(credential.claims.length && { claims: credential.claims.map((claim) => ({ path: claim.path })) }),
      };
    }),
  };
}
