// Presentation configurations: what a tenant asks wallets for (a DCQL query) and how a request made
// from it behaves (lifetime, transaction data, redirect, webhook, signing key chain). Settings are
// stored as JSON; references in indexed columns, so that a key chain or webhook endpoint in use
// cannot be deleted; the deprecated inline webhook sealed, because its auth may hold a secret.

import { isDeepStrictEqual } from 'node:util';
import type { DcqlQuery } from 'dcql';
import type { AuditService } from '../audit/service.js';
import { type AuthInput, type AuthView, MASK } from '../http-endpoints/schemas.js';
import type { HttpEndpointService, ResolvedEndpoint } from '../http-endpoints/service.js';
import type { KeyChainService } from '../key-chains/service.js';
import type { RequestContext } from '../platform/auth/principal.js';
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/sealed.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import { type Executor, inTransaction, parseJson } from '../platform/db/values.js';
import { type EventBus, onTenantEvent } from '../platform/events/bus.js';
import { conflict, type FieldError, invalidFields, notFound, Problem } from '../platform/http/problem.js';
import { lazy } from '../platform/lazy.js';
import { TtlCache } from '../platform/ttl-cache.js';
import { configurationOwner, type WebhookSecrets } from '../webhooks/secrets.js';
import {
  DEFAULT_LIFETIME,
  type PresentationConfiguration,
  type PresentationDocument,
  type RegistrationCertCache,
  type SavePresentationConfiguration,
  type UpdatePresentationConfiguration,
  type WebhookConfig,
} from './schemas.js';
import type { PresentationConfigRow, ReferenceColumn } from './store.js';
import * as store from './store.js';

// The DCQL library is loaded with the first presentation configuration written.
const documentChecks = lazy(() => import('./checks.js'));

export type { PresentationConfiguration, TransactionData, WebhookConfig } from './schemas.js';

type Input = Omit<SavePresentationConfiguration, 'id'>;

/** A write's answer: the configuration, and the inline webhook's signing secret when the write made one (shown this once). */
export type SavedPresentationConfiguration = PresentationConfiguration & { webhookSigningSecret?: string };

/** Everything a request can set, defaults applied; the webhook with its secret. */
interface Settings extends PresentationDocument {
  webhookEndpointId: string | null;
  accessKeyChainId: string | null;
  webhook: WebhookConfig | null;
}

/** A configuration as loaded for a change: the view, what it was saved from, and its row. */
interface Loaded {
  configuration: PresentationConfiguration;
  settings: Settings;
  row: PresentationConfigRow;
}

function toSettings(input: Input): Settings {
  return {
    description: input.description ?? null,
    lifeTime: input.lifeTime ?? DEFAULT_LIFETIME,
    // Checked by checkDocument() before anything is saved.
    dcql_query: input.dcql_query as DcqlQuery.Input,
    transaction_data: input.transaction_data ?? [],
    registration_cert: input.registration_cert ?? null,
    attached: input.attached ?? null,
    redirectUri: input.redirectUri ?? null,
    webhookEndpointId: input.webhookEndpointId ?? null,
    accessKeyChainId: input.accessKeyChainId ?? null,
    webhook: input.webhook ? { url: input.webhook.url, auth: input.webhook.auth ?? { type: 'none' } } : null,
  };
}

const documentOf = (s: Settings): PresentationDocument => ({
  description: s.description,
  lifeTime: s.lifeTime,
  dcql_query: s.dcql_query,
  transaction_data: s.transaction_data,
  registration_cert: s.registration_cert,
  attached: s.attached,
  redirectUri: s.redirectUri,
});

const maskAuth = (auth: AuthInput): AuthView =>
  auth.type === 'header' ? { type: 'header', header: { name: auth.header.name, value: MASK } } : { type: 'none' };

