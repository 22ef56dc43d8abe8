// Issuer settings of a tenant (not in the spec; ours): display, DPoP, batch size, tx_code attempts,
// lifetimes (refresh tokens included), the authorization servers an offer may name (the chained one too), and wallet
// attestation (whether it is required, with challenges, and the wallet providers trusted for it).

import { X509Certificate } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import type { AuditService } from '../../audit/service.js';
import type { RequestContext } from '../../platform/auth/principal.js';
import type { Clock } from '../../platform/clock.js';
import type { Sealer } from '../../platform/crypto/sealed.js';
import { tenantDb } from '../../platform/db/tenant-db.js';
import { type Executor, inTransaction } from '../../platform/db/values.js';
import { type FieldError, invalidFields } from '../../platform/http/problem.js';
import { underWebUrlPolicy, webUrl } from '../../platform/http/web-urls.js';
import { EtsiTrustedListsSchema } from '../../trust/etsi-tsl/settings.js';
import { FederationSettingsSchema } from '../../trust/federation/settings.js';
import { ChainedAuthorizationServerSchema, sameClientSecret, sealClientSecret, withoutClientSecret } from './chained-as.js';
import { ProfileSchema } from './profile.js';

const Display = z.strictObject({
  name: z.string().min(1),
  locale: z.string().optional(),
  logo: z.strictObject({ uri: webUrl().describe('https (http outside production)'), alt_text: z.string().optional() }).optional(),
});

function isPemCertificate(pem: string): boolean {
  try {
    new X509Certificate(pem);
    return true;
  } catch {
    return false;
  }
}

/**
 * A wallet provider whose client attestations this issuer accepts, given by its trust anchors. Kept in
 * the issuer settings rather than read from the tenant's trust lists: those describe issuers and
 * status list signers for verifiers (their ETSI service types have none for wallet providers).
 */
const WalletProvider = z.strictObject({
  name: z.string().min(1).max(500),
  certificates: z
    .array(z.string().refine(isPemCertificate, 'must be a PEM X.509 certificate'))
    .min(1)
    .max(20)
    .describe('PEM trust anchors: an attestation x5c chain must lead to one of them'),
});

const OwnLimit = z.number().int().min(1).optional();
const TenantClassLimits = z.strictObject({
  perAddress: OwnLimit.describe("requests one address may make per window: at most the operator's RATE_LIMIT_<CLASS>"),
  perTenant: OwnLimit.describe(
    "requests this issuer takes per window from all addresses: at most the operator's RATE_LIMIT_<CLASS>_PER_TENANT",
  ),
});
/** The classes whose limits a tenant may lower (those counted per tenant; see platform/rate-limits/classes.ts). */
const RateLimitsSchema = z
  .strictObject({
    authorization: TenantClassLimits.optional(),
    token: TenantClassLimits.optional(),
    nonce: TenantClassLimits.optional(),
    credential: TenantClassLimits.optional(),
    notification: TenantClassLimits.optional(),
  })
  .default({})
  .describe(
    "this issuer's own, lower rate limits per endpoint class, as request counts in the operator's windows (docs/operations.md, \"Rate limits\"); absent: the operator's; above the operator's: 400",
  );

