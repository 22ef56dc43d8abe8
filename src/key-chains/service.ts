// Key chains: a tenant's signing and encryption keys with their certificates, created, imported,
// rotated and deleted here. Signing with them goes through SigningService.

import { randomUUID } from 'node:crypto';
import type { JWK } from 'jose';
import type { AuditService } from '../audit/service.js';
import type { Principal, RequestContext } from '../platform/auth/principal.js';
import type { Clock } from '../platform/clock.js';
import type { SigningAlgorithm } from '../platform/crypto/algorithms.js';
import { parsePemChain, toPem } from '../platform/crypto/x509.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import { type Executor, fromBool, inTransaction, isUniqueViolation, toBool } from '../platform/db/values.js';
import { badRequest, conflict, type FieldError, invalidFields, notFound } from '../platform/http/problem.js';
import { maxCommonName, type Subject } from './certificates.js';
import { checkChainForKey, checkImportableJwk, checkProvider, checkRootForKey, leafIsSelfSigned, subjectErrors } from './checks.js';
import { type ChainIdentity, type KeyMaterial, type MintedKey, rotatedKeyRef, sealingContext } from './material.js';
import { type ChainType, type KeyChain, USAGE_OF, type UsageType } from './model.js';
import type { DbKeyProvider } from './providers/db/provider.js';
import { escapeId, type KeyPlace } from './providers/key-names.js';
import type { KeyProvider, StoredKey } from './providers/key-provider.js';
import type { KeyChainRow } from './store.js';
import * as store from './store.js';

export interface KeyChainSettings {
  description?: string | null;
  rotationEnabled?: boolean;
  rotationIntervalDays?: number;
  certValidityDays?: number;
  default?: boolean;
}

export interface CreateKeyChain extends KeyChainSettings {
  id?: string;
  usageType: UsageType;
  /** imported: the provider's key with the certificate chain the provider issued (a provider that issuesCertificates, csc). */
  type: 'standalone' | 'internalChain' | 'imported';
  algorithm?: SigningAlgorithm;
  subject?: Partial<Subject>;
  kmsProvider?: string;
  externalKeyId?: string | null;
}

export interface ImportKeyChain extends KeyChainSettings {
  id?: string;
  usageType: UsageType;
  privateJwk: JWK;
  /** PEM, leaf first; without it a self-signed certificate is made for the key. */
  certificateChain?: string;
  subject?: Partial<Subject>;
}

export interface UpdateKeyChain extends KeyChainSettings {
  /** A new certificate chain (PEM, leaf first) for the same active key, for example one issued by a registrar. */
  certificate?: string;
  /** Another key of the chain's provider to sign with, with its certificates (providers that issuesCertificates: csc). */
  externalKeyId?: string;
}

/** What POST /api/key-chain/move-to-ca did: the chains now under a root CA, and the self-signed ones left, with why. */
export interface MoveToCaResult {
  moved: KeyChain[];
  skipped: { id: string; reason: string }[];
}

/** Names what uses a key chain (for the 409 on delete); empty when nothing does. */
export type KeyChainUsageCheck = (db: Executor, tenantId: string, keyChainId: string) => Promise<string[]>;
/**
 * A tenant's rule over a chain that became its default or got a new certificate (a conformance
 * profile), run in the transaction that changes it; `field` is the request field that made the change.
 */
export type KeyChainChangeCheck = (tenantId: string, chain: KeyChain, field: string, db: Executor) => Promise<FieldError[]>;
/** Called after a rotation (or a move under a CA), so that features re-sign what they serve (status lists, trust lists). */
export type RotationListener = (tenantId: string, keyChainId: string) => Promise<void>;

/**
 * What a new tenant gets: one key chain per usage type, each its tenant's default; but a federation
 * key chain only when the tenant first takes part in a federation (ensureDefault). Every one is an
 * internal chain, a root CA of its own signing the leaf: HAIP 1.0 forbids a self-signed certificate
 * in the x5c of SD-JWT VCs, status list tokens, request objects and signed metadata (sections 4.1,
 * 5, 6.1, 6.1.1). A root per chain rather than one for the tenant keeps the uses apart: the IACA of
 * mdoc signs only document signers, and a verifier that trusts the status list root is not made to
 * trust the access certificates.
 */
const TENANT_DEFAULT_USAGES: readonly UsageType[] = ['attestation', 'access', 'statusList', 'trustList', 'encrypt'];
const DEFAULT_CHAIN_TYPE = 'internalChain';

/** `{tenant} {usage type}`, the tenant id shortened where the name would not fit (an internal chain's root CA adds to it). */
function defaultCommonName(tenantId: string, usageType: UsageType) {
  const suffix = ` ${usageType}`;
  return `${tenantId.slice(0, maxCommonName(true) - suffix.length)}${suffix}`;
}

const SCHEDULER: Principal = { clientId: 'system:scheduler', tenantId: null, roles: [] };
const DAY = 86_400_000;
const RESOLVE_TTL_MS = 5_000;
const PROVIDER_CHECK_MS = 3_000;