/** A header value given as **** (as every response shows it) stands for the value stored for that header. */
function unmaskWebhook(settings: Settings, stored: WebhookConfig | null): FieldError[] {
  const auth = settings.webhook?.auth;
  if (auth?.type !== 'header' || auth.header.value !== MASK) return [];
  const kept =
    stored?.auth.type === 'header' && stored.auth.header.name.toLowerCase() === auth.header.name.toLowerCase()
      ? stored.auth.header.value
      : undefined;
  if (kept === undefined) {
    return [{ field: 'body.webhook.auth.header.value', message: `${MASK} keeps the stored value, and none is stored for this header` }];
  }
  auth.header.value = kept;
  return [];
}

/** Whether the request set a new header value (masked views cannot show it; the audit says so). */
const replacesSecret = (input: Input | UpdatePresentationConfiguration) =>
  input.webhook?.auth?.type === 'header' && input.webhook.auth.header.value !== MASK;

/**
 * How long an instance keeps a configuration it read: every presentation request, request object and
 * response needs it. A change made on this instance is seen at once, one made on another as soon as
 * its event arrives over the shared bus, and within this bound even if that event were lost.
 */
export const PRESENTATION_CONFIG_CACHE_MS = 1_000;
/** Announces on the bus that a tenant's presentation configurations changed; payload { tenantId }. */
const CHANGED_TOPIC = 'presentation-configs:changed';

/** A tenant's rule over a configuration's settings (as they would be stored); answers what it breaks. */
export type PresentationConfigCheck = (
  tenantId: string,
  settings: { accessKeyChainId: string | null },
  db: Executor,
) => Promise<FieldError[]>;

export class PresentationConfigService {
  private readonly checks: PresentationConfigCheck[] = [];
  private readonly cache = new TtlCache<Loaded | undefined>(PRESENTATION_CONFIG_CACHE_MS);

  constructor(
    private readonly db: Executor,
    private readonly sealer: Sealer,
    private readonly audit: AuditService,
    private readonly keyChains: KeyChainService,
    private readonly webhookEndpoints: HttpEndpointService,
    /** The Standard Webhooks signing secrets of inline webhooks (owner `presentation-configuration:<id>`). */
    private readonly secrets: WebhookSecrets,
    /** Whether the tenant has federation settings (in its issuer settings), as `db` sees them. */
    private readonly hasFederationSettings: (tenantId: string, db: Executor) => Promise<boolean>,
    /** Why the outbound client would not fetch a URL (a trusted list named by etsi_tl); undefined when it would. */
    private readonly urlRefusal: (url: string) => string | undefined,
    private readonly clock: Clock,
    private readonly bus?: EventBus,
  ) {
    // A change made on any instance (this one included) reaches every instance's cache.
    if (bus) onTenantEvent(bus, CHANGED_TOPIC, (tenantId) => this.cache.forgetPrefix(`${tenantId}\u0000`));
    // What a configuration refers to cannot be deleted while it does.
    keyChains.onUsageCheck((db, tenantId, id) => this.referencing(db, tenantId, 'access_key_chain_id', id));
    webhookEndpoints.onUsageCheck((db, tenantId, id) => this.referencing(db, tenantId, 'webhook_endpoint_id', id));
  }

  private async referencing(db: Executor, tenantId: string, column: ReferenceColumn, id: string): Promise<string[]> {
    const ids = await store.idsReferencing(tenantDb(db, tenantId), column, id);
    return ids.map((configId) => `presentation configuration '${configId}'`);
  }

  /** Binds the sealed webhook to its row: copied into another row or tenant it no longer opens. */
  private sealingContext(tenantId: string, id: string) {
    return `presentation_configs:${tenantId}:${id}`;
  }

  private openWebhook(row: PresentationConfigRow): WebhookConfig | null {
    return row.webhook ? this.sealer.openJson<WebhookConfig>(row.webhook, this.sealingContext(row.tenant_id, row.id)) : null;
  }