export const IssuerSettingsSchema = z
  .strictObject({
    profile: ProfileSchema.default('none'),
    display: z.array(Display).default([]).describe('issuer display in the credential issuer metadata'),
    dpopRequired: z.boolean().default(false).describe('DPoP-bound access tokens are always accepted; true makes them required'),
    dpopNonceRequired: z
      .boolean()
      .default(false)
      .describe(
        'DPoP proofs must carry a nonce this server provided (RFC 9449 section 8): answered with use_dpop_nonce and a DPoP-Nonce header',
      ),
    batchSize: z.number().int().min(1).max(100).default(10).describe('most proofs (credentials) in one credential request'),
    txCodeMaxAttempts: z.number().int().min(1).max(20).default(5).describe('wrong transaction codes before an offer is locked'),
    nonceLifetimeSeconds: z.number().int().min(30).max(3600).default(300),
    accessTokenLifetimeSeconds: z.number().int().min(60).max(86400).default(600),
    refreshTokenLifetimeSeconds: z
      .number()
      .int()
      .min(0)
      .max(2_592_000)
      .default(86400)
      .describe('authorization code flow: how long a refresh token lives (each use gives a new one with a fresh lifetime); 0 issues none'),
    offerLifetimeSeconds: z.number().int().min(60).max(2_592_000).default(86400).describe('how long a wallet may redeem an offer'),
    authorizationServers: z
      .array(z.strictObject({ issuer: webUrl().describe('https (http outside production)'), enabled: z.boolean().default(true) }))
      .default([])
      .describe(
        "external authorization servers an offer may name (authorization_code flow only), listed in authorization_servers of the issuer metadata after the built-in and the chained one. Such an offer carries issuer_state for that server, which serves the authorization itself (this service's PAR endpoints do not take that issuer_state). The credential endpoints take its RFC 9068 JWT access tokens (aud = this credential issuer, signed by a key of its jwks_uri from its RFC 8414 or OpenID Connect discovery metadata): a token grants the configurations its authorization_details and scope name, and its claims about the user become the authorization's claims",
      ),
    builtinAuthorizationServerEnabled: z
      .boolean()
      .default(true)
      .describe(
        'whether the built-in authorization server ({PUBLIC_URL}/issuers/{tenantId}) authorizes. false: it is left out of authorization_servers of the issuer metadata, an authorization_code offer naming it (or defaulting to it) is refused (400 naming body.authorization_server), its PAR, authorization and interactive authorization endpoints answer 400 invalid_request, its token endpoint refuses the authorization_code grant (unsupported_grant_type), and its metadata drops those endpoints and that grant. Its token endpoint still redeems pre-authorized codes (pre-authorized offers default to it) and the refresh tokens of sessions it authorized before',
      ),
    walletAttestationRequired: z
      .boolean()
      .default(false)
      .describe(
        'PAR and the token endpoint refuse requests without a wallet (client) attestation (attest_jwt_client_auth); an attestation that is sent is always verified',
      ),
    walletAttestationChallengeRequired: z
      .boolean()
      .default(false)
      .describe('the attestation proof (PoP) must carry a challenge from the challenge endpoint (use_attestation_challenge otherwise)'),
    walletProviders: z
      .array(WalletProvider)
      .max(50)
      .default([])
      .describe(
        "wallet providers whose client and key attestations are accepted, besides the walletIssuance entities of the tenant's trust lists; none in either: every attestation is refused",
      ),
    credentialEncryptionRequired: z
      .boolean()
      .default(false)
      .describe(
        "the credential and deferred credential endpoints take only encrypted requests (application/jwt: a JWE, ECDH-ES with A128GCM or A256GCM, to the tenant's default encrypt key chain, published in credential_request_encryption) that ask for an encrypted response (credential_response_encryption); others are refused with invalid_encryption_parameters. Encryption is always offered (encryption_required false) while this is false. A tenant without an encrypt key chain advertises no encryption, and while this is true its credential requests are refused (credential_request_denied)",
      ),
    chainedAuthorizationServer: ChainedAuthorizationServerSchema.nullable()
      .default(null)
      .describe(
        'the chained authorization server: users log in at this upstream OpenID Provider, and its claims go into the credentials; null: none',
      ),
    rateLimits: RateLimitsSchema,
    federation: FederationSettingsSchema.nullable()
      .default(null)
      .describe(
        'OpenID Federation: the issuer publishes its entity configuration at {credential_issuer}/.well-known/openid-federation (signed by the default federation key chain, made when this is first set), credentials with sdJwtTrustFormat federation name a key of it, and the verifier resolves trust chains to the trust anchors; null: the tenant takes no part. An alias of federation in the trust settings (/api/trust-config), where the trust settings are managed: writing either is read through both',
      ),
    etsiTrustedLists: EtsiTrustedListsSchema.nullable()
      .default(null)
      .describe(
        'EU trusted lists (ETSI TS 119 612) the verifier trusts; managed through the trust settings (/api/trust-config), of which this is an alias',
      ),
  })
  .meta({ id: 'IssuerSettings' });

export type IssuerSettings = z.output<typeof IssuerSettingsSchema>;
/** A tenant's rule over its settings (as they would be stored); answers what it breaks. */
export type SettingsCheck = (tenantId: string, settings: IssuerSettings, db: Executor) => Promise<FieldError[]>;
export const DEFAULT_SETTINGS: IssuerSettings = IssuerSettingsSchema.parse({});

/** The settings as the management API answers them and the audit log records them: secrets only as set / not set. */
export const shownSettings = (settings: IssuerSettings): IssuerSettings => ({
  ...settings,
  chainedAuthorizationServer: withoutClientSecret(settings.chainedAuthorizationServer),
});

export class IssuerSettingsService {
  private readonly changeListeners: ((tenantId: string) => void)[] = [];
  private readonly checks: SettingsCheck[] = [];

