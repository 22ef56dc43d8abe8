// Assembles the verification feature from the services it works with.
import type { App } from '../platform/http/types.js';
import type { VerificationDeps } from './deps.js';
import { PresentationOffers } from './offers.js';
import { PresentationProtocol } from './protocol.js';
import { verificationRoutes } from './routes.js';
import { StatusListChecker } from './status.js';

export function createVerification(deps: VerificationDeps) {
  const offers = new PresentationOffers(deps);
  const protocol = new PresentationProtocol(
    deps,
    new StatusListChecker({ outbound: deps.outbound, ...(deps.statusListCache && { cache: deps.statusListCache }) }),
  );
  return { routes: (app: App) => verificationRoutes(app, offers, protocol) };
}
