// Credential configurations: what a tenant issues (format, display, fields, signing key chain, where
// the claims come from). The document is stored as JSON; its references are repeated in indexed
// columns, so that a key chain, attribute provider or webhook endpoint in use cannot be deleted.

import { isDeepStrictEqual } from 'node:util';
import type { AuditService } from '../audit/service.js';
import type { HttpEndpointService } from '../http-endpoints/service.js';
import type { KeyChainService } from '../key-chains/service.js';
import type { RequestContext } from '../platform/auth/principal.js';
import type { Clock } from '../platform/clock.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import { type Executor, inTransaction, isUniqueViolation } from '../platform/db/values.js';
import { type EventBus, onTenantEvent } from '../platform/events/bus.js';
import { conflict, type FieldError, invalidFields, notFound } from '../platform/http/problem.js';
import { TtlCache } from '../platform/ttl-cache.js';
import { checkConfiguration } from './checks.js';
import type {
  ConfigurationDocument,
  CreateCredentialConfiguration,
  CredentialConfiguration,
  StatusListSigner,
  UpdateCredentialConfiguration,
} from './schemas.js';
import type { CredentialConfigRow, ReferenceColumn } from './store.js';
import * as store from './store.js';

/**
 * How long an instance keeps a configuration it read: every offer and credential request needs it.
 * A change made on this instance is seen at once, one made on another as soon as its event arrives
 * over the shared bus, and within this bound even if that event were lost (the issuer settings'
 * ISSUER_CACHE_MS).
 */
export const CONFIG_CACHE_MS = 1_000;
/** Announces on the bus that a tenant's configurations changed; payload { tenantId }. */
const CHANGED_TOPIC = 'credential-configs:changed';

export { type ClaimProblem, type ClaimsSchema, claimsSchema, defaultClaims, validateClaims } from './fields.js';
export type { CredentialConfiguration, FieldDefinition } from './schemas.js';

type Input = Omit<CreateCredentialConfiguration, 'id'>;
/** A tenant's rule over a configuration's stored document; answers what it breaks. */
export type ConfigurationCheck = (tenantId: string, doc: ConfigurationDocument, db: Executor) => Promise<FieldError[]>;

/** The stored document of the input for configuration `id`: defaults applied (the scope is the id), the removed version-4 keys gone. */
function toDocument(id: string, input: Input): ConfigurationDocument {
  const { namespace: _n, claimsByNamespace: _c, claimsMetadata: _m, ...config } = input.config;
  return {
    description: input.description ?? null,
    config: { ...config, scope: config.scope ?? id },
    fields: input.fields,
    vct: input.vct ?? null,
    iaeActions: input.iaeActions ?? null,
    schemaMeta: input.schemaMeta ?? null,
    embeddedDisclosurePolicy: input.embeddedDisclosurePolicy ?? null,
    attributeProviderId: input.attributeProviderId ?? null,
    webhookEndpointId: input.webhookEndpointId ?? null,
    keyBinding: input.keyBinding ?? true,
    keyChainId: input.keyChainId ?? null,
    statusManagement: input.statusManagement ?? false,
    statusListSigner: input.statusListSigner ?? 'statusList',
    sdJwtTrustFormat: input.sdJwtTrustFormat ?? 'x5c',
    lifeTime: input.lifeTime ?? null,
  };
}

function documentOf(configuration: CredentialConfiguration): ConfigurationDocument {
  const { id: _id, tenantId: _t, createdAt: _c, updatedAt: _u, ...doc } = configuration;
  return doc;
}

/** PATCH: the top-level fields given replace the stored ones (null clears), config and fields as a whole. */
function applyUpdate(id: string, before: ConfigurationDocument, input: UpdateCredentialConfiguration): ConfigurationDocument {
  const { id: _id, ...changes } = input;
  const given = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
  return toDocument(id, { ...before, ...given } as Input);
}

/** The columns that repeat values of the document: the references (indexed) and the scope (unique in the tenant). */
const repeatedColumns = (doc: ConfigurationDocument) => ({
  key_chain_id: doc.keyChainId,
  attribute_provider_id: doc.attributeProviderId,
  webhook_endpoint_id: doc.webhookEndpointId,
  scope: doc.config.scope ?? null,
});

