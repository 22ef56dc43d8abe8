// The schema metadata payload the service signs (TS11 SchemaMeta, without iat), built from a
// SchemaMetaConfig and, where the config leaves them out, from a credential configuration: its
// format, its type (vct or docType) and the JSON Schema derived from its fields. Every mistake is
// reported with the field of the request that causes it, before anything is sent to the registrar.

import type { SchemaFormat, SchemaMetaConfig } from '../credential-configs/schema-meta.js';
import type { ClaimsSchema } from '../credential-configs/service.js';
import { knownFormat } from '../formats/index.js';
import type { FieldError } from '../platform/http/problem.js';
import type { SchemaMetaPayload } from './schemas.js';

/** What the payload needs of a credential configuration, resolved by the caller. */
export interface ConfigurationFacts {
  id: string;
  format: SchemaFormat;
  /** The vct of an SD-JWT VC configuration, the docType of an mdoc one. */
  type: string | undefined;
  claimsSchema: ClaimsSchema;
}

type SchemaEntry = SchemaMetaPayload['schemaURIs'][number];

/** The meta member TS11 gives each format: {vct} or {doctype_value}. */
function metaOf(format: SchemaFormat, type: string): Record<string, string> {
  return { [knownFormat(format).type.schemaMetaMember]: type };
}

/** Why a given meta does not name the type of its format; undefined when it does. */
function metaProblem(format: SchemaFormat, meta: Record<string, unknown>): string | undefined {
  const member = knownFormat(format).type.schemaMetaMember;
  const value = meta[member];
  return typeof value === 'string' && value.length > 0 ? undefined : `must hold ${member} (a non-empty string) for ${format}`;
}

function givenEntries(config: SchemaMetaConfig, facts: ConfigurationFacts | undefined, errors: FieldError[]): SchemaEntry[] {
  return (config.schemaURIs ?? []).flatMap((entry, i) => {
    const at = `body.config.schemaURIs.${i}`;
    const { formatIdentifier: format } = entry;
    const derived = facts?.format === format && facts.type ? metaOf(format, facts.type) : undefined;
    const meta = entry.meta ?? derived;
    const problem = meta ? metaProblem(format, meta) : `is required: no credential configuration of format ${format} gives it`;
    if (problem || !meta) {
      errors.push({ field: `${at}.meta`, message: problem ?? 'is required' });
      return [];
    }
    return [{ ...entry, meta }];
  });
}

function derivedEntry(facts: ConfigurationFacts, errors: FieldError[]): SchemaEntry[] {
  if (!facts.type) {
    const member = knownFormat(facts.format).type.configField;
    errors.push({ field: 'body.credentialConfigId', message: `credential configuration '${facts.id}' has no ${member}` });
    return [];
  }
  return [{ formatIdentifier: facts.format, schemaContent: { ...facts.claimsSchema }, meta: metaOf(facts.format, facts.type) }];
}

/**
 * The payload without id and iat, or the field errors that prevent it. Schema entries come from
 * config.schemaURIs (their missing meta from the configuration), else from the configuration alone.
 */
export function buildPayload(
  config: SchemaMetaConfig,
  facts: ConfigurationFacts | undefined,
): { payload?: Omit<SchemaMetaPayload, 'id'>; errors: FieldError[] } {
  const errors: FieldError[] = [];
  let schemaURIs: SchemaEntry[] = [];
  if (config.schemaURIs) schemaURIs = givenEntries(config, facts, errors);
  else if (facts) schemaURIs = derivedEntry(facts, errors);
  else errors.push({ field: 'body.config.schemaURIs', message: 'is required when no credentialConfigId is given' });
  if (errors.length) return { errors };
  return {
    errors,
    payload: {
      version: config.version,
      ...(config.rulebookURI && { rulebookURI: config.rulebookURI }),
      ...(config.rulebookIntegrity && { rulebookIntegrity: config.rulebookIntegrity }),
      attestationLoS: config.attestationLoS,
      bindingType: config.bindingType,
      schemaURIs,
      trustedAuthorities: (config.trustedAuthorities ?? []).map((authority) => ({ frameworkType: 'etsi_tl', ...authority })),
    },
  };
}

/** The short id the registrar keys an attestation by: the last path segment of its reserved URL. */
export function shortIdOf(attestationId: string): string {
  if (!URL.canParse(attestationId)) return attestationId;
  const segments = new URL(attestationId).pathname.split('/').filter(Boolean);
  return segments.at(-1) ?? attestationId;
}