  private load(row: PresentationConfigRow): Loaded {
    const doc = JSON.parse(row.document) as PresentationDocument;
    const webhook = this.openWebhook(row);
    const masked = webhook && { url: webhook.url, auth: maskAuth(webhook.auth) };
    const references = { webhookEndpointId: row.webhook_endpoint_id, accessKeyChainId: row.access_key_chain_id };
    return {
      row,
      settings: { ...doc, ...references, webhook },
      configuration: {
        id: row.id,
        tenantId: row.tenant_id,
        ...doc,
        registrationCertCache: parseJson<PresentationConfiguration['registrationCertCache']>(row.registration_cert_cache),
        ...references,
        webhook: masked,
        createdAt: row.created_at,
        updatedAt: row.updated_at,
      },
    };
  }

  /** Kept per instance (PRESENTATION_CONFIG_CACHE_MS), except in a transaction, which reads the row as it sees it. */
  private async findLoaded(tenantId: string, id: string, db: Executor): Promise<Loaded | undefined> {
    const read = async () => {
      const row = await store.findConfig(tenantDb(db, tenantId), id);
      return row && this.load(row);
    };
    return db === this.db ? this.cache.get(`${tenantId}\u0000${id}`, read) : read();
  }

  /** Forgets the tenant's cached configurations once `write` is done, here and (through the bus) on every instance. */
  private async changing<T>(tenantId: string, write: Promise<T>): Promise<T> {
    try {
      return await write;
    } finally {
      this.cache.forgetPrefix(`${tenantId}\u0000`);
      await this.bus?.publish(this.db, CHANGED_TOPIC, { tenantId });
    }
  }

  private async loaded(tenantId: string, id: string, db: Executor): Promise<Loaded> {
    const found = await this.findLoaded(tenantId, id, db);
    if (!found) throw notFound('presentation configuration', id);
    return found;
  }

  async list(tenantId: string, db: Executor = this.db): Promise<PresentationConfiguration[]> {
    return (await store.listConfigs(tenantDb(db, tenantId))).map((row) => this.load(row).configuration);
  }

  /**
   * Adds a rule a configuration must obey in its tenant beyond its own shape (a conformance profile):
   * run in the saving transaction (`db`) once its references resolve.
   */
  addCheck(check: PresentationConfigCheck) {
    this.checks.push(check);
  }

  /** As get(), but undefined when the tenant has no configuration of that id. */
  async find(tenantId: string, id: string, db: Executor = this.db): Promise<PresentationConfiguration | undefined> {
    return (await this.findLoaded(tenantId, id, db))?.configuration;
  }

  /** The configuration as the API shows it (a webhook header value masked); 404 when the tenant has none of that id. */
  async get(tenantId: string, id: string, db: Executor = this.db): Promise<PresentationConfiguration> {
    return (await this.loaded(tenantId, id, db)).configuration;
  }

  /**
   * Where the claims of a completed presentation go, with the headers that authenticate there and
   * the secrets that sign: the webhook endpoint referred to, else the deprecated inline webhook
   * (decrypted; unsigned when made before signing existed and never rotated); null when neither is set.
   */
  async resolveWebhook(
    tenantId: string,
    config: Pick<PresentationConfiguration, 'id' | 'webhookEndpointId' | 'webhook'>,
  ): Promise<ResolvedEndpoint | null> {
    if (config.webhookEndpointId) return this.webhookEndpoints.resolve(tenantId, config.webhookEndpointId);
    if (!config.webhook) return null;
    const row = await store.findConfig(tenantDb(this.db, tenantId), config.id);
    const webhook = row && this.openWebhook(row);
    if (!webhook) return null;
    return {
      url: webhook.url,
      headers: webhook.auth.type === 'header' ? { [webhook.auth.header.name]: webhook.auth.header.value } : {},
      signingSecrets: await this.secrets.signing(tenantId, configurationOwner(config.id)),
    };
  }