  constructor(
    private readonly db: Executor,
    private readonly audit: AuditService,
    /** Seals the chained authorization server's client secret before it is stored. */
    private readonly sealer: Sealer,
    private readonly clock: Clock,
    /** Makes the tenant's default federation key chain when federation is set and it has none. */
    private readonly ensureFederationKeys: (ctx: RequestContext, tenantId: string, db: Executor) => Promise<void> = async () => {},
    /** Tells every instance, with the saving transaction, that the tenant's settings changed. */
    private readonly announceChange: (db: Executor, tenantId: string) => Promise<void> = async () => {},
  ) {}

  /** Adds a rule the settings must obey in their tenant (a conformance profile), run in the saving transaction. */
  addCheck(check: SettingsCheck) {
    this.checks.push(check);
  }

  /** Called after a tenant's settings changed on this instance (caches forget them at once; other instances hear of it through announceChange). */
  onChange(listener: (tenantId: string) => void) {
    this.changeListeners.push(listener);
  }

  async get(tenantId: string, db: Executor = this.db): Promise<IssuerSettings> {
    const row = await tenantDb(db, tenantId).selectFrom('issuer_settings').select('document').executeTakeFirst();
    if (!row) return DEFAULT_SETTINGS;
    return underWebUrlPolicy('unjudged', () => IssuerSettingsSchema.parse(JSON.parse(row.document)));
  }

  /**
   * Whether `given` (the body of a PUT, such as an imported issuer.json) is what is stored, so that
   * nothing needs writing. The chained server's client secret is compared in the clear: given again in
   * the clear (or from an {"env"} reference) it would otherwise always differ from its sealed form.
   */
  async isCurrent(tenantId: string, given: IssuerSettings, db: Executor = this.db): Promise<boolean> {
    const stored = await this.get(tenantId, db);
    const chained = given.chainedAuthorizationServer;
    const storedSecret = stored.chainedAuthorizationServer?.clientSecret;
    const sameSecret =
      chained?.clientSecret !== undefined &&
      storedSecret !== undefined &&
      sameClientSecret(this.sealer, tenantId, chained.clientSecret, storedSecret);
    const wanted = sameSecret ? { ...given, chainedAuthorizationServer: { ...chained, clientSecret: storedSecret } } : given;
    const plain = (value: unknown) => JSON.parse(JSON.stringify(value));
    return isDeepStrictEqual(plain(wanted), plain(stored));
  }

  /** Replaces only the federation block (what /api/trust-config writes), the other settings kept, in one transaction. */
  putFederation(ctx: RequestContext, tenantId: string, federation: IssuerSettings['federation'], db: Executor = this.db) {
    return inTransaction(db, async (trx) => (await this.putTrust(ctx, tenantId, { federation }, trx)).federation);
  }

  /** Replaces only the trust blocks given (what /api/trust-config writes), the other settings kept, in one transaction. */
  putTrust(
    ctx: RequestContext,
    tenantId: string,
    trust: Partial<Pick<IssuerSettings, 'federation' | 'etsiTrustedLists'>>,
    db: Executor = this.db,
  ): Promise<IssuerSettings> {
    return inTransaction(db, async (trx) => {
      const current = await this.get(tenantId, trx);
      return this.put(ctx, tenantId, { ...current, ...trust }, trx);
    });
  }

  async put(ctx: RequestContext, tenantId: string, given: IssuerSettings, db: Executor = this.db): Promise<IssuerSettings> {
    const saved = await inTransaction(db, async (trx) => {
      const before = await this.get(tenantId, trx);
      const chained = sealClientSecret(this.sealer, tenantId, given.chainedAuthorizationServer, before.chainedAuthorizationServer);
      const settings = { ...given, chainedAuthorizationServer: chained };
      const errors: FieldError[] = [];
      for (const check of this.checks) errors.push(...(await check(tenantId, settings, trx)));
      if (errors.length) throw invalidFields(errors);
      if (settings.federation) await this.ensureFederationKeys(ctx, tenantId, trx);
      const scoped = tenantDb(trx, tenantId);
      const document = JSON.stringify(settings);
      const updated = await scoped
        .updateTable('issuer_settings')
        .set({ document, updated_at: this.clock.now().toISOString() })
        .executeTakeFirst();
      if (updated.numUpdatedRows === 0n)
        await scoped.insertInto('issuer_settings', { document, updated_at: this.clock.now().toISOString() }).execute();
      const change = { before: { ...shownSettings(before) }, after: { ...shownSettings(settings) } };
      await this.audit.record(ctx, { tenantId, actionType: 'issuer_settings.updated', ...change }, trx);
      await this.announceChange(trx, tenantId);
      return settings;
    });
    for (const listener of this.changeListeners) listener(tenantId);
    return saved;
  }
}
