// buildApp: the one place where the service is assembled, for production and tests alike.
import './platform/validation-messages.js';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { sql } from 'kysely';
import { AuditService } from './audit/service.js';
import { createAuth } from './auth/index.js';
import type { ClientService, SecretKeeping } from './clients/service.js';
import type { AddressedConfig, ReadyConfig } from './config.js';
import { createConfigFiles } from './config-files/index.js';
import type { ConfigFileService } from './config-files/service.js';
import { createConformance } from './conformance/index.js';
import { consoleRoutes } from './console/routes.js';
import { createCredentialConfigs } from './credential-configs/index.js';
import type { CredentialConfigService } from './credential-configs/service.js';
import { DidWebResolver } from './dids/web.js';
import { docsRoutes } from './docs/routes.js';
import { createHttpEndpoints } from './http-endpoints/index.js';
import type { HttpEndpointService } from './http-endpoints/service.js';
import { connectIdentityProvider, type IdentityProvider } from './identity-provider/provider.js';
import { createIssuance } from './issuance/index.js';
import { ownDidDocuments } from './issuance/metadata/did-document.js';
import { rateLimitCeilings, tenantRateLimits } from './issuance/settings/rate-limits.js';
import { issuerUrls, vctOf } from './issuance/urls.js';
import { createKeyChains } from './key-chains/index.js';
import type { KeyChainService } from './key-chains/service.js';
import type { SigningService } from './key-chains/signing.js';
import { migrationsFor } from './migrations/index.js';
import { type Clock, systemClock } from './platform/clock.js';
import { createSealer } from './platform/crypto/sealed.js';
import { connect, type Db } from './platform/db/connect.js';
import { migrate } from './platform/db/migrate.js';
import type { Executor } from './platform/db/values.js';
import { InProcessBus } from './platform/events/bus.js';
import { installAccessControl } from './platform/http/access.js';
import { installErrorHandling } from './platform/http/errors.js';
import { keepBodyExample } from './platform/http/examples.js';
import { explorerRoutes } from './platform/http/explorer.js';
import { installInputGuards } from './platform/http/input-guards.js';
import { echoRequestIds, loggerOptions, requestIds } from './platform/http/logging.js';
import { documentProblems, SECURITY_SCHEMES, TAGS } from './platform/http/openapi.js';
import { Problem } from './platform/http/problem.js';
import { installSecurityHeaders } from './platform/http/security-headers.js';
import { EventStreams } from './platform/http/sse.js';
import type { App } from './platform/http/types.js';
import { webUrlPolicyFor, withWebUrlPolicy } from './platform/http/web-urls.js';
import { Scheduler } from './platform/jobs/scheduler.js';
import { closeConnectionsWhileDraining } from './platform/lifecycle/drain.js';
import { checkMasterSecret } from './platform/lifecycle/master-secret-check.js';
import { Lifecycle } from './platform/lifecycle/shutdown.js';
import { StartUpError } from './platform/lifecycle/start-up-errors.js';
import { openDataKey } from './platform/master-key/index.js';
import { Metrics, serveMetrics } from './platform/observability/metrics.js';
import { NO_TRACING, startTracing, type Tracing } from './platform/observability/tracing.js';
import { OutboundClient } from './platform/outbound/client.js';
import { OwnUrlsFirst } from './platform/outbound/own-urls.js';
import { sealPrototypes } from './platform/prototype-seal.js';
import { createRateLimits } from './platform/rate-limits/index.js';
import { DatabaseWindows } from './platform/rate-limits/windows.js';
import { createPresentationConfigs } from './presentation-configs/index.js';
import type { PresentationConfigService } from './presentation-configs/service.js';
import { createRegistrar } from './registrar/index.js';
import { createSchemaMetadata } from './schema-metadata/index.js';
import { createSessions } from './sessions/index.js';
import type { SessionState } from './sessions/model.js';
import type { SessionService } from './sessions/service.js';
import { Caches } from './status-lists/cache.js';
import { createStatusLists } from './status-lists/index.js';
import type { StatusListService } from './status-lists/service.js';
import { systemRoutes } from './system/routes.js';
import { createTenancy } from './tenants/index.js';
import { trustConfigRoutes } from './trust/config/routes.js';
import type { TrustConfigStore } from './trust/config/schema.js';
import { entityIdOf } from './trust/federation/entity-configuration.js';
import { federationSubordinateRoutes } from './trust/federation/subordinate-routes.js';
import { FederationSubordinates } from './trust/federation/subordinates.js';
import { federationTrustMarkRoutes } from './trust/federation/trust-mark-routes.js';
import { FederationTrustMarks } from './trust/federation/trust-marks.js';
import { TrustService } from './trust/index.js';
import { createTrustLists } from './trust-lists/index.js';
import type { TrustListService } from './trust-lists/service.js';
import { providerDirectory } from './users/directory.js';
import { LocalUserDirectory } from './users/local-directory.js';
import { createVerification } from './verification/index.js';
import { createWebhooks, WebhookSecrets } from './webhooks/index.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string };