  /**
   * Keeps the inline webhook's signing secret in step with the webhook, in the writing transaction:
   * a new inline webhook, or one sent to another URL (another receiver), gets a fresh secret, which
   * the answer carries this once; no inline webhook (none, or a webhook endpoint instead, which signs
   * with its own) drops it. The same URL saved again keeps it, so its receiver goes on verifying.
   */
  private async followWebhook(
    trx: Executor,
    tenantId: string,
    id: string,
    before: WebhookConfig | null,
    after: WebhookConfig | null,
  ): Promise<{ webhookSigningSecret?: string }> {
    const owner = configurationOwner(id);
    if (!after) {
      await this.secrets.drop(trx, tenantId, owner);
      return {};
    }
    if (before?.url === after.url) return {};
    return { webhookSigningSecret: await this.secrets.issue(trx, tenantId, owner) };
  }

  /**
   * References that do not resolve in the tenant. Runs in the saving transaction: the webhook
   * endpoint referred to stays locked until it ends, so it cannot be deleted meanwhile.
   */
  private async referenceErrors(trx: Executor, tenantId: string, s: Settings): Promise<FieldError[]> {
    const errors: FieldError[] = [];
    if (s.accessKeyChainId) {
      const usageType = await this.keyChains.row(tenantId, s.accessKeyChainId, trx).then(
        (row) => row.usage_type,
        (err) => {
          if (err instanceof Problem && err.status === 404) return undefined;
          throw err;
        },
      );
      if (!usageType) errors.push({ field: 'body.accessKeyChainId', message: `key chain '${s.accessKeyChainId}' does not exist` });
      else if (usageType !== 'access') {
        errors.push({
          field: 'body.accessKeyChainId',
          message: `key chain '${s.accessKeyChainId}' has usage type ${usageType}; requests are signed with access key chains`,
        });
      }
    }
    if (s.webhookEndpointId && !(await this.webhookEndpoints.lockForReference(trx, tenantId, s.webhookEndpointId))) {
      errors.push({ field: 'body.webhookEndpointId', message: `webhook endpoint '${s.webhookEndpointId}' does not exist` });
    }
    if (s.webhookEndpointId && s.webhook) {
      errors.push({ field: 'body.webhook', message: 'is deprecated and cannot be set together with webhookEndpointId; set one of them' });
    }
    return errors;
  }

  /**
   * trusted_authorities of type openid_federation are decided by the tenant's federation settings:
   * without them no presentation could ever pass, so such a query is refused when it is saved.
   */
  private async federationErrors(trx: Executor, tenantId: string, s: Settings): Promise<FieldError[]> {
    const { federationAuthorityFields } = await documentChecks();
    const fields = federationAuthorityFields(s.dcql_query);
    if (fields.length === 0 || (await this.hasFederationSettings(tenantId, trx))) return [];
    return fields.map((field) => ({
      field,
      message:
        "openid_federation needs the tenant's federation settings, and it has none: set federation in the trust settings (PUT /api/trust-config) first",
    }));
  }

  private async check(trx: Executor, tenantId: string, settings: Settings, stored: WebhookConfig | null, extra: FieldError[] = []) {
    const { checkDocument, trustedListUrls } = await documentChecks();
    const errors = [...extra, ...checkDocument(settings, this.clock.now()), ...unmaskWebhook(settings, stored)];
    // A trusted list the outbound client would never fetch could never admit a credential.
    for (const { field, url } of trustedListUrls(settings.dcql_query)) {
      const refusal = this.urlRefusal(url);
      if (refusal) errors.push({ field, message: `etsi_tl: the trusted list URL ${refusal}` });
    }
    errors.push(...(await this.referenceErrors(trx, tenantId, settings)), ...(await this.federationErrors(trx, tenantId, settings)));
    for (const check of errors.length ? [] : this.checks) errors.push(...(await check(tenantId, settings, trx)));
    if (errors.length) throw invalidFields(errors);
  }

