// Interactive authorization (OpenID4VCI 1.1 draft): its two endpoints (faces.ts), the web step and the hook that
// keeps the plain authorization endpoint from granting configurations with iaeActions.
import type { CredentialConfigService } from '../../credential-configs/service.js';
import type { Executor } from '../../platform/db/values.js';
import type { App } from '../../platform/http/types.js';
import type { SessionService } from '../../sessions/service.js';
import type { AuthorizeUser } from '../authorization/authorize.js';
import type { PushedAuthorizationEndpoint } from '../authorization/par.js';
import type { WalletAttestations } from '../authorization/wallet-attestation.js';
import type { IssuerDirectory } from '../issuers.js';
import { InteractiveActions } from './actions.js';
import { InteractiveAuthorizationEndpoint } from './endpoint.js';
import { type InteractivePresentations, InteractiveProgress } from './progress.js';
import { interactiveAuthorizationRoutes } from './routes.js';
import { WebSteps } from './web-step.js';

export type { InteractivePresentations };

export interface InteractiveAuthorizationNeeds {
  db: Executor;
  publicUrl: string;
  issuers: IssuerDirectory;
  sessions: SessionService;
  configs: CredentialConfigService;
  par: PushedAuthorizationEndpoint;
  attestations: WalletAttestations;
  presentations: InteractivePresentations;
}

export function createInteractiveAuthorization(needs: InteractiveAuthorizationNeeds) {
  const { issuers, sessions } = needs;
  const actions = new InteractiveActions(needs.configs);
  const progress = new InteractiveProgress(needs.db, sessions, needs.presentations);
  const endpoint = new InteractiveAuthorizationEndpoint(
    issuers,
    sessions,
    needs.par,
    needs.attestations,
    actions,
    progress,
    needs.presentations,
  );
  const web = new WebSteps(issuers, sessions, actions, progress);
  return {
    /** Wraps the authorization endpoint's decision: web steps continue there, configurations with iaeActions are refused. */
    authorizeUser: (next: AuthorizeUser): AuthorizeUser => web.authorizeUser(next),
    routes(app: App) {
      interactiveAuthorizationRoutes(app, needs.publicUrl, endpoint, web);
    },
  };
}