/** Services that features share in-process (jobs, benchmarks and tests reach them here, not over HTTP). */
export interface Services {
  tracing: Tracing;
  clients: ClientService;
  keyChains: KeyChainService;
  signing: SigningService;
  sessions: SessionService;
  credentialConfigs: CredentialConfigService;
  attributeProviders: HttpEndpointService;
  webhookEndpoints: HttpEndpointService;
  statusLists: StatusListService;
  presentationConfigs: PresentationConfigService;
  trustLists: TrustListService;
  configFiles: ConfigFileService;
  /** Runs the scheduled jobs; tests call runNow() instead of waiting for a round. */
  scheduler: Scheduler;
  /**
   * Whether the service is draining, and what stopping it runs: a part with work of its own (a
   * delivery worker) adds its stop to `lifecycle.steps` here, in app.ts, and nothing else changes.
   */
  lifecycle: Lifecycle;
}

export interface BuiltApp {
  /** The configuration built with: MASTER_SECRET is the master key source's data key when MASTER_KEY_PROVIDER is not env. */
  config: ReadyConfig;
  app: FastifyInstance;
  db: Db;
  services: Services;
}

export interface BuildOptions {
  /** The time of the services that stamp and expire things; the system clock unless a test moves it. */
  clock?: Clock;
  /** The environment the configuration was read from, for the {"env": NAME} references of KMS_PROVIDERS. */
  env?: Record<string, string | undefined>;
}

export async function buildApp(addressed: AddressedConfig, options: BuildOptions = {}): Promise<BuiltApp> {
  sealPrototypes();
  const tracing = addressed.OTEL_EXPORTER_OTLP_ENDPOINT
    ? await startTracing(addressed.OTEL_EXPORTER_OTLP_ENDPOINT, addressed.OTEL_SERVICE_NAME)
    : NO_TRACING;
  const db = await connect(addressed, tracing.enabled ? tracing.query : undefined);
  try {
    await migrate(db, migrationsFor(db.dialect));
    // Before anything is sealed or opened: the master key, from MASTER_SECRET or unwrapped by its source.
    const env = options.env ?? {};
    const config = { ...addressed, MASTER_SECRET: await openDataKey(db.kysely, addressed, env, operatorOutbound(tracing)) };
    return await assemble(config, db, tracing, options.clock ?? systemClock, env);
  } catch (err) {
    await db.close();
    await tracing.shutdown();
    throw err;
  }
}

/**
 * Each feature builds its services and routes from what it declares it needs; this function only
 * hands each what it asks for, in an order where everything exists before it is handed on.
 */