const scopeTaken = (scope: string, holder: string): FieldError => ({
  field: 'body.config.scope',
  message: `'${scope}' is already the scope of credential configuration '${holder}': a scope names one configuration of the tenant`,
});

/** The unique index on (tenant_id, scope) refused the row: a writer that ran alongside took the scope first. */
function isScopeViolation(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string; message?: string };
  return e?.constraint === 'credential_configs_scope_uq' || (e?.code === 'SQLITE_CONSTRAINT_UNIQUE' && /\.scope\b/.test(e.message ?? ''));
}

export interface StatusListSigning {
  /** The attestation key chain that signs the credentials. */
  keyChainId: string;
  statusListSigner: StatusListSigner;
}

export class CredentialConfigService {
  private readonly changeListeners: ((tenantId: string) => void)[] = [];
  private readonly checks: ConfigurationCheck[] = [];
  private readonly cache = new TtlCache<CredentialConfiguration | undefined>(CONFIG_CACHE_MS);
  /** Each tenant's list, kept and forgotten as the single configurations are (read by the metadata, PAR and the API). */
  private readonly lists = new TtlCache<CredentialConfiguration[]>(CONFIG_CACHE_MS);

  constructor(
    private readonly db: Executor,
    private readonly audit: AuditService,
    private readonly keyChains: KeyChainService,
    private readonly attributeProviders: HttpEndpointService,
    private readonly webhookEndpoints: HttpEndpointService,
    private readonly clock: Clock,
    private readonly bus?: EventBus,
  ) {
    // A change made on any instance (this one included) reaches every instance's caches.
    if (bus) onTenantEvent(bus, CHANGED_TOPIC, (tenantId) => this.forget(tenantId));
    // What a configuration refers to cannot be deleted while it does.
    keyChains.onUsageCheck((db, tenantId, id) => this.referencing(db, tenantId, 'key_chain_id', id));
    attributeProviders.onUsageCheck((db, tenantId, id) => this.referencing(db, tenantId, 'attribute_provider_id', id));
    webhookEndpoints.onUsageCheck((db, tenantId, id) => this.referencing(db, tenantId, 'webhook_endpoint_id', id));
  }

  /** Called after a tenant's configurations changed, on this instance or (through the bus) another (caches forget what they derived from them). */
  onChange(listener: (tenantId: string) => void) {
    this.changeListeners.push(listener);
  }

  private forget(tenantId: string) {
    this.cache.forgetPrefix(`${tenantId}\u0000`);
    this.lists.forget(tenantId);
    for (const listener of this.changeListeners) listener(tenantId);
  }

  private async changed<T>(tenantId: string, result: T): Promise<T> {
    this.forget(tenantId);
    await this.bus?.publish(this.db, CHANGED_TOPIC, { tenantId });
    return result;
  }

  private async referencing(db: Executor, tenantId: string, column: ReferenceColumn, id: string): Promise<string[]> {
    const ids = await store.idsReferencing(tenantDb(db, tenantId), column, id);
    return ids.map((configId) => `credential configuration '${configId}'`);
  }

  private toConfiguration(row: CredentialConfigRow): CredentialConfiguration {
    const doc = JSON.parse(row.document) as ConfigurationDocument;
    // Documents stored before statusListSigner existed have the default.
    const statusListSigner = doc.statusListSigner ?? 'statusList';
    return { id: row.id, tenantId: row.tenant_id, ...doc, statusListSigner, createdAt: row.created_at, updatedAt: row.updated_at };
  }

  /**
   * The tenant's configurations; shared by callers (kept per instance, as `find` keeps each): not to be
   * changed. In a transaction (`db`), read as it sees them.
   */
  list(tenantId: string, db: Executor = this.db): Promise<CredentialConfiguration[]> {
    const read = async () => (await store.listConfigs(tenantDb(db, tenantId))).map((row) => this.toConfiguration(row));
    return db === this.db ? this.lists.get(tenantId, read) : read();
  }

