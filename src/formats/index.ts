// The credential formats the service issues and verifies, by format identifier. Adding a format is
// its folder and one line here.
import { msoMdoc } from './mso-mdoc/index.js';
import { sdJwtVc } from './sd-jwt-vc/index.js';
import type { CredentialFormat } from './types.js';

export type { CredentialFormat, IssueRequest, VerifiedPresentation } from './types.js';

// A Map, not an object: a format such as `constructor` must not find an inherited member.
const FORMATS: ReadonlyMap<string, CredentialFormat> = new Map([sdJwtVc, msoMdoc].map((format) => [format.id, format]));

/** The format with this identifier; undefined for one the service does not know. */
export function formatOf(id: string): CredentialFormat | undefined {
  return FORMATS.get(id);
}
