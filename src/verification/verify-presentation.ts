// One presentation verified by the format its DCQL credential query names (src/formats/).
import { formatOf, type VerifiedPresentation } from '../formats/index.js';
import type { PresentationContext } from '../formats/presentation-context.js';
import { PresentationRejected } from './errors.js';

/** The credentials one presentation proves, verified for `format`. */
export function verifyPresentation(format: string, presentation: string, context: PresentationContext): Promise<VerifiedPresentation[]> {
  const known = formatOf(format);
  if (!known) throw new PresentationRejected(`vp_token: format ${format} cannot be verified yet`);
  return known.verify(presentation, context);
}
