// One verifier per credential format; a DCQL query names the format each presentation must have.
import { lazy } from '../../platform/lazy.js';
import { PresentationRejected } from '../errors.js';
import type { PresentationContext } from './context.js';
import type { VerifiedMdoc } from './mdoc.js';
import { type VerifiedSdJwt, verifySdJwtPresentation } from './sd-jwt-vc.js';

export type VerifiedPresentation = VerifiedSdJwt | VerifiedMdoc;

const mdocVerifier = lazy(() => import('./mdoc.js'));

type FormatVerifier = (presentation: string, context: PresentationContext) => Promise<VerifiedPresentation[]>;
// A Map, not an object: a format such as `constructor` must not find an inherited member.
const VERIFIERS = new Map<string, FormatVerifier>([
  ['dc+sd-jwt', async (presentation, context) => [await verifySdJwtPresentation(presentation, context)]],
  // A DeviceResponse may hold several documents.
  ['mso_mdoc', async (presentation, context) => (await mdocVerifier()).verifyMdocPresentation(presentation, context)],
]);

/** The credentials one presentation proves, verified for `format`. */
export function verifyPresentation(format: string, presentation: string, context: PresentationContext): Promise<VerifiedPresentation[]> {
  const verify = VERIFIERS.get(format);
  if (!verify) throw new PresentationRejected(`vp_token: format ${format} cannot be verified yet`);
  return verify(presentation, context);
}
