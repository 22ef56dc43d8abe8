// The verification feature: what it needs from the rest of the service, and the services and routes
// it builds from that. One folder per protocol concept (presentation-request, request-object,
// response, formats, dcql, status), each with its schemas, logic and routes.
import type { SigningService } from '../key-chains/signing.js';
import type { Clock } from '../platform/clock.js';
import type { Executor } from '../platform/db/values.js';
import type { App } from '../platform/http/types.js';
import type { OutboundClient } from '../platform/outbound/client.js';
import type { UrlReader } from '../platform/outbound/own-urls.js';
import type { SessionService } from '../sessions/service.js';
import type { FetchedStatusList, StampedCache } from '../status-lists/cache.js';
import { createAnnexC } from './annex-c/index.js';
import { EmbeddedPresentations } from './embedded/presentations.js';
import { VerifierFederation, type VerifierFederationNeeds, verifierMetadata } from './federation.js';
import type { PresentationConfigurations, RegistrationCertificateSource, TrustAnchors } from './ports.js';
import { presentationRequestRoutes } from './presentation-request/routes.js';
import { PresentationOffers } from './presentation-request/service.js';
import { RequestObjects } from './request-object/endpoint.js';
import { requestObjectRoutes } from './request-object/routes.js';
import { ResponseEndpoint } from './response/endpoint.js';
import { responseRoutes } from './response/routes.js';
import { PresentationWebhooks } from './response/webhook.js';
import { presentationResultRoutes } from './result/routes.js';
import { PresentationResults } from './result/service.js';
import { StatusListChecker } from './status/checker.js';
import { TrustedAuthorities } from './trusted-authorities/index.js';

export interface VerificationNeeds {
  db: Executor;
  publicUrl: string;
  sessions: SessionService;
  configs: PresentationConfigurations;
  registrationCertificates: RegistrationCertificateSource;
  trust: TrustAnchors;
  signing: SigningService;
  /** Calls webhooks within the outbound address policy. */
  outbound: OutboundClient;
  /** Reads the status lists credentials name: this service's own in-process, other issuers' through the outbound client. */
  statusListReader: UrlReader;
  /** Where status list tokens fetched to check credentials are kept (Caches.fetchedStatusList, behind /api/cache). */
  statusListCache: StampedCache<FetchedStatusList>;
  /** The time a presentation is checked at (its credentials' expiry, validity of certificates, KB-JWT age). */
  clock: Clock;
  /** The tenant's federation settings and entity identifier (prefix openid_federation); undefined when it takes part in none. */
  federationOf: VerifierFederationNeeds['federationOf'];
  /** The tenant's name: client_name of its verifier metadata. */
  tenantName: (tenantId: string) => Promise<string>;
}

export function createVerification(needs: VerificationNeeds) {
  const { sessions, configs, outbound } = needs;
  const federation = new VerifierFederation({ federationOf: needs.federationOf, trust: needs.trust });
  const requests = new RequestObjects(sessions, configs, needs.signing, federation);
  const annexC = createAnnexC({ db: needs.db, publicUrl: needs.publicUrl, sessions, signing: needs.signing });
  const offers = new PresentationOffers(
    needs.db,
    needs.publicUrl,
    sessions,
    configs,
    needs.registrationCertificates,
    needs.signing,
    outbound,
    requests,
    federation,
    annexC.offers,
  );
  const status = new StatusListChecker({ reader: needs.statusListReader, cache: needs.statusListCache });
  const webhooks = new PresentationWebhooks(configs);
  const authorities = new TrustedAuthorities(needs.trust);
  const results = new PresentationResults(sessions, webhooks);
  const responses = new ResponseEndpoint(sessions, needs.trust, status, needs.clock, authorities);
  return {
    /** Makes presentation requests; other features add checks to it (a conformance profile). */
    presentationOffers: offers,
    /**
     * The openid_credential_verifier metadata of the tenant's entity configuration: when it verifies
     * (it has a presentation configuration), else undefined.
     */
    async verifierMetadata(tenantId: string): Promise<Record<string, unknown> | undefined> {
      if ((await configs.list(tenantId)).length === 0) return undefined;
      return verifierMetadata(await needs.tenantName(tenantId), await needs.signing.jwks(tenantId, ['access']));
    },
    /** Renders presentation.completed events for the webhook worker. */
    webhooks,
    /** Presentations carried by another protocol (OpenID4VCI interactive authorization). */
    embeddedPresentations: new EmbeddedPresentations(
      needs.publicUrl,
      configs,
      needs.registrationCertificates,
      needs.signing,
      needs.trust,
      status,
      needs.clock,
      authorities,
    ),
    routes(app: App) {
      presentationRequestRoutes(app, offers);
      requestObjectRoutes(app, requests);
      responseRoutes(app, responses);
      presentationResultRoutes(app, results);
      annexC.routes(app, responses);
    },
  };
}