  /**
   * Adds a rule a configuration must obey in its tenant beyond its own shape (a conformance profile):
   * run in the saving transaction (`db`) on the document as it would be stored.
   */
  addCheck(check: ConfigurationCheck) {
    this.checks.push(check);
  }

  private async checkErrors(tenantId: string, doc: ConfigurationDocument, db: Executor): Promise<FieldError[]> {
    const errors: FieldError[] = [];
    for (const check of this.checks) errors.push(...(await check(tenantId, doc, db)));
    return errors;
  }

  async get(tenantId: string, id: string, db: Executor = this.db): Promise<CredentialConfiguration> {
    const configuration = await this.find(tenantId, id, db);
    if (!configuration) throw notFound('credential configuration', id);
    return configuration;
  }

  /**
   * Undefined when the tenant has no such configuration. Kept per instance (CONFIG_CACHE_MS), except
   * in a transaction, which reads the row as it sees it.
   */
  async find(tenantId: string, id: string, db: Executor = this.db): Promise<CredentialConfiguration | undefined> {
    const read = async () => {
      const row = await store.findConfig(tenantDb(db, tenantId), id);
      return row && this.toConfiguration(row);
    };
    return db === this.db ? this.cache.get(`${tenantId}\u0000${id}`, read) : read();
  }

  /** The attestation key chain that signs a configuration's credentials, and who signs their status lists. */
  async statusListSigning(tenantId: string, id: string): Promise<StatusListSigning | undefined> {
    const configuration = await this.find(tenantId, id);
    if (!configuration) return undefined;
    const keyChainId = configuration.keyChainId ?? (await this.keyChains.resolve(tenantId, { usageType: 'attestation' })).id;
    return { keyChainId, statusListSigner: configuration.statusListSigner };
  }

  /**
   * References that do not resolve in the tenant. Runs in the saving transaction: the endpoints
   * referred to stay locked until it ends, so they cannot be deleted meanwhile.
   */
  private async referenceErrors(trx: Executor, tenantId: string, doc: ConfigurationDocument): Promise<FieldError[]> {
    const errors: FieldError[] = [];
    if (doc.keyChainId) {
      const expected = {
        usageType: 'attestation',
        field: 'body.keyChainId',
        purpose: 'credentials are signed with attestation key chains',
      } as const;
      const error = await this.keyChains.referenceError(tenantId, doc.keyChainId, expected, trx);
      if (error) errors.push(error);
    }
    for (const [field, id, endpoints] of [
      ['attributeProviderId', doc.attributeProviderId, this.attributeProviders],
      ['webhookEndpointId', doc.webhookEndpointId, this.webhookEndpoints],
    ] as const) {
      if (id && !(await endpoints.lockForReference(trx, tenantId, id))) {
        errors.push({ field: `body.${field}`, message: `${endpoints.kind.label} '${id}' does not exist` });
      }
    }
    return errors;
  }

  /**
   * The scope must name no other configuration of the tenant: said here with the holder's id. The
   * unique index decides between writers that check at the same time (rethrowScopeViolation).
   */
  private async scopeErrors(trx: Executor, tenantId: string, id: string, doc: ConfigurationDocument): Promise<FieldError[]> {
    const scope = doc.config.scope;
    const holder = scope === undefined ? undefined : await store.configHoldingScope(tenantDb(trx, tenantId), scope, id);
    return scope !== undefined && holder !== undefined ? [scopeTaken(scope, holder)] : [];
  }

  private rethrowScopeViolation(err: unknown, doc: ConfigurationDocument) {
    if (isScopeViolation(err)) {
      throw invalidFields([
        { field: 'body.config.scope', message: `'${doc.config.scope}' was just taken by another configuration of the tenant` },
      ]);
    }
  }