async function assemble(
  config: ReadyConfig,
  db: Db,
  tracing: Tracing,
  clock: Clock,
  env: Record<string, string | undefined>,
): Promise<BuiltApp> {
  const kysely = db.kysely;
  const sealerFor = (purpose: string) => createSealer(config.MASTER_SECRET, purpose);
  const audit = new AuditService(kysely, clock);
  const outbound = new OutboundClient({ allowPrivate: config.OUTBOUND_ALLOW_PRIVATE }, tracing);
  const metrics = new Metrics(db);
  const caches = new Caches();
  const lifecycle = new Lifecycle();
  const identityProvider = await connectExternalProvider(config, tracing, clock);
  // The providers' code (and the file's schema) is loaded only when KMS_PROVIDERS names a file.
  const keyProviders = config.KMS_PROVIDERS
    ? await (await import('./key-chains/providers/kms-file.js')).connectKeyProviders(config.KMS_PROVIDERS, env, operatorOutbound(tracing))
    : { defaultProvider: 'db', providers: [], close: async () => {} };

  const keys = createKeyChains({
    db: kysely,
    audit,
    sealer: sealerFor('key-chains'),
    publicUrl: config.PUBLIC_URL,
    country: config.CERTIFICATE_COUNTRY,
    external: keyProviders,
    clock,
  });
  const { keyChains, signing } = keys;
  // One read of one row, made while the rest is assembled; awaited before the service answers anyone.
  const masterSecretChecked = checkMasterSecret(kysely, config.MASTER_SECRET, () => keyChains.sealedKeyOpens());
  masterSecretChecked.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled
  // Events (session status, cache invalidations) reach every instance through PostgreSQL; SQLite runs as a single instance.
  const postgresBus =
    db.dialect === 'postgres' && db.postgres ? new (await import('./platform/events/postgres-bus.js')).PostgresBus(db.postgres) : undefined;
  const bus = postgresBus ?? new InProcessBus();
  const tenancy = createTenancy({
    db: kysely,
    audit,
    secrets: secretKeeping(identityProvider),
    users: identityProvider?.admin
      ? providerDirectory(identityProvider.admin.users)
      : new LocalUserDirectory(kysely, sealerFor('users'), clock),
    maxStatusListCapacity: config.STATUS_MAX_CAPACITY,
    clock,
    initializers: [(db, tenantId, ctx) => keyChains.createTenantDefaults(db, tenantId, ctx)],
    // The database's users go with the tenant's rows; the provider's must be deleted there.
    cleanups: (users) => [
      // Issuance is assembled below; called only when a tenant is deleted, long after.
      (db, tenantId) => issuance.tenantRemoved(db, tenantId),
      ...(identityProvider?.admin ? [(db: Executor, tenantId: string) => users.removeAllOfTenant(tenantId, db)] : []),
    ],
  });
  const { tenants, clients } = tenancy;
  // Hashing the bootstrap secret takes a worker thread 50-100 ms: it runs while the routes are built.
  // External mode makes it at the provider, and only through an admin adapter. It waits for the master
  // secret check (one row read): a start that is refused (a fresh DATA_DIR's generated secrets on a
  // reused database, say) must not leave the bootstrap client's secret changed for the instances
  // still running with the right one.
  const { AUTH_CLIENT_ID, AUTH_CLIENT_SECRET } = config;
  const bootstrapClientReady =
    AUTH_CLIENT_ID && AUTH_CLIENT_SECRET && (!identityProvider || identityProvider.admin)
      ? masterSecretChecked.then(() => clients.ensureBootstrapClient(AUTH_CLIENT_ID, AUTH_CLIENT_SECRET).catch(rootClientFailure))
      : Promise.resolve();
  bootstrapClientReady.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled
  const auth = createAuth({
    db: kysely,
    clients,
    identityProvider,
    masterSecret: config.MASTER_SECRET,
    issuer: config.JWT_ISSUER,
    expiresIn: config.JWT_EXPIRES_IN,
    failedAttempts: { failures: config.TOKEN_FAILED_ATTEMPTS_LIMIT, windowSeconds: config.TOKEN_FAILED_ATTEMPTS_WINDOW },
    consoleClientId: config.OIDC_UI_CLIENT_ID,
    audit,
    tenantActive: (tenantId) => tenants.isActive(tenantId),
  });

  const sessionFeature = createSessions({ db: kysely, audit, sealer: sealerFor('sessions'), bus, clock });
  const { sessions } = sessionFeature;
  sessions.onStatusChange((state) => recordSessionEnd(metrics, state));

  const webhookSecrets = new WebhookSecrets(kysely, sealerFor('webhook-secrets'), config.WEBHOOK_SECRET_ROTATION_GRACE_SECONDS, clock);
  const endpoints = createHttpEndpoints({ db: kysely, audit, sealerFor, outbound, webhookSecrets, clock });
  const { attributeProviders, webhookEndpoints } = endpoints;
  const credentialConfigFeature = createCredentialConfigs({
    db: kysely,
    audit,
    keyChains,
    attributeProviders,
    webhookEndpoints,
    bus,
    clock,
  });
  const { credentialConfigs } = credentialConfigFeature;
  const presentationConfigFeature = createPresentationConfigs({
    db: kysely,
    audit,
    sealer: sealerFor('presentation-configs'),
    keyChains,
    webhookEndpoints,
    webhookSecrets,
    // The issuer settings are built with issuance below; read only when a configuration is saved.
    hasFederationSettings: async (tenantId, db) => Boolean((await issuance.settings.get(tenantId, db)).federation),
    outbound,
    bus,
    clock,
  });
  const { presentationConfigs } = presentationConfigFeature;
  const trustListFeature = createTrustLists({
    db: kysely,
    audit,
    keyChains,
    signing,
    publicUrl: config.PUBLIC_URL,
    country: config.CERTIFICATE_COUNTRY,
    tenantName: async (tenantId) => (await tenants.summary(tenantId)).name,
    clock,
  });
  const { trustLists } = trustListFeature;
  const statusListFeature = createStatusLists({
    metrics,
    db: kysely,
    publicUrl: config.PUBLIC_URL,
    defaults: { capacity: config.STATUS_CAPACITY, bits: config.STATUS_BITS as 1 | 2 | 4 | 8, ttl: config.STATUS_TTL },
    limits: { capacity: config.STATUS_MAX_CAPACITY, listsPerTenant: config.STATUS_MAX_LISTS_PER_TENANT },
    audit,
    keyChains,
    signing,
    caches,
    tenants,
    trustCache: trustLists.trustCache,
    tenantConfig: (tenantId) => tenants.statusListConfig(tenantId),
    configurationSigning: (tenantId, id) => credentialConfigs.statusListSigning(tenantId, id),
    reclaimSpace: () => db.reclaimSpace(),
    sessionExists: async (tenantId, sessionId) => (await sessions.find(tenantId, sessionId)) !== undefined,
    clock,
  });
  const { statusLists } = statusListFeature;
  const registrarFeature = createRegistrar({
    db: kysely,
    audit,
    sealer: sealerFor('registrar'),
    outbound,
    keyChains,
    presentationConfigs,
    publicUrl: config.PUBLIC_URL,
    clock,
  });
  const schemaMetadata = createSchemaMetadata({
    db: kysely,
    registrar: registrarFeature.registrar,
    signing,
    credentialConfigs,
    audit,
    vctOf: (tenantId, configuration) => vctOf(configuration, issuerUrls(config.PUBLIC_URL, tenantId)),
    outbound,
    // The trust service is built below; asked only when signed schema metadata is resolved.
    trustedCertificates: (tenantId) => trust.trustedCertificates(tenantId),
    clock,
  });
  // The federation settings live in the issuer settings, built with issuance below; read only when a presentation is verified.
  const trust = new TrustService({
    outbound,
    listedCertificates: (tenantId, purpose) => trustLists.trustedCertificates(tenantId, purpose),
    federationSettingsOf: async (tenantId) => (await issuance.settings.get(tenantId)).federation,
    resolutionDeadlineMs: config.FEDERATION_RESOLUTION_DEADLINE_MS,
    clock,
    // did:web issuers of W3C VCs: other hosts' documents through the outbound client, the service's own in-process.
    dids: new DidWebResolver(
      new OwnUrlsFirst(config.PUBLIC_URL, outbound, [ownDidDocuments(keyChains, config.PUBLIC_URL)]),
      config.PUBLIC_URL,
    ),
    etsiSettingsOf: async (tenantId) => (await issuance.settings.get(tenantId)).etsiTrustedLists,
    // The server is built below; a refresh (at a verification) logs only after it is.
    log: { warn: (details, message) => app.log.warn(details, message) },
  });
  const verification = createVerification({
    db: kysely,
    publicUrl: config.PUBLIC_URL,
    sessions,
    configs: presentationConfigs,
    registrationCertificates: registrarFeature.registrationCertificates,
    trust,
    signing,
    outbound,
    statusListReader: new OwnUrlsFirst(config.PUBLIC_URL, outbound, statusListFeature.ownDocuments),
    statusListCache: caches.fetchedStatusList,
    clock,
    // The issuer settings are built with issuance below; read only when a request uses the prefix openid_federation.
    federationOf: async (tenantId) => {
      const { federation } = await issuance.settings.get(tenantId);
      return federation
        ? { settings: federation, entityId: entityIdOf(issuerUrls(config.PUBLIC_URL, tenantId).issuer, federation) }
        : undefined;
    },
    tenantName: async (tenantId) => (await tenants.summary(tenantId)).name,
  });
  const federationTrustMarks = new FederationTrustMarks(kysely, audit, clock);
  const issuance = createIssuance({
    db: kysely,
    bus,
    publicUrl: config.PUBLIC_URL,
    masterSecret: config.MASTER_SECRET,
    audit,
    sessions,
    credentialConfigs,
    attributeProviders,
    webhookEndpoints,
    signing,
    keyChains,
    sealer: sealerFor('deferred-issuance'),
    tenantExists: (tenantId) => tenants.exists(kysely, tenantId),
    outbound,
    statusEntries: statusLists,
    sessionCredentialsValid: statusLists.sessionCredentialsValid,
    walletInitiatedLimits: {
      perAddress: { requests: config.WALLET_INITIATED_LIMIT_PER_ADDRESS, windowSeconds: config.WALLET_INITIATED_WINDOW },
      perTenant: { requests: config.WALLET_INITIATED_LIMIT_PER_TENANT, windowSeconds: config.WALLET_INITIATED_WINDOW },
    },
    metrics,
    presentations: verification.embeddedPresentations,
    verifierMetadata: (tenantId) => verification.verifierMetadata(tenantId),
    trustMarkIssuer: (tenantId) => federationTrustMarks.issues(tenantId),
    walletProviders: (tenantId, settings) => trust.walletProviders(tenantId, settings),
    trust,
    clock,
  });
  issuance.settings.onChange((tenantId) => trust.forget(tenantId));
  // The trust settings are kept in the issuer settings (their federation field is an alias).
  const trustConfig: TrustConfigStore = {
    get: async (tenantId) => {
      const { federation, etsiTrustedLists } = await issuance.settings.get(tenantId);
      return { federation, etsiTrustedLists };
    },
    put: async (ctx, tenantId, given) => {
      const { federation, etsiTrustedLists } = await issuance.settings.putTrust(ctx, tenantId, given);
      return { federation, etsiTrustedLists };
    },
  };
  const rateLimits = await createRateLimits(config, kysely, (err) => app.log.warn({ err }, 'rate limit counts not shared'));
  issuance.settings.addCheck(rateLimitCeilings(rateLimits.limits));
  const conformanceFeature = createConformance({
    issuerSettings: issuance.settings,
    credentialConfigs,
    presentationConfigs,
    presentationOffers: verification.presentationOffers,
    keyChains,
    walletProviders: (tenantId, settings) => trust.walletProviders(tenantId, settings),
  });
  const configFileFeature = createConfigFiles({
    db: kysely,
    tenants,
    clients,
    keyChains,
    issuerSettings: issuance.settings,
    attributeProviders,
    webhookEndpoints,
    credentialConfigs,
    presentationConfigs,
    trustLists,
  });

  const app = await createServer(config, metrics, tracing);
  const scheduler = new Scheduler(kysely, config.JOB_INTERVAL_SECONDS, app.log, (job, outcome, seconds) =>
    metrics.jobRan(job, outcome, seconds),
  );
  scheduler.add({ name: 'key-rotation', run: () => keyChains.rotateDue() });
  scheduler.add({ name: 'trust-list-resign', run: () => trustLists.resignDue() });
  scheduler.add({ name: 'nonce-cleanup', run: () => issuance.nonces.purgeExpired() });
  // Every window of request_windows (rate limits, failed token attempts, wallet-initiated requests) is at most this long.
  const longestWindowSeconds = Math.max(
    rateLimits.longestWindowSeconds,
    config.TOKEN_FAILED_ATTEMPTS_WINDOW,
    issuance.walletInitiated.windowSeconds,
  );
  scheduler.add({ name: 'request-windows-cleanup', run: () => new DatabaseWindows(kysely).purgeEnded(longestWindowSeconds) });
  const retentionDefaults = { ttlSeconds: config.SESSION_TTL, cleanupMode: config.SESSION_CLEANUP_MODE };
  scheduler.add(sessionFeature.cleanupJob(tenants, retentionDefaults));
  const webhooks = createWebhooks({
    db: kysely,
    sessions,
    outbound,
    log: app.log,
    options: {
      retryDelaysMs: config.WEBHOOK_RETRY_DELAYS_MS,
      horizonSeconds: config.WEBHOOK_RETRY_HORIZON_SECONDS,
      pollMs: config.WEBHOOK_POLL_INTERVAL_MS,
    },
    retentionSeconds: config.WEBHOOK_DELIVERY_RETENTION_SECONDS,
    renderers: {
      issuanceStatus: (event, session) => issuance.webhooks.render(event, session),
      presentationCompleted: (event, session) => verification.webhooks.render(event, session),
    },
  });
  scheduler.add(webhooks.cleanupJob);
  verification.webhooks.onReleased(() => webhooks.worker.wake());
  metrics.watchWebhookOutbox(webhooks.stats);
  const streams = new EventStreams(config.SSE_HEARTBEAT_SECONDS);
  await postgresBus?.listen(app.log);
  app.addHook('onReady', async () => {
    scheduler.start();
    webhooks.worker.start();
  });
  // Open event streams would otherwise hold the server open until their clients leave.
  app.addHook('preClose', async () => streams.closeAll());
  // What stopping runs once the server has closed (its requests answered), in the order of
  // SHUTDOWN_PHASES (src/platform/lifecycle/shutdown.ts); the background work step is the lifecycle's own.
  const { steps } = lifecycle;
  steps.add('stop-work', 'webhook delivery', () => webhooks.worker.stop());
  steps.add('stop-work', 'scheduler', () => scheduler.stop());
  steps.add('release', 'job leases', () => scheduler.releaseLeases());
  steps.add('release', 'rate-limit counts', () => rateLimits.close());
  steps.add('disconnect', 'event bus', () => bus.close());
  steps.add('disconnect', 'key providers', () => keyProviders.close());
  steps.add('disconnect', 'database', () => db.close());
  steps.add('disconnect', 'tracing', () => tracing.shutdown());
  app.addHook('onClose', async () => steps.run(app.log));
  closeConnectionsWhileDraining(app, lifecycle);
  await documentAndProtect(app, {
    resolve: (clientId, generation) => clients.resolvePrincipal(clientId, generation),
    verifier: auth.verifier,
    tenantActive: (tenantId) => tenants.isActive(tenantId),
  });
  rateLimits.install(app, tenantRateLimits(issuance.settings));

  systemRoutes(app, {
    name: pkg.name,
    version: pkg.version,
    observabilityUrl: config.OBSERVABILITY_URL,
    publicUrl: config.PUBLIC_URL,
    auth: frontendAuth(config, identityProvider),
    checkDatabase: async () => {
      await sql`select 1`.execute(kysely);
    },
    checkKeyProviders: () => keyChains.checkProviders(),
    draining: () => lifecycle.draining,
    clock,
  });
  for (const feature of [
    auth,
    tenancy,
    keys,
    endpoints,
    credentialConfigFeature,
    presentationConfigFeature,
    trustListFeature,
    issuance,
    verification,
    conformanceFeature,
    webhooks,
  ])
    feature.routes(app);
  sessionFeature.routes(app, { tenants, streams, retentionDefaults });
  for (const feature of [configFileFeature, statusListFeature, registrarFeature, schemaMetadata]) feature.routes(app);
  trustConfigRoutes(app, trustConfig);
  federationSubordinateRoutes(app, {
    subordinates: new FederationSubordinates(kysely, audit, (entityId) => trust.entityConfiguration(entityId), clock),
    issuerOf: async (tenantId) => {
      const issuer = await issuance.issuers.get(tenantId);
      return { credentialIssuer: issuer.urls.issuer, federation: issuer.settings.federation };
    },
    federationSigner: (tenantId) => signing.signer(tenantId, { usageType: 'federation' }),
    resolve: (tenantId, settings, entityId, anchorId) => trust.resolveFederation(tenantId, settings, entityId, anchorId),
    clock,
  });
  federationTrustMarkRoutes(app, {
    trustMarks: federationTrustMarks,
    issuerOf: async (tenantId) => {
      const issuer = await issuance.issuers.get(tenantId);
      return { credentialIssuer: issuer.urls.issuer, federation: issuer.settings.federation };
    },
    federationSigner: (tenantId) => signing.signer(tenantId, { usageType: 'federation' }),
    clock,
  });
  consoleRoutes(app, fileURLToPath(new URL('../dist/console/', import.meta.url)), identityProvider?.metadata);
  docsRoutes(app, fileURLToPath(new URL('../dist/docs/', import.meta.url)));

  // Ready first: building the route tables overlaps the scrypt check and the master secret check too.
  // A failed check closes what ready started (the scheduler); a wrong master secret is reported first.
  await app.ready();
  const checks = await Promise.allSettled([masterSecretChecked, bootstrapClientReady]);
  const failed = checks.find((check): check is PromiseRejectedResult => check.status === 'rejected');
  if (failed) {
    await app.close();
    throw failed.reason;
  }
  return {
    config,
    app,
    db,
    services: {
      tracing,
      clients,
      keyChains,
      signing,
      sessions,
      credentialConfigs,
      attributeProviders,
      webhookEndpoints,
      statusLists,
      presentationConfigs,
      trustLists,
      configFiles: configFileFeature.configFiles,
      scheduler,
      lifecycle,
    },
  };
}