type Made = { type: ChainType; kmsProvider: string; root?: MintedKey; leaf: MintedKey; chainPem: string; rootCertificate?: string | null };

/** The audit snapshot: configuration, not key material. */
const auditView = (k: KeyChain) => ({
  id: k.id,
  usageType: k.usageType,
  type: k.type,
  default: k.default,
  algorithm: k.algorithm,
  kmsProvider: k.kmsProvider,
  description: k.description,
  rotationEnabled: k.rotationEnabled,
  rotationIntervalDays: k.rotationIntervalDays,
  certValidityDays: k.certValidityDays,
  activeKid: k.activeJwk.kid ?? null,
  lastRotatedAt: k.lastRotatedAt,
});

export class KeyChainService {
  private readonly usageChecks: KeyChainUsageCheck[] = [];
  private readonly changeChecks: KeyChainChangeCheck[] = [];
  private readonly rotationListeners: RotationListener[] = [];
  private readonly resolved = new Map<string, { row: KeyChainRow; until: number }>();
  /** Signed CRLs by CA key, re-made hourly (each is valid for a week). */
  private readonly crls = new Map<string, { crl: Uint8Array; until: number }>();

  constructor(
    private readonly db: Executor,
    private readonly providers: Map<string, KeyProvider>,
    private readonly material: KeyMaterial,
    private readonly audit: AuditService,
    private readonly defaults: { country: string; kmsProvider: string },
    /** Stamps changes, names rotated keys, and decides which chains are due for rotation. */
    private readonly clock: Clock,
  ) {}

  onUsageCheck(check: KeyChainUsageCheck) {
    this.usageChecks.push(check);
  }
  onChangeCheck(check: KeyChainChangeCheck) {
    this.changeChecks.push(check);
  }

  private async checkChange(tenantId: string, chain: KeyChain, field: string, db: Executor) {
    const errors: FieldError[] = [];
    for (const check of this.changeChecks) errors.push(...(await check(tenantId, chain, field, db)));
    if (errors.length) throw invalidFields(errors);
  }

  onRotated(listener: RotationListener) {
    this.rotationListeners.push(listener);
  }

  provider(name: string): KeyProvider {
    const provider = this.providers.get(name);
    if (!provider) throw new Error(`key provider '${name}' is not configured`);
    return provider;
  }

  storedKey(row: KeyChainRow, which: 'active' | 'root' | 'previous'): StoredKey | undefined {
    const sealed = { active: row.active_jwk, root: row.root_jwk, previous: row.previous_jwk }[which];
    if (!sealed) return undefined;
    return { sealedJwk: sealed, externalKeyId: row.external_key_id, context: sealingContext(row.tenant_id, row.id) };
  }

  /**
   * Whether a private key sealed in the database opens with this MASTER_SECRET; undefined when no
   * key is sealed here. One query; for the start-up check of a database made before it kept a check value.
   */
  async sealedKeyOpens(): Promise<boolean | undefined> {
    const row = await store.anySealedKey(this.db);
    if (!row) return undefined;
    try {
      this.provider('db').publicJwk({ sealedJwk: row.active_jwk, externalKeyId: null, context: sealingContext(row.tenant_id, row.id) });
      return true;
    } catch {
      return false;
    }
  }