  async create(
    ctx: RequestContext,
    tenantId: string,
    input: CreateCredentialConfiguration,
    db: Executor = this.db,
  ): Promise<CredentialConfiguration> {
    const doc = toDocument(input.id, input);
    const errors = checkConfiguration(doc);
    const saved = await inTransaction(db, async (trx) => {
      errors.push(...(await this.referenceErrors(trx, tenantId, doc)), ...(await this.scopeErrors(trx, tenantId, input.id, doc)));
      if (!errors.length) errors.push(...(await this.checkErrors(tenantId, doc, trx)));
      if (errors.length) throw invalidFields(errors);
      // Asked first: a duplicate holds the same default scope, and the index on the scope may be the
      // one SQLite names when both refuse the row. The primary key still decides a race.
      const exists = `credential configuration '${input.id}' already exists`;
      if (await store.findConfig(tenantDb(trx, tenantId), input.id)) throw conflict(exists);
      const now = this.clock.now().toISOString();
      try {
        await store.insertConfig(tenantDb(trx, tenantId), {
          id: input.id,
          document: JSON.stringify(doc),
          ...repeatedColumns(doc),
          created_at: now,
          updated_at: now,
        });
      } catch (err) {
        this.rethrowScopeViolation(err, doc);
        if (isUniqueViolation(err)) throw conflict(exists);
        throw err;
      }
      const created = await this.get(tenantId, input.id, trx);
      await this.audit.record(ctx, { tenantId, actionType: 'credential_config.created', after: { ...created } }, trx);
      return created;
    });
    return this.changed(tenantId, saved);
  }

  async update(
    ctx: RequestContext,
    tenantId: string,
    id: string,
    input: UpdateCredentialConfiguration,
    db: Executor = this.db,
  ): Promise<CredentialConfiguration> {
    const updated = await inTransaction(db, async (trx) => {
      const before = await this.get(tenantId, id, trx);
      const doc = applyUpdate(id, documentOf(before), input);
      const errors: FieldError[] = [];
      if (input.id !== undefined && input.id !== id) {
        errors.push({ field: 'body.id', message: `cannot change: the path names credential configuration '${id}'` });
      }
      errors.push(
        ...checkConfiguration(doc),
        ...(await this.referenceErrors(trx, tenantId, doc)),
        ...(await this.scopeErrors(trx, tenantId, id, doc)),
      );
      if (!errors.length) errors.push(...(await this.checkErrors(tenantId, doc, trx)));
      if (errors.length) throw invalidFields(errors);
      try {
        await store.updateConfig(tenantDb(trx, tenantId), id, {
          document: JSON.stringify(doc),
          ...repeatedColumns(doc),
          updated_at: this.clock.now().toISOString(),
        });
      } catch (err) {
        this.rethrowScopeViolation(err, doc);
        throw err;
      }
      const after = await this.get(tenantId, id, trx);
      await this.audit.record(ctx, { tenantId, actionType: 'credential_config.updated', before: { ...before }, after: { ...after } }, trx);
      return after;
    });
    return this.changed(tenantId, updated);
  }

  /**
   * Creates the configuration, or replaces the one with this id as a whole: what the input leaves out
   * takes its default, as on create. Nothing is written when the stored configuration already is that.
   */
  async save(
    ctx: RequestContext,
    tenantId: string,
    input: CreateCredentialConfiguration,
    db: Executor = this.db,
  ): Promise<'created' | 'updated' | 'unchanged'> {
    return inTransaction(db, async (trx) => {
      const row = await store.findConfig(tenantDb(trx, tenantId), input.id);
      if (!row) {
        await this.create(ctx, tenantId, input, trx);
        return 'created';
      }
      const doc = toDocument(input.id, input);
      if (isDeepStrictEqual(JSON.parse(row.document), JSON.parse(JSON.stringify(doc)))) return 'unchanged';
      // The document states every field, so the update replaces the whole configuration; schemaMeta is
      // the validated input's (the stored document's type is looser: older documents kept any object).
      await this.update(ctx, tenantId, input.id, { ...doc, schemaMeta: input.schemaMeta ?? null }, trx);
      return 'updated';
    });
  }

  async remove(ctx: RequestContext, tenantId: string, id: string): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      const before = await this.get(tenantId, id, trx);
      await store.deleteConfig(tenantDb(trx, tenantId), id);
      await this.audit.record(ctx, { tenantId, actionType: 'credential_config.deleted', before: { ...before } }, trx);
    });
    await this.changed(tenantId, undefined);
  }
}