  private columns(tenantId: string, id: string, s: Settings) {
    return {
      document: JSON.stringify(documentOf(s)),
      webhook_endpoint_id: s.webhookEndpointId,
      access_key_chain_id: s.accessKeyChainId,
      webhook: s.webhook && this.sealer.sealJson(s.webhook, this.sealingContext(tenantId, id)),
    };
  }

  /**
   * POST: creates the configuration, or replaces the one with this id as a whole (fields not given
   * take their defaults; createdAt and the registration certificate cache are kept).
   */
  async save(
    ctx: RequestContext,
    tenantId: string,
    input: SavePresentationConfiguration,
    db: Executor = this.db,
  ): Promise<{ created: boolean; configuration: SavedPresentationConfiguration }> {
    return this.changing(
      tenantId,
      inTransaction(db, async (trx) => {
        await store.lockConfig(tenantDb(trx, tenantId), input.id);
        const existing = await this.findLoaded(tenantId, input.id, trx);
        if (existing) return { created: false, configuration: await this.replace(ctx, tenantId, existing, toSettings(input), input, trx) };
        const settings = toSettings(input);
        await this.check(trx, tenantId, settings, null);
        const now = this.clock.now().toISOString();
        const row = {
          id: input.id,
          ...this.columns(tenantId, input.id, settings),
          registration_cert_cache: null,
          created_at: now,
          updated_at: now,
        };
        if (!(await store.insertConfigIfAbsent(tenantDb(trx, tenantId), row))) {
          // Created concurrently since find(): replace that one, as if it had been there first.
          const raced = await this.loaded(tenantId, input.id, trx);
          return { created: false, configuration: await this.replace(ctx, tenantId, raced, toSettings(input), input, trx) };
        }
        const created = await this.get(tenantId, input.id, trx);
        await this.audit.record(ctx, { tenantId, actionType: 'presentation_config.created', after: { ...created } }, trx);
        const secret = await this.followWebhook(trx, tenantId, input.id, null, settings.webhook);
        return { created: true, configuration: { ...created, ...secret } };
      }),
    );
  }

  /** Whether save() would leave the stored configuration as it is (a header value of **** stands for the stored one). */
  async isCurrent(tenantId: string, input: SavePresentationConfiguration, db: Executor = this.db): Promise<boolean> {
    const existing = await this.findLoaded(tenantId, input.id, db);
    if (!existing) return false;
    const wanted = toSettings(structuredClone(input));
    if (unmaskWebhook(wanted, existing.settings.webhook).length) return false;
    const plain = (settings: Settings) => JSON.parse(JSON.stringify(settings));
    return isDeepStrictEqual(plain(wanted), plain(existing.settings));
  }

  /** PATCH: the fields given replace the stored ones (null clears or resets to the default), dcql_query as a whole. */
  async update(
    ctx: RequestContext,
    tenantId: string,
    id: string,
    input: UpdatePresentationConfiguration,
  ): Promise<SavedPresentationConfiguration> {
    return this.changing(
      tenantId,
      inTransaction(this.db, async (trx) => {
        await store.lockConfig(tenantDb(trx, tenantId), id);
        const before = await this.loaded(tenantId, id, trx);
        const { id: givenId, ...changes } = input;
        const given = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
        // The stored webhook carries its secret already: re-saving it unchanged must not read as a masked value.
        const settings = toSettings({ ...before.settings, ...given } as Input);
        const errors: FieldError[] = [];
        if (givenId !== undefined && givenId !== id) {
          errors.push({ field: 'body.id', message: `cannot change: the path names presentation configuration '${id}'` });
        }
        return this.replace(ctx, tenantId, before, settings, input, trx, errors);
      }),
    );
  }