/** The HTTP server with its logging, validation, metrics and tracing, before any route. */
async function createServer(config: ReadyConfig, metrics: Metrics, tracing: Tracing) {
  const validator = withWebUrlPolicy(validatorCompiler, webUrlPolicyFor(config.NODE_ENV));
  const serializer = withWebUrlPolicy(serializerCompiler, 'unjudged');
  const fastify = Fastify({
    logger: loggerOptions(config.LOG_LEVEL),
    trustProxy: config.TRUST_PROXY,
    ...requestIds,
    // Long enough for any id the API accepts, so a long unknown id is a 404, not a 414.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 256 },
    // A body's __proto__ and constructor members are kept as parsed, so that the input guards refuse
    // them with a 400 naming the field (src/platform/http/input-guards.ts) before anything reads the body.
    onProtoPoisoning: 'ignore',
    onConstructorPoisoning: 'ignore',
    // Fastify's plugin loader (avvio) arms a 10 s timer for each plugin, and each route adds one (twice
    // for a GET, with its HEAD route): some 300 timers set and cleared at every start, a few percent
    // of the time to the first answer. Every plugin here is the service's own or loaded from the
    // bundle and finishes within the start; a start that hung would be stopped by the orchestrator's
    // start-up probe, as a hang anywhere else in start-up is.
    pluginTimeout: 0,
    // Zod validates and serializes every route; named here, Fastify never builds (nor loads) its own
    // Ajv and fast-json-stringify compilers. (Its types describe Ajv's factories; what it calls the
    // compilers with is what Zod's take.)
    schemaController: {
      compilersFactory: { buildValidator: () => validator, buildSerializer: () => serializer },
    } as unknown as FastifyServerOptions['schemaController'],
  });
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  metrics.instrument(app);
  tracing.instrument(app);
  serveMetrics(app, metrics, { token: config.METRICS_TOKEN, port: config.METRICS_PORT, host: config.HOST });
  return app;
}

