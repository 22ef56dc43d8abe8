// The issuance feature: what it needs from the rest of the service, and the services and routes it
// builds from that. One folder per protocol concept (credential-offer, authorization, token, nonce,
// credential-request, deferred, notification, metadata, formats), each with its schemas, logic,
// queries and routes. Imports run downward only: what several concepts share lies at the ground of
// this folder (handles.ts, grants.ts, urls.ts, claim-sources.ts, client-request.ts, session.ts,
// issuers.ts, settings/), and access/ holds the resource access the credential, deferred credential
// and notification endpoints check, below the token endpoint that issues it.

import type { RawBuilder } from 'kysely';
import type { AuditService } from '../audit/service.js';
import type { CredentialConfigService } from '../credential-configs/service.js';
import type { HttpEndpointService } from '../http-endpoints/service.js';
import type { KeyChainService } from '../key-chains/service.js';
import type { SigningService } from '../key-chains/signing.js';
import type { Clock } from '../platform/clock.js';
import { createSealer, type Sealer } from '../platform/crypto/sealed.js';
import type { Executor } from '../platform/db/values.js';
import type { EventBus } from '../platform/events/bus.js';
import type { App } from '../platform/http/types.js';
import type { Metrics } from '../platform/observability/metrics.js';
import type { OutboundClient } from '../platform/outbound/client.js';
import type { SessionService } from '../sessions/service.js';
import type { TrustService } from '../trust/index.js';
import { IssuanceTokens } from './access/access-tokens.js';
import { DpopNonces, DpopProofs } from './access/dpop.js';
import { ExternalAccessTokens } from './access/external-access-tokens.js';
import { WalletAccessCheck } from './access/wallet-access.js';
import { AuthorizationEndpoint, userOfTheOffer } from './authorization/authorize.js';
import { PushedAuthorizationEndpoint } from './authorization/par.js';
import { authorizationRoutes } from './authorization/routes.js';
import { WalletAttestations } from './authorization/wallet-attestation.js';
import { WalletInitiatedLimit, type WalletInitiatedLimits } from './authorization/wallet-initiated-limit.js';
import { createChainedAuthorization } from './chained-as/index.js';
import { offerRoutes } from './credential-offer/routes.js';
import { OfferService } from './credential-offer/service.js';
import { ClaimSources } from './credential-request/claims.js';
import { CredentialEncryption } from './credential-request/encryption.js';
import { CredentialEndpoint } from './credential-request/endpoint.js';
import { CredentialMinter, type StatusEntryAllocator } from './credential-request/minter.js';
import { credentialRoutes } from './credential-request/routes.js';
import { deferredRoutes } from './deferred/routes.js';
import { DeferredService } from './deferred/service.js';
import { createInteractiveAuthorization, type InteractivePresentations } from './interactive-authorization/index.js';
import { announceIssuerChange, IssuerDirectory, type WalletProviders } from './issuers.js';
import { metadataRoutes } from './metadata/routes.js';
import { nonceRoutes } from './nonce/routes.js';
import { NonceStore } from './nonce/store.js';
import { NotificationEndpoint } from './notification/endpoint.js';
import { notificationRoutes } from './notification/routes.js';
import { issuerSettingsRoutes } from './settings/routes.js';
import { IssuerSettingsService } from './settings/service.js';
import { AuthorizationCodeGrant } from './token/authorization-code.js';
import { TokenEndpoint } from './token/endpoint.js';
import { PreAuthorizedCodeGrant } from './token/pre-authorized-code.js';
import { RefreshTokenGrant } from './token/refresh-token.js';
import { tokenRoutes } from './token/routes.js';
import { SessionTokens } from './token/session-tokens.js';
import { UpstreamProviders } from './upstream-providers.js';
import { IssuanceWebhooks } from './webhooks.js';

export interface IssuanceNeeds {
  db: Executor;
  /** Carries the issuers' change events to every instance. */
  bus: EventBus;
  publicUrl: string;
  masterSecret: string;
  audit: AuditService;
  sessions: SessionService;
  credentialConfigs: CredentialConfigService;
  attributeProviders: HttpEndpointService;
  webhookEndpoints: HttpEndpointService;
  signing: SigningService;
  keyChains: KeyChainService;
  /** Encrypts deferred transactions' holder keys and credentials. */
  sealer: Sealer;
  tenantExists(tenantId: string): Promise<boolean>;
  metrics: Pick<Metrics, 'credentialsIssued'>;
  /** Calls attribute providers and webhooks, within the outbound address policy. */
  outbound: OutboundClient;
  /** Status list entries for credentials of configurations with statusManagement. */
  statusEntries: StatusEntryAllocator;
  /** How many wallet-initiated authorization requests an address, and an issuer, take per window (WALLET_INITIATED_*). */
  walletInitiatedLimits: WalletInitiatedLimits;
  /** SQL over a session row (`sessions`) that holds while none of its credentials is revoked or suspended (a refresh needs it). */
  sessionCredentialsValid: RawBuilder<boolean>;
  /** OpenID4VP requests and their verification, for the presentation steps of interactive authorization. */
  presentations: InteractivePresentations;
  /** The verifier's openid_credential_verifier metadata for the entity configuration; undefined when the tenant does not verify. */
  verifierMetadata?: (tenantId: string) => Promise<Record<string, unknown> | undefined>;
  /** Whether the tenant issues OpenID Federation trust marks (its entity configuration names the trust mark endpoints). */
  trustMarkIssuer?: (tenantId: string) => Promise<boolean>;
  /** The wallet providers a tenant trusts, those of its issuer settings and of its trust lists (the trust service). */
  walletProviders: WalletProviders;
  /** The trust service: the keys of external authorization servers that are federation entities. */
  trust?: Pick<TrustService, 'authorizationServerKeys'>;
  /** What time it is for the tokens, nonces, proofs and attestations (the sessions have their own copy). */
  clock: Clock;
}

