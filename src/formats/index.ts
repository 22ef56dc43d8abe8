// The credential formats the service issues and verifies, by format identifier. Adding a format is
// its folder and one line here.
import { msoMdoc } from './mso-mdoc/index.js';
import { sdJwtVc } from './sd-jwt-vc/index.js';
import type { CredentialFormat } from './types.js';
import { w3cVc } from './w3c-vc/index.js';

export type {
  ClaimsLayout,
  ConfiguredCredential,
  CredentialFormat,
  CredentialTypeNames,
  FormatField,
  HaipProfile,
  IssueRequest,
  IssuerMetadataPart,
  VerifiedForDcql,
  Version4Mapping,
} from './types.js';

const REGISTERED = [sdJwtVc, msoMdoc, w3cVc] as const;

/** A credential one presentation proves, as its format read and verified it: what the registered verifiers return. */
export type VerifiedPresentation = Awaited<ReturnType<(typeof REGISTERED)[number]['verify']>>[number];

/** A format identifier of the registry. */
export type FormatId = (typeof REGISTERED)[number]['id'];
/** Every format identifier, in the order documents list them: for the schemas that admit a format. */
export const FORMAT_IDS = REGISTERED.map((format) => format.id) as [FormatId, ...FormatId[]];

// A Map, not an object: a format such as `constructor` must not find an inherited member.
const FORMATS: ReadonlyMap<string, CredentialFormat<VerifiedPresentation>> = new Map(REGISTERED.map((format) => [format.id, format]));

/** The format with this identifier; undefined for one the service does not know. */
export function formatOf(id: string): CredentialFormat<VerifiedPresentation> | undefined {
  return FORMATS.get(id);
}

/** Every format, in the order documents list them (vp_formats_supported). */
export function allFormats(): CredentialFormat<VerifiedPresentation>[] {
  return [...FORMATS.values()];
}

/** The identifiers of the formats that have a feature, in registry order: for messages that name them. */
export function formatIdsWith(feature: (format: CredentialFormat<VerifiedPresentation>) => unknown): string[] {
  return allFormats()
    .filter((format) => feature(format))
    .map((format) => format.id);
}

/** A credential configuration's format. The configuration schema admits only these: one outside them is a defect. */
export function formatOfConfiguration(config: { id: string; config: { format: string } }): CredentialFormat<VerifiedPresentation> {
  const format = FORMATS.get(config.config.format);
  if (!format) throw new Error(`credential configuration ${config.id} has the unknown format ${config.config.format}`);
  return format;
}

/** The format with this identifier, for an identifier a schema has already admitted. */
export function knownFormat(id: string): CredentialFormat<VerifiedPresentation> {
  const format = FORMATS.get(id);
  if (!format) throw new Error(`unknown credential format ${id}`);
  return format;
}