  toKeyChain(row: KeyChainRow): KeyChain {
    const provider = this.provider(row.kms_provider);
    const jwk = (which: 'active' | 'root' | 'previous') => {
      const key = this.storedKey(row, which);
      return key ? provider.publicJwk(key) : null;
    };
    return {
      id: row.id,
      tenantId: row.tenant_id,
      description: row.description,
      usageType: row.usage_type as UsageType,
      usage: row.usage as 'sign' | 'encrypt',
      type: row.chain_type as ChainType,
      default: fromBool(row.is_default),
      algorithm: row.algorithm as SigningAlgorithm,
      kmsProvider: row.kms_provider,
      externalKeyId: row.external_key_id,
      subject: JSON.parse(row.subject) as Subject,
      rootJwk: jwk('root'),
      rootCertificate: row.root_certificate,
      activeJwk: jwk('active') as JWK,
      activeCertificate: row.active_certificate,
      previousJwk: jwk('previous'),
      previousCertificate: row.previous_certificate,
      previousKeyExpiry: row.previous_key_expiry,
      rotationEnabled: fromBool(row.rotation_enabled),
      rotationIntervalDays: row.rotation_interval_days,
      certValidityDays: row.cert_validity_days,
      lastRotatedAt: row.last_rotated_at,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  async list(tenantId: string, usageType?: string): Promise<KeyChain[]> {
    return (await store.listKeyChains(tenantDb(this.db, tenantId), usageType)).map((row) => this.toKeyChain(row));
  }

  /**
   * Why `id` cannot be referred to where a chain of `usageType` is needed (it does not exist, or is
   * for another use), as the field error of `field`; undefined when it can. `purpose` ends the message.
   */
  async referenceError(
    tenantId: string,
    id: string,
    expected: { usageType: UsageType; field: string; purpose: string },
    db: Executor = this.db,
  ): Promise<FieldError | undefined> {
    const row = await store.findKeyChain(tenantDb(db, tenantId), id);
    if (!row) return { field: expected.field, message: `key chain '${id}' does not exist` };
    if (row.usage_type === expected.usageType) return undefined;
    return { field: expected.field, message: `key chain '${id}' has usage type ${row.usage_type}; ${expected.purpose}` };
  }

  async row(tenantId: string, id: string, db: Executor = this.db): Promise<KeyChainRow> {
    const row = await store.findKeyChain(tenantDb(db, tenantId), id);
    if (!row) throw notFound('key chain', id);
    return row;
  }

  /**
   * The chain a feature uses: the one named, else the tenant's default for the usage type. Cached for
   * a few seconds because signing is hot; changes made here clear the tenant's entries at once, and a
   * rotation on another instance is seen within RESOLVE_TTL_MS (the previous key stays valid meanwhile).
   */
  async resolve(tenantId: string, ref: { keyChainId?: string | null; usageType: UsageType }): Promise<KeyChainRow> {
    const cacheKey = `${tenantId}\u0000${ref.keyChainId ?? `default:${ref.usageType}`}`;
    const cached = this.resolved.get(cacheKey);
    // An in-process cache's age: the system clock (see src/platform/ttl-cache.ts).
    if (cached && cached.until > Date.now()) return cached.row;
    let row: KeyChainRow | undefined;
    if (ref.keyChainId) row = await this.row(tenantId, ref.keyChainId);
    else row = await store.findDefaultKeyChain(tenantDb(this.db, tenantId), ref.usageType);
    if (!row) throw conflict(`the tenant has no default key chain of usage type ${ref.usageType}`);
    if (this.resolved.size > 10_000) this.resolved.clear();
    this.resolved.set(cacheKey, { row, until: Date.now() + RESOLVE_TTL_MS });
    return row;
  }

  private forgetResolved(tenantId: string) {
    for (const key of this.resolved.keys()) if (key.startsWith(`${tenantId}\u0000`)) this.resolved.delete(key);
  }

  /**
   * The chain a feature would use (the one named, else the tenant's default of the usage type) as
   * `db` sees it, uncached: for checks made inside the transaction that saves what refers to it.
   */
  async chainInUse(tenantId: string, ref: { keyChainId?: string | null; usageType: UsageType }, db: Executor = this.db) {
    const scoped = tenantDb(db, tenantId);
    const row = ref.keyChainId ? await store.findKeyChain(scoped, ref.keyChainId) : await store.findDefaultKeyChain(scoped, ref.usageType);
    return row && { id: row.id, algorithm: row.algorithm, activeCertificate: row.active_certificate };
  }

  async get(tenantId: string, id: string): Promise<KeyChain> {
    return this.toKeyChain(await this.row(tenantId, id));
  }

  /** Undefined when the tenant has no such key chain. */
  async find(tenantId: string, id: string): Promise<KeyChain | undefined> {
    const row = await store.findKeyChain(tenantDb(this.db, tenantId), id);
    return row && this.toKeyChain(row);
  }

  private identity(
    tenantId: string,
    id: string,
    input: { usageType: UsageType; algorithm?: SigningAlgorithm; subject?: Partial<Subject>; certValidityDays?: number },
    keys: { kmsProvider: string; keyPlace: KeyPlace | null } = { kmsProvider: 'db', keyPlace: null },
  ): ChainIdentity {
    return {
      tenantId,
      keyChainId: id,
      ...keys,
      usageType: input.usageType,
      algorithm: input.algorithm ?? 'ES256',
      certValidityDays: input.certValidityDays ?? 365,
      subject: {
        commonName: input.subject?.commonName ?? defaultCommonName(tenantId, input.usageType),
        organization: input.subject?.organization ?? tenantId,
        country: input.subject?.country ?? this.defaults.country,
      },
    };
  }

  async create(ctx: RequestContext, tenantId: string, input: CreateKeyChain, db: Executor = this.db): Promise<KeyChain> {
    const id = input.id ?? randomUUID();
    const kmsProvider = input.kmsProvider ?? this.defaultProviderFor(input.usageType);
    const chosen = input.kmsProvider !== undefined;
    checkProvider({ kmsProvider, chosen, externalKeyId: input.externalKeyId, usageType: input.usageType }, [...this.providers.keys()]);
    const externalKeyId = this.externalKeyIdOf(id, kmsProvider, input.externalKeyId);
    const keyPlace = externalKeyId === null ? null : await this.keyPlace(tenantId, externalKeyId, db);
    if (keyPlace) this.checkKeyNameFits(kmsProvider, keyPlace, input.externalKeyId ? 'externalKeyId' : 'id');
    const identity = this.identity(tenantId, id, input, { kmsProvider, keyPlace });
    const subjectProblems = subjectErrors(identity.subject, input.type === 'internalChain');
    if (subjectProblems.length) throw invalidFields(subjectProblems);
    input = { ...input, externalKeyId };
    this.checkCertifiedByProvider(kmsProvider, input);
    if (input.type === 'imported') return this.insert(ctx, identity, input, await this.fromProvider(identity), db);
    if (input.type === 'internalChain') {
      const { root, leaf } = await this.material.internalChain(identity);
      return this.insert(ctx, identity, input, { type: 'internalChain', kmsProvider, root, leaf, chainPem: leaf.certificatePem }, db);
    }
    const leaf = await this.material.standalone(identity);
    return this.insert(ctx, identity, input, { type: 'standalone', kmsProvider, leaf, chainPem: leaf.certificatePem }, db);
  }

  /**
   * A provider that certifies its keys (csc) gives chains of type imported, and only it does; it makes
   * no keys, so such a chain is not rotated automatically (it is pointed at another credential).
   */
  private checkCertifiedByProvider(kmsProvider: string, input: { type: string; rotationEnabled?: boolean }) {
    const certified = this.provider(kmsProvider).issuesCertificates === true;
    const errors: FieldError[] = [];
    if (certified && input.type !== 'imported')
      errors.push({
        field: 'body.type',
        message: `must be imported: key provider '${kmsProvider}' holds its keys' certificates, svc makes none for them`,
      });
    if (!certified && input.type === 'imported')
      errors.push({
        field: 'body.type',
        message: `imported takes the key and certificates of a provider that certifies its keys (csc), not '${kmsProvider}'; POST /api/key-chain/import takes a private key`,
      });
    if (certified && input.rotationEnabled === true) errors.push(this.noRotation(kmsProvider));
    if (errors.length) throw invalidFields(errors);
  }

  private noRotation(kmsProvider: string): FieldError {
    return {
      field: 'body.rotationEnabled',
      message: `key provider '${kmsProvider}' makes no keys, so it cannot rotate: point the key chain at a new credential (PATCH externalKeyId)`,
    };
  }

  /** The key chain's key as the provider holds it, and the certificate chain the provider issued for it, checked. */
  private async fromProvider(identity: ChainIdentity): Promise<Made> {
    const key = await this.material.certifiedByProvider(identity);
    const chain = await checkChainForKey(key.certificatePem, key.publicJwk, 'externalKeyId');
    const chainPem = toPem(chain.active);
    return {
      type: 'imported',
      kmsProvider: identity.kmsProvider,
      leaf: { ...key, certificatePem: chainPem },
      chainPem,
      rootCertificate: chain.root ? toPem([chain.root]) : null,
    };
  }

  /**
   * The tenant's name for a new chain's key in an external provider: the externalKeyId given, else
   * (a chain of the default provider) the chain id, escaped into the letters of a key name. The
   * provider puts it in the tenant's namespace (key-names.ts).
   */
  private externalKeyIdOf(id: string, kmsProvider: string, given: string | null | undefined): string | null {
    if (kmsProvider === 'db') return null;
    return given ?? escapeId(id);
  }

  /** Where the tenant's key `name` is in an external provider: in the namespace of this tenant, not of a deleted one of the same id. */
  private async keyPlace(tenantId: string, name: string, db: Executor): Promise<KeyPlace> {
    const tenantCreatedAt = await store.tenantCreatedAt(db, tenantId);
    if (tenantCreatedAt === undefined) throw notFound('tenant', tenantId);
    return { tenantId, tenantCreatedAt, name };
  }

  /**
   * The longest name the chain's keys will have in the provider (a rotated key's) must fit there:
   * refused now, naming the field the name comes from, rather than failing at the first rotation.
   */
  private checkKeyNameFits(kmsProvider: string, place: KeyPlace, field: 'externalKeyId' | 'id') {
    const problem = this.provider(kmsProvider).keyNameProblem?.({ ...place, name: rotatedKeyRef(place.name, this.clock.now()) });
    if (problem)
      throw invalidFields([
        { field: `body.${field}`, message: `too long with the tenant's namespace and a rotated key's suffix: ${problem}` },
      ]);
  }

  /** The provider of a chain of `usageType` created without kmsProvider: KMS_PROVIDERS' default, db for decryption keys. */
  defaultProviderFor(usageType: UsageType): string {
    return usageType === 'encrypt' ? 'db' : this.defaults.kmsProvider;
  }

  /** The configured providers (db first) with what each can do. */
  providerList() {
    return [...this.providers.values()].map((provider) => ({
      id: provider.name,
      type: provider.type,
      default: provider.name === this.defaults.kmsProvider,
      capabilities: provider.capabilities,
    }));
  }

  /**
   * Whether each external provider can sign now, for /health/ready: 'ok', or why not. A provider
   * that does not answer within PROVIDER_CHECK_MS counts as unable.
   */
  async checkProviders(): Promise<Record<string, string>> {
    const external = [...this.providers.values()].filter((provider) => provider.name !== 'db');
    const results = await Promise.all(
      external.map(async (provider) => {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${PROVIDER_CHECK_MS} ms`)), PROVIDER_CHECK_MS);
        });
        try {
          await Promise.race([provider.check(), late]);
          return [provider.name, 'ok'] as const;
        } catch (err) {
          return [provider.name, err instanceof Error ? err.message : String(err)] as const;
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    return Object.fromEntries(results);
  }

  async import(ctx: RequestContext, tenantId: string, input: ImportKeyChain, db: Executor = this.db): Promise<KeyChain> {
    const { algorithm, jwk } = checkImportableJwk(input.privateJwk);
    const identity = this.identity(tenantId, input.id ?? randomUUID(), { ...input, algorithm });
    const provider = this.provider('db') as DbKeyProvider;
    const sealedJwk = provider.sealPrivate(jwk, sealingContext(tenantId, identity.keyChainId));
    const chain =
      input.certificateChain !== undefined
        ? await checkChainForKey(input.certificateChain, jwk, 'certificateChain')
        : {
            active: parsePemChain((await this.material.standalone(identity, { sealedJwk, publicJwk: jwk })).certificatePem),
            root: undefined,
          };
    const leaf: MintedKey = { sealedJwk, externalKeyId: null, publicJwk: jwk, certificatePem: toPem(chain.active) };
    const rootCertificate = chain.root ? toPem([chain.root]) : null;
    return this.insert(
      ctx,
      identity,
      input,
      { type: 'imported', kmsProvider: 'db', leaf, chainPem: leaf.certificatePem, rootCertificate },
      db,
    );
  }

  private insert(
    ctx: RequestContext,
    identity: ChainIdentity,
    settings: KeyChainSettings & { externalKeyId?: string | null },
    made: Made,
    db: Executor,
  ) {
    return inTransaction(db, async (trx) => {
      const scoped = tenantDb(trx, identity.tenantId);
      await this.checkSameTenant(identity, trx);
      const hasDefault = (await store.findDefaultKeyChain(scoped, identity.usageType)) !== undefined;
      const makeDefault = settings.default === true || !hasDefault;
      const now = this.clock.now().toISOString();
      try {
        if (makeDefault && hasDefault) await store.clearDefault(scoped, identity.usageType);
        await store.insertKeyChain(scoped, {
          id: identity.keyChainId,
          description: settings.description ?? null,
          usage_type: identity.usageType,
          usage: USAGE_OF[identity.usageType],
          kms_provider: made.kmsProvider,
          // The chain's reference: its first key's name in the provider; later keys are named after it.
          external_key_id: settings.externalKeyId ?? made.leaf.externalKeyId ?? null,
          algorithm: identity.algorithm,
          chain_type: made.type,
          is_default: toBool(makeDefault),
          subject: JSON.stringify(identity.subject),
          root_jwk: made.root?.sealedJwk ?? null,
          root_certificate: made.root?.certificatePem ?? made.rootCertificate ?? null,
          active_jwk: made.leaf.sealedJwk,
          active_certificate: made.chainPem,
          previous_jwk: null,
          previous_certificate: null,
          previous_key_expiry: null,
          rotation_enabled: toBool(settings.rotationEnabled ?? false),
          rotation_interval_days: settings.rotationIntervalDays ?? 90,
          cert_validity_days: identity.certValidityDays,
          last_rotated_at: null,
          created_at: now,
          updated_at: now,
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`key chain '${identity.keyChainId}' already exists`);
        throw err;
      }
      this.forgetResolved(identity.tenantId);
      const view = this.toKeyChain(await this.row(identity.tenantId, identity.keyChainId, trx));
      if (view.default) await this.checkChange(identity.tenantId, view, 'body.default', trx);
      await this.audit.record(ctx, { tenantId: identity.tenantId, actionType: 'key_chain.created', after: auditView(view) }, trx);
      return view;
    });
  }

  /**
   * A chain whose keys were named in a tenant instance's namespace is stored only for that instance:
   * the tenant deleted and created again while the keys were made must not get them. Checked with
   * the row locked until the chain is stored, so the tenant cannot go in between.
   */
  private async checkSameTenant(identity: ChainIdentity, trx: Executor) {
    if (!identity.keyPlace) return;
    const current = await store.tenantCreatedAt(trx, identity.tenantId, true);
    if (current !== identity.keyPlace.tenantCreatedAt)
      throw conflict(`tenant '${identity.tenantId}' was deleted while the key chain was made; the keys stay with the deleted tenant`);
  }

  async update(ctx: RequestContext, tenantId: string, id: string, input: UpdateKeyChain, db: Executor = this.db): Promise<KeyChain> {
    // The provider is asked before the transaction, so no database connection waits on it.
    const repointed =
      input.externalKeyId !== undefined ? await this.repoint(tenantId, await this.row(tenantId, id, db), input, db) : undefined;
    const updated = await inTransaction(db, async (trx) => {
      const row = await this.row(tenantId, id, trx);
      const before = this.toKeyChain(row);
      if (input.rotationEnabled === true && this.provider(row.kms_provider).issuesCertificates)
        throw invalidFields([this.noRotation(row.kms_provider)]);
      const now = this.clock.now().toISOString();
      const certificate =
        input.certificate !== undefined ? await checkChainForKey(input.certificate, before.activeJwk, 'certificate') : undefined;
      if (certificate?.root && before.rootJwk) checkRootForKey(certificate.root, before.rootJwk, 'certificate');
      const scoped = tenantDb(trx, tenantId);
      if (input.default === true && !before.default) await store.clearDefault(scoped, row.usage_type);
      if (input.default === false && before.default)
        throw conflict('a key chain stops being the default when another of its usage type is made the default');
      await store.updateKeyChain(scoped, id, row.updated_at, {
        ...(input.description !== undefined && { description: input.description }),
        ...(input.rotationEnabled !== undefined && { rotation_enabled: toBool(input.rotationEnabled) }),
        ...(input.rotationIntervalDays !== undefined && { rotation_interval_days: input.rotationIntervalDays }),
        ...(input.certValidityDays !== undefined && { cert_validity_days: input.certValidityDays }),
        ...(input.default === true && { is_default: 1 as const }),
        ...(certificate && {
          active_certificate: toPem(certificate.active),
          ...(certificate.root && { root_certificate: toPem([certificate.root]) }),
        }),
        ...(repointed && {
          external_key_id: repointed.externalKeyId,
          active_certificate: repointed.made.chainPem,
          root_certificate: repointed.made.rootCertificate ?? null,
        }),
        // Another key: the one it replaces stays published until its certificate expires, as after a rotation.
        ...(repointed?.newKey && {
          previous_jwk: row.active_jwk,
          previous_certificate: row.active_certificate,
          previous_key_expiry: new Date(parsePemChain(row.active_certificate)[0]?.validTo ?? now).toISOString(),
          active_jwk: repointed.made.leaf.sealedJwk,
          last_rotated_at: now,
        }),
        updated_at: now,
      });
      this.forgetResolved(tenantId);
      const after = this.toKeyChain(await this.row(tenantId, id, trx));
      if (certificate) await this.checkChange(tenantId, after, 'body.certificate', trx);
      else if (repointed) await this.checkChange(tenantId, after, 'body.externalKeyId', trx);
      else if (input.default === true && !before.default) await this.checkChange(tenantId, after, 'body.default', trx);
      await this.audit.record(ctx, { tenantId, actionType: 'key_chain.updated', before: auditView(before), after: auditView(after) }, trx);
      return after;
    });
    // What features serve signed by the replaced key is signed again, as after a rotation; not inside
    // a caller's transaction (a configuration import), whose connection the listeners would wait for.
    if (repointed?.newKey && db === this.db) for (const listener of this.rotationListeners) await listener(tenantId, id);
    return updated;
  }

  /**
   * The key and certificates of the credential a chain of a certifying provider (csc) is pointed at
   * instead of its own, checked; `newKey` when it is another key than the active one (not merely a
   * renewed certificate of the same key).
   */
  private async repoint(tenantId: string, row: KeyChainRow, input: UpdateKeyChain, db: Executor) {
    const externalKeyId = input.externalKeyId as string;
    const errors: FieldError[] = [];
    if (!this.provider(row.kms_provider).issuesCertificates)
      errors.push({
        field: 'body.externalKeyId',
        message: `only a key chain of a provider that certifies its keys (csc) is pointed at another key; this one (${row.kms_provider}) rotates`,
      });
    if (input.certificate !== undefined)
      errors.push({ field: 'body.certificate', message: 'not with externalKeyId: the certificates come with the new key' });
    if (errors.length) throw invalidFields(errors);
    const before = this.toKeyChain(row);
    const keyPlace = await this.keyPlace(tenantId, externalKeyId, db);
    const identity = this.identity(tenantId, row.id, before, { kmsProvider: row.kms_provider, keyPlace });
    const made = await this.fromProvider(identity);
    return { externalKeyId, made, newKey: made.leaf.publicJwk.kid !== before.activeJwk.kid };
  }

  /**
   * A new active key (a new leaf under the same root for internal chains). The previous key stays
   * published until its certificate expires, so what it signed keeps verifying.
   */
  async rotate(ctx: RequestContext, tenantId: string, id: string): Promise<KeyChain> {
    const rotated = await this.rotateUnlessChanged(ctx, await this.row(tenantId, id));
    if (!rotated) throw conflict('the key chain changed while it was being rotated; try again');
    return rotated;
  }

  /**
   * Rotates the chain as `row` shows it, if it is still so when the new key is stored (a
   * compare-and-set on updated_at); undefined when it changed meanwhile, say rotated by another run.
   */
  private async rotateUnlessChanged(ctx: RequestContext, row: KeyChainRow): Promise<KeyChain | undefined> {
    const { tenant_id: tenantId, id } = row;
    if (this.provider(row.kms_provider).issuesCertificates)
      throw badRequest(
        `key provider '${row.kms_provider}' makes no keys: the key chain is renewed by pointing it at a new credential (PATCH externalKeyId)`,
      );
    if (row.chain_type === 'imported')
      throw conflict('an imported key chain is renewed by importing a new key or by PATCHing a new certificate');
    const before = this.toKeyChain(row);
    const keyPlace =
      row.kms_provider === 'db' || !row.external_key_id
        ? null
        : await this.keyPlace(tenantId, rotatedKeyRef(row.external_key_id, this.clock.now()), this.db);
    const identity = this.identity(tenantId, id, { ...before, subject: before.subject }, { kmsProvider: row.kms_provider, keyPlace });
    const root = this.storedKey(row, 'root');
    const leaf =
      root && row.root_certificate
        ? await this.material.leafUnderRoot(identity, { ...root, certificatePem: row.root_certificate })
        : await this.material.standalone(identity);
    const [previousLeaf] = parsePemChain(row.active_certificate);
    const now = this.clock.now().toISOString();
    const rotated = await store.updateKeyChain(tenantDb(this.db, tenantId), id, row.updated_at, {
      previous_jwk: row.active_jwk,
      previous_certificate: row.active_certificate,
      previous_key_expiry: (previousLeaf ? new Date(previousLeaf.validTo) : this.clock.now()).toISOString(),
      active_jwk: leaf.sealedJwk,
      active_certificate: leaf.certificatePem,
      last_rotated_at: now,
      updated_at: now,
    });
    if (!rotated) return undefined;
    this.forgetResolved(tenantId);
    const after = await this.get(tenantId, id);
    await this.audit.record(ctx, { tenantId, actionType: 'key_chain.rotated', before: auditView(before), after: auditView(after) });
    for (const listener of this.rotationListeners) await listener(tenantId, id);
    return after;
  }

  async remove(ctx: RequestContext, tenantId: string, id: string): Promise<void> {
    // Checked and deleted in one transaction, so a configuration saved meanwhile cannot slip past the check.
    await inTransaction(this.db, async (trx) => {
      const before = this.toKeyChain(await this.row(tenantId, id, trx));
      const users: string[] = [];
      for (const check of this.usageChecks) users.push(...(await check(trx, tenantId, id)));
      if (before.default) users.unshift(`it is the tenant's default ${before.usageType} key chain`);
      if (users.length) throw conflict(`key chain '${id}' is in use: ${users.join('; ')}`);
      await store.deleteKeyChain(tenantDb(trx, tenantId), id);
      await this.audit.record(ctx, { tenantId, actionType: 'key_chain.deleted', before: auditView(before) }, trx);
    });
    this.forgetResolved(tenantId);
  }

  /**
   * The CRL of the chain's CA, named in its certificates' CRL distribution points. Only chains whose
   * CA key the service holds have one; it is empty because the service revokes no certificates.
   */
  async crl(tenantId: string, id: string) {
    const row = await this.row(tenantId, id);
    const ca =
      row.chain_type === 'internalChain'
        ? { key: this.storedKey(row, 'root'), pem: row.root_certificate }
        : row.chain_type === 'standalone'
          ? { key: this.storedKey(row, 'active'), pem: row.active_certificate }
          : undefined;
    if (!ca?.key || !ca.pem) throw notFound('CRL of key chain', id);
    const cacheKey = `${ca.key.sealedJwk}|${ca.pem}`;
    const cached = this.crls.get(cacheKey);
    // An in-process cache's age: the system clock (see src/platform/ttl-cache.ts).
    if (cached && cached.until > Date.now()) return cached.crl;
    const crl = await this.material.crl(
      this.identity(
        tenantId,
        id,
        { usageType: row.usage_type as UsageType, algorithm: row.algorithm as SigningAlgorithm },
        { kmsProvider: row.kms_provider, keyPlace: null },
      ),
      { ...ca.key, certificatePem: ca.pem },
    );
    if (this.crls.size > 1_000) this.crls.clear();
    this.crls.set(cacheKey, { crl, until: Date.now() + 3_600_000 });
    return crl;
  }

  /** Tenant initialisation: a default key chain per usage type, in the tenant's creating transaction. */
  async createTenantDefaults(db: Executor, tenantId: string, ctx: RequestContext) {
    for (const usageType of TENANT_DEFAULT_USAGES) await this.createDefault(ctx, tenantId, usageType, db);
  }

  /** A default key chain of `usageType` for the tenant, made (`default-{usageType}`) when it has none. */
  async ensureDefault(ctx: RequestContext, tenantId: string, usageType: UsageType, db: Executor = this.db) {
    if (await store.findDefaultKeyChain(tenantDb(db, tenantId), usageType)) return;
    await this.createDefault(ctx, tenantId, usageType, db);
  }

  private createDefault(ctx: RequestContext, tenantId: string, usageType: UsageType, db: Executor) {
    return this.create(
      ctx,
      tenantId,
      { id: `default-${usageType}`, usageType, type: DEFAULT_CHAIN_TYPE, description: `default ${usageType} key`, default: true },
      db,
    );
  }

  /**
   * Moves every key chain of the tenant that signs with a self-signed certificate under a root CA of
   * its own, as new tenants' defaults are made: one call for a tenant made before. Each keeps its
   * key (and kid), so whatever it signed stays valid; only its certificate changes. Chains already
   * under a CA are left as they are and not listed; imported chains are listed as skipped, because
   * their certificates come from outside.
   */
  async moveToCa(ctx: RequestContext, tenantId: string): Promise<MoveToCaResult> {
    const result: MoveToCaResult = { moved: [], skipped: [] };
    for (const row of await store.listKeyChains(tenantDb(this.db, tenantId))) {
      if (!leafIsSelfSigned(row.active_certificate)) continue;
      const reason = this.unmovable(row);
      if (reason) {
        result.skipped.push({ id: row.id, reason });
        continue;
      }
      const moved = await this.moveUnlessChanged(ctx, row);
      if (moved) result.moved.push(moved);
      else result.skipped.push({ id: row.id, reason: 'the key chain changed while it was being moved; call again' });
    }
    return result;
  }

  /** Why a self-signed chain cannot be moved under a root CA here; undefined when it can. */
  private unmovable(row: KeyChainRow): string | undefined {
    if (row.chain_type === 'imported')
      return 'imported: its certificate comes from outside; PATCH /api/key-chain/{id} with a CA-issued certificate';
    const subject = JSON.parse(row.subject) as Subject;
    const problems = subjectErrors(subject, true);
    if (problems.length)
      return `its common name is too long for a root CA named after it (${problems.map((p) => p.message).join('; ')}); create a new internalChain key chain instead`;
    return undefined;
  }

  /** Gives the chain as `row` shows it a root CA and a certificate from it, if it is still so when stored. */
  private async moveUnlessChanged(ctx: RequestContext, row: KeyChainRow): Promise<KeyChain | undefined> {
    const { tenant_id: tenantId, id } = row;
    const before = this.toKeyChain(row);
    const keyPlace = row.kms_provider === 'db' || !row.external_key_id ? null : await this.keyPlace(tenantId, row.external_key_id, this.db);
    const identity = this.identity(tenantId, id, before, { kmsProvider: row.kms_provider, keyPlace });
    const { root, certificatePem } = await this.material.rootForExistingKey(identity, before.activeJwk);
    const after = await inTransaction(this.db, async (trx) => {
      const stored = await store.updateKeyChain(tenantDb(trx, tenantId), id, row.updated_at, {
        chain_type: 'internalChain',
        root_jwk: root.sealedJwk,
        root_certificate: root.certificatePem,
        active_certificate: certificatePem,
        updated_at: this.clock.now().toISOString(),
      });
      if (!stored) return undefined;
      const moved = this.toKeyChain(await this.row(tenantId, id, trx));
      await this.audit.record(
        ctx,
        { tenantId, actionType: 'key_chain.moved_to_ca', before: auditView(before), after: auditView(moved) },
        trx,
      );
      return moved;
    });
    this.forgetResolved(tenantId);
    // What features serve signed under the old certificate is signed again, as after a rotation.
    if (after) for (const listener of this.rotationListeners) await listener(tenantId, id);
    return after;
  }

  /**
   * The scheduled job: rotate chains whose interval has passed; forget previous keys past their expiry.
   * A chain is rotated only as it was when found due (its updated_at), so two runs that overlap (one
   * outlasting its lease, or one run by hand) rotate it once: the later finds it changed and leaves it.
   */
  async rotateDue(now = this.clock.now()) {
    const failures: unknown[] = [];
    for (const due of await store.keyChainsDue(this.db, now.toISOString())) {
      const since = Date.parse(due.last_rotated_at ?? due.created_at);
      try {
        if (fromBool(due.rotation_enabled) && since + due.rotation_interval_days * DAY <= now.getTime()) {
          const row = await this.row(due.tenant_id, due.id);
          if (row.updated_at !== due.updated_at) continue;
          const ctx = { principal: { ...SCHEDULER, tenantId: due.tenant_id }, requestId: `rotation-${randomUUID()}` };
          await this.rotateUnlessChanged(ctx, row);
        } else if (due.previous_key_expiry && Date.parse(due.previous_key_expiry) < now.getTime()) {
          await store.forgetPreviousKey(this.db, due.tenant_id, due.id, due.previous_key_expiry);
          this.forgetResolved(due.tenant_id);
        }
      } catch (err) {
        failures.push(err); // one broken chain must not keep the others from rotating
      }
    }
    if (failures.length) throw new AggregateError(failures, `${failures.length} key chain(s) could not be rotated`);
  }
}