export function createIssuance(needs: IssuanceNeeds) {
  const { db, sessions, credentialConfigs: configs, sealer, publicUrl } = needs;
  const settingsSealer = createSealer(needs.masterSecret, 'issuer-settings-secrets');
  const settings = new IssuerSettingsService(
    db,
    needs.audit,
    settingsSealer,
    needs.clock,
    (ctx, tenantId, trx) => needs.keyChains.ensureDefault(ctx, tenantId, 'federation', trx),
    (trx, tenantId) => announceIssuerChange(needs.bus, trx, tenantId),
  );
  const issuers = new IssuerDirectory(publicUrl, needs.tenantExists, settings, needs.walletProviders, needs.bus);
  const nonces = new NonceStore(db, needs.clock);
  const tokens = new IssuanceTokens(needs.masterSecret, needs.clock);
  const dpop = new DpopProofs(nonces, new DpopNonces(needs.masterSecret, needs.clock), needs.clock);
  const upstream = new UpstreamProviders(needs.outbound);
  const access = new WalletAccessCheck(
    issuers,
    tokens,
    dpop,
    sessions,
    new ExternalAccessTokens(db, upstream, configs, sessions, needs.trust),
  );
  const minter = new CredentialMinter(needs.signing, needs.metrics, needs.clock, needs.statusEntries);
  const claims = new ClaimSources(needs.attributeProviders, needs.outbound, sessions);
  const offers = new OfferService(db, issuers, sessions, configs, needs.attributeProviders, needs.webhookEndpoints, needs.outbound);
  const encryption = new CredentialEncryption(needs.keyChains, needs.clock);
  const deferred = new DeferredService(db, issuers, access, configs, sessions, minter, sealer, encryption);
  const sessionTokens = new SessionTokens(sessions, tokens);
  const attestations = new WalletAttestations(issuers, nonces, needs.clock);
  const walletInitiated = new WalletInitiatedLimit(db, needs.walletInitiatedLimits, needs.clock);
  const grants = {
    preAuthorizedCode: new PreAuthorizedCodeGrant(sessions, sessionTokens),
    authorizationCode: new AuthorizationCodeGrant(sessions, sessionTokens),
    refreshToken: new RefreshTokenGrant(sessions, sessionTokens, needs.sessionCredentialsValid),
  };
  const chained = createChainedAuthorization({
    db,
    publicUrl,
    issuers,
    sessions,
    configs,
    dpop,
    attestations,
    sessionTokens,
    grants,
    settingsSealer,
    upstream,
    walletInitiated,
  });
  const par = new PushedAuthorizationEndpoint(db, issuers, sessions, configs, dpop, attestations, walletInitiated);
  const interactive = createInteractiveAuthorization({
    db,
    publicUrl,
    issuers,
    sessions,
    configs,
    par,
    attestations,
    presentations: needs.presentations,
  });
  const webhooks = new IssuanceWebhooks(needs.webhookEndpoints);

  return {
    nonces,
    /**
     * The tenant is being deleted in `db`'s transaction: its issuer is forgotten here at once, and on
     * every instance (this one again) when the deletion commits.
     */
    tenantRemoved(db: Executor, tenantId: string): Promise<void> {
      issuers.forget(tenantId);
      return announceIssuerChange(needs.bus, db, tenantId);
    },
    /** Renders issuance.status events for the webhook worker. */
    webhooks,
    /** The bound on wallet-initiated requests, whose lapsed windows a scheduled job drops. */
    walletInitiated,
    settings,
    /** Each tenant's issuer (its URLs and settings), for the federation endpoints served beside its metadata. */
    issuers,
    routes(app: App) {
      issuerSettingsRoutes(app, settings);
      offerRoutes(app, offers);
      metadataRoutes(app, {
        issuers,
        settings,
        configs,
        keyChains: needs.keyChains,
        signing: needs.signing,
        encryption,
        clock: needs.clock,
        ...(needs.verifierMetadata && { verifierMetadata: needs.verifierMetadata }),
        ...(needs.trustMarkIssuer && { trustMarkIssuer: needs.trustMarkIssuer }),
      });
      authorizationRoutes(
        app,
        publicUrl,
        par,
        new AuthorizationEndpoint(issuers, sessions, interactive.authorizeUser(userOfTheOffer)),
        attestations,
      );
      interactive.routes(app);
      tokenRoutes(app, publicUrl, new TokenEndpoint(issuers, dpop, grants, attestations));
      chained.routes(app);
      nonceRoutes(app, issuers, nonces);
      credentialRoutes(app, publicUrl, new CredentialEndpoint(db, access, configs, sessions, nonces, claims, minter, sealer, encryption));
      deferredRoutes(app, publicUrl, deferred);
      notificationRoutes(app, publicUrl, new NotificationEndpoint(db, access, sessions));
    },
  };
}
