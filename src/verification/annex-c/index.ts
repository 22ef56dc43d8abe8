// ISO/IEC 18013-7 Annex C: mdoc presentation over the W3C Digital Credentials API (protocol
// org-iso-mdoc). The offer side (offers.ts) is used by POST /api/verifier/offer with response_type
// iso-18013-7; the response side (response.ts) behind POST /presentations/{handle}/annex-c-response.
// Both load the mdoc and HPKE code on first use, as the other mdoc code is (platform/lazy.ts).
// Annex C stays here, not behind CredentialFormat (src/formats/): it is a presentation protocol that
// carries mdoc by nature (ISO 18013-7), not a feature another format could have.
import type { SigningService } from '../../key-chains/signing.js';
import type { RequestContext } from '../../platform/auth/principal.js';
import type { Executor } from '../../platform/db/values.js';
import type { App } from '../../platform/http/types.js';
import { lazy } from '../../platform/lazy.js';
import type { SessionService } from '../../sessions/service.js';
import type { PresentationConfiguration } from '../ports.js';
import type { ResponseEndpoint } from '../response/endpoint.js';
import type { AnnexCOfferInput, AnnexCOffers } from './offers.js';
import type { AnnexCResponseBody } from './response.js';
import { annexCRoutes } from './routes.js';

export interface AnnexCNeeds {
  db: Executor;
  publicUrl: string;
  sessions: SessionService;
  signing: SigningService;
}

/** What the presentation offers need of Annex C. */
export interface AnnexCOfferMaker {
  create(
    ctx: RequestContext,
    tenantId: string,
    input: AnnexCOfferInput,
    config: PresentationConfiguration,
  ): ReturnType<AnnexCOffers['create']>;
}

export function createAnnexC(needs: AnnexCNeeds) {
  const offers = lazy(async () => new (await import('./offers.js')).AnnexCOffers(needs.db, needs.publicUrl, needs.sessions, needs.signing));
  const offerMaker: AnnexCOfferMaker = { create: async (...args) => (await offers()).create(...args) };
  return {
    offers: offerMaker,
    /** The response endpoint; `responses` completes the sessions as for OpenID4VP. */
    routes(app: App, responses: ResponseEndpoint) {
      const annexCResponses = lazy(async () => new (await import('./response.js')).AnnexCResponses(responses));
      annexCRoutes(app, {
        respond: async (handle: string, body: AnnexCResponseBody) => (await annexCResponses()).respond(handle, body),
        browserOrigin: (handle: string) => responses.browserOrigin(handle),
      });
    },
  };
}