/** Errors, input guards, security headers, the OpenAPI document and explorer, then access control over every later route. */
async function documentAndProtect(app: App, access: Parameters<typeof installAccessControl>[1]) {
  installErrorHandling(app);
  installInputGuards(app);
  echoRequestIds(app);
  installSecurityHeaders(app);
  await app.register(formbody);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'svc management API',
        version: pkg.version,
        description: 'Issues verifiable credentials to wallets and verifies their presentations, for several tenants.',
      },
      // Relative, so the explorer's "Try it out" calls the address the document was read from.
      servers: [{ url: '/' }],
      tags: TAGS,
      components: { securitySchemes: SECURITY_SCHEMES },
    },
    transform: (input) => keepBodyExample(jsonSchemaTransform(input)),
    transformObject: (input) => documentProblems(jsonSchemaTransformObject(input)),
  });
  explorerRoutes(app);
  installAccessControl(app, access);
}

/** What a front end is told about logging in (GET /api/frontend-config). */
function frontendAuth(config: ReadyConfig, identityProvider: IdentityProvider | undefined) {
  if (!identityProvider) return { mode: 'integrated' as const, tokenUrl: '/api/oauth2/token' };
  return {
    mode: 'external' as const,
    issuer: identityProvider.metadata.issuer,
    authorizationEndpoint: identityProvider.metadata.authorizationEndpoint,
    tokenEndpoint: identityProvider.metadata.publicTokenEndpoint,
    clientId: config.OIDC_UI_CLIENT_ID,
    tenantClaim: config.OIDC_SUB,
  };
}