  private async replace(
    ctx: RequestContext,
    tenantId: string,
    before: Loaded,
    settings: Settings,
    input: Input | UpdatePresentationConfiguration,
    trx: Executor,
    errors: FieldError[] = [],
  ): Promise<SavedPresentationConfiguration> {
    const id = before.row.id;
    await this.check(trx, tenantId, settings, before.settings.webhook, errors);
    // The cached certificate was obtained for the stored request; another request needs another certificate.
    const certChanged = JSON.stringify(settings.registration_cert) !== JSON.stringify(before.settings.registration_cert);
    await store.updateConfig(tenantDb(trx, tenantId), id, {
      ...this.columns(tenantId, id, settings),
      ...(certChanged && { registration_cert_cache: null }),
      updated_at: this.clock.now().toISOString(),
    });
    const after = await this.get(tenantId, id, trx);
    const afterView = { ...after, ...(replacesSecret(input) && { webhookAuthReplaced: true }) };
    await this.audit.record(
      ctx,
      { tenantId, actionType: 'presentation_config.updated', before: { ...before.configuration }, after: afterView },
      trx,
    );
    return { ...after, ...(await this.followWebhook(trx, tenantId, id, before.settings.webhook, settings.webhook)) };
  }

  /**
   * Written by the registrar feature: server state, not a change of the configuration (no audit
   * entry, updatedAt kept). Only while registration_cert is still the one the certificate was
   * obtained for, so a certificate for a replaced request is not stored over its change.
   */
  async storeRegistrationCertCache(
    tenantId: string,
    id: string,
    obtainedFor: PresentationConfiguration['registration_cert'],
    cache: RegistrationCertCache,
  ): Promise<void> {
    await this.changing(
      tenantId,
      inTransaction(this.db, async (trx) => {
        const current = await this.loaded(tenantId, id, trx);
        if (JSON.stringify(current.settings.registration_cert) !== JSON.stringify(obtainedFor)) return;
        await store.updateConfig(tenantDb(trx, tenantId), id, { registration_cert_cache: JSON.stringify(cache) });
      }),
    );
  }

  async remove(ctx: RequestContext, tenantId: string, id: string): Promise<void> {
    await this.changing(
      tenantId,
      inTransaction(this.db, async (trx) => {
        const before = await this.get(tenantId, id, trx);
        await store.deleteConfig(tenantDb(trx, tenantId), id);
        await this.audit.record(ctx, { tenantId, actionType: 'presentation_config.deleted', before: { ...before } }, trx);
        await this.secrets.drop(trx, tenantId, configurationOwner(id));
      }),
    );
  }

  /**
   * A new signing secret for the inline webhook, answered this once; the previous one keeps signing
   * beside it for WEBHOOK_SECRET_ROTATION_GRACE_SECONDS. A configuration whose webhook was stored
   * before signing existed gets its first. 409 without an inline webhook: nothing of this
   * configuration's would be signed with it (a webhook endpoint signs with its own secret).
   */
  async rotateWebhookSecret(ctx: RequestContext, tenantId: string, id: string): Promise<{ webhookSigningSecret: string }> {
    return inTransaction(this.db, async (trx) => {
      // Locked first: a concurrent change that removes the webhook is either seen here or waits for this rotation.
      await store.lockConfig(tenantDb(trx, tenantId), id);
      const { settings } = await this.loaded(tenantId, id, trx);
      if (!settings.webhook) {
        const instead = settings.webhookEndpointId
          ? `its webhook endpoint '${settings.webhookEndpointId}' signs with its own secret (POST /api/issuer/webhook-endpoints/${settings.webhookEndpointId}/rotate-secret)`
          : 'it sends no webhook';
        throw conflict(`presentation configuration '${id}' has no inline webhook whose secret could be rotated: ${instead}`);
      }
      const webhookSigningSecret = await this.secrets.rotate(trx, tenantId, configurationOwner(id));
      await this.audit.record(ctx, { tenantId, actionType: 'presentation_config.webhook_secret_rotated', after: { id } }, trx);
      return { webhookSigningSecret };
    });
  }
}