/** A session that ended (completed, failed, expired) counts toward its kind's outcome. */
function recordSessionEnd(metrics: Metrics, state: SessionState) {
  if (state.status !== 'completed' && state.status !== 'failed' && state.status !== 'expired') return;
  if (state.kind === 'issuance') return metrics.issuanceEnded(state.tenantId, state.status);
  const verified = (state.private?.credentials as { format?: string }[] | undefined) ?? [];
  const formats = [...new Set(verified.map((credential) => credential.format).filter((f): f is string => typeof f === 'string'))];
  metrics.presentationEnded(state.tenantId, formats, state.status);
}

/** The provider's refusal to make the root client stops the start with one line, as its other failures do. */
function rootClientFailure(err: unknown): never {
  if (!(err instanceof Problem)) throw err;
  throw new StartUpError('identityProvider', `AUTH_CLIENT_ID: the root client could not be made at the identity provider: ${err.detail}`);
}

/** Client secrets are hashed here, or kept at the identity provider (managed through its admin adapter when there is one). */
function secretKeeping(identityProvider: IdentityProvider | undefined): SecretKeeping {
  if (!identityProvider) return { at: 'service' };
  if (identityProvider.admin) return { at: 'provider', admin: identityProvider.admin.clients };
  return { at: 'unmanaged provider', issuer: identityProvider.metadata.issuer };
}

/** External mode: the OpenID Provider named by OIDC, reached through the operator's outbound client. */
async function connectExternalProvider(config: ReadyConfig, tracing: Tracing, clock: Clock) {
  const { OIDC, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET } = config;
  if (!OIDC || !OIDC_CLIENT_ID || !OIDC_CLIENT_SECRET) return undefined;
  return connectIdentityProvider({ ...config, OIDC, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET }, operatorOutbound(tracing), clock);
}

/**
 * The outbound client of addresses the operator configured (the identity provider, Vault, AWS KMS):
 * they are often inside the cluster, so private addresses are allowed, unlike for the addresses
 * tenants configure; cloud metadata addresses stay refused.
 */
function operatorOutbound(tracing: Tracing) {
  return new OutboundClient({ allowPrivate: true }, tracing);
}
