// Writes what an import folder describes, through the features' services (the only way to write).
// Per tenant, everything but its trust lists is written in one transaction; trust lists are signed
// with the tenant's keys by their service, which works outside a caller's transaction, so they are
// written after it commits, each atomically. An object whose id exists is updated when its file
// differs and left alone when it does not; nothing is ever deleted.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { JWK } from 'jose';
import type { ClientService } from '../clients/service.js';
import type { CredentialConfigService } from '../credential-configs/service.js';
import type { AuthInput } from '../http-endpoints/schemas.js';
import type { HttpEndpointService } from '../http-endpoints/service.js';
import type { IssuerSettingsService } from '../issuance/settings/service.js';
import type { KeyChain } from '../key-chains/model.js';
import type { KeyChainService, UpdateKeyChain } from '../key-chains/service.js';
import type { RequestContext } from '../platform/auth/principal.js';
import { ROLES } from '../platform/auth/roles.js';
import { parsePemChain, toPem } from '../platform/crypto/x509.js';
import type { Executor } from '../platform/db/values.js';
import { Problem } from '../platform/http/problem.js';
import type { PresentationConfigService } from '../presentation-configs/service.js';
import { overrides, SessionConfigSchema, StatusListConfigSchema } from '../tenants/schemas.js';
import type { TenantService } from '../tenants/service.js';
import type { TrustListService } from '../trust-lists/service.js';
import { type ConfigFile, type Contents, keyChainForm, type TenantFolder } from './layout.js';
import { ConfigImportError } from './read.js';

export interface ConfigServices {
  db: Executor;
  tenants: TenantService;
  clients: ClientService;
  keyChains: KeyChainService;
  issuerSettings: IssuerSettingsService;
  attributeProviders: HttpEndpointService;
  webhookEndpoints: HttpEndpointService;
  credentialConfigs: CredentialConfigService;
  presentationConfigs: PresentationConfigService;
  trustLists: TrustListService;
}

export type Outcome = 'created' | 'updated' | 'unchanged';
export type ImportSummary = Record<Outcome, number> & { tenants: number };

const ACTOR = 'system:config-import';
/** Every role a tenant's client can hold: the import acts as the tenant's administrator. */
const TENANT_ROLES = ROLES.filter((role) => role !== 'tenants:manage');

/** A file that the service refused: its problem, with the request's field names made the file's. */
class FileRefused extends Error {
  constructor(
    readonly path: string,
    readonly problem: Problem,
  ) {
    const fields = (problem.extra.errors as { field: string; message: string }[] | undefined) ?? [];
    const unprefixed = (field: string) => field.replace(/^body\./, '');
    super(
      `${path}: ${fields.length ? fields.map((f) => `${unprefixed(f.field)}: ${f.message}`).join('; ') : (problem.detail ?? problem.title)}`,
    );
  }
}

const missing = (err: unknown): undefined => {
  if (err instanceof Problem && err.status === 404) return undefined;
  throw err;
};
const plain = (value: unknown) => JSON.parse(JSON.stringify(value ?? null));
const same = (a: unknown, b: unknown) => isDeepStrictEqual(plain(a), plain(b));
const pemOf = (pem: string) => toPem(parsePemChain(pem));

/** A config object in an update: the file's keys, the others reset to the global default (null). */
function replacing<T extends object>(config: T | null | undefined, schema: { shape: Record<string, unknown> }) {
  return config ? { ...Object.fromEntries(Object.keys(schema.shape).map((key) => [key, null])), ...config } : null;
}

export class ConfigImporter {
  constructor(private readonly services: ConfigServices) {}

  async importTenants(folders: TenantFolder[]): Promise<ImportSummary> {
    const summary: ImportSummary = { tenants: folders.length, created: 0, updated: 0, unchanged: 0 };
    for (const folder of folders) {
      for (const outcome of await this.importTenant(folder)) summary[outcome]++;
    }
    return summary;
  }

  /**
   * One tenant. Another instance importing the same folder at the same time makes one of the two
   * collide on an id (409); that one tries once more and then finds the other's objects in place.
   */
  private async importTenant(folder: TenantFolder, retry = true): Promise<Outcome[]> {
    const requestId = `config-import-${randomUUID()}`;
    const ctx: RequestContext = { principal: { clientId: ACTOR, tenantId: folder.id, roles: TENANT_ROLES }, requestId };
    const serviceCtx: RequestContext = { principal: { clientId: ACTOR, tenantId: null, roles: ['tenants:manage'] }, requestId };
    try {
      const written = await this.services.db.transaction().execute(async (trx) => {
        const outcomes = await this.each([folder.tenant], (value) => this.tenant(serviceCtx, value, trx));
        outcomes.push(...(await this.each(folder.keyChains, (value) => this.keyChain(ctx, folder.id, value, trx))));
        outcomes.push(...(await this.each(folder.clients, (value) => this.client(ctx, value, trx))));
        const { trust } = folder;
        if (folder.issuer)
          outcomes.push(...(await this.each([folder.issuer], (value) => this.issuer(ctx, folder.id, value, trx, trust !== undefined))));
        if (trust) outcomes.push(...(await this.each([trust], (value) => this.trust(ctx, folder.id, value, trx))));
        outcomes.push(...(await this.each(folder.attributeProviders, (value) => this.endpoint('attributeProviders', ctx, value, trx))));
        outcomes.push(...(await this.each(folder.webhookEndpoints, (value) => this.endpoint('webhookEndpoints', ctx, value, trx))));
        outcomes.push(
          ...(await this.each(folder.credentialConfigs, (value) => this.services.credentialConfigs.save(ctx, folder.id, value, trx))),
        );
        outcomes.push(...(await this.each(folder.presentationConfigs, (value) => this.presentationConfig(ctx, folder.id, value, trx))));
        return outcomes;
      });
      return [...written, ...(await this.each(folder.trustLists, (value) => this.trustList(ctx, folder.id, value)))];
    } catch (err) {
      if (retry && err instanceof FileRefused && err.problem.status === 409) return this.importTenant(folder, false);
      if (err instanceof FileRefused) throw new ConfigImportError([err.message]);
      throw err;
    }
  }

  /** Applies the files in order; a refusal names the file. */
  private async each<K extends keyof Contents>(files: ConfigFile<K>[], apply: (value: Contents[K]) => Promise<Outcome>) {
    const outcomes: Outcome[] = [];
    for (const file of files) {
      try {
        outcomes.push(await apply(file.value));
      } catch (err) {
        if (err instanceof Problem) throw new FileRefused(file.path, err);
        throw err;
      }
    }
    return outcomes;
  }

  private async tenant(ctx: RequestContext, file: Contents['tenant'], trx: Executor): Promise<Outcome> {
    const { tenants } = this.services;
    const existing = await tenants.get(file.id, trx).catch(missing);
    if (!existing) {
      await tenants.create(ctx, file, trx);
      return 'created';
    }
    const wanted = {
      name: file.name,
      description: file.description ?? null,
      sessionConfig: overrides(file.sessionConfig),
      statusListConfig: overrides(file.statusListConfig),
    };
    const { name, description, sessionConfig, statusListConfig } = existing;
    if (same(wanted, { name, description, sessionConfig, statusListConfig })) return 'unchanged';
    await tenants.update(
      ctx,
      file.id,
      {
        name: file.name,
        description: wanted.description,
        sessionConfig: replacing(file.sessionConfig, SessionConfigSchema),
        statusListConfig: replacing(file.statusListConfig, StatusListConfigSchema),
      },
      trx,
    );
    return 'updated';
  }

  private async client(ctx: RequestContext, file: Contents['clients'], trx: Executor): Promise<Outcome> {
    const { clients } = this.services;
    const existing = await clients.get(ctx, file.clientId, trx).catch(missing);
    if (!existing) {
      await clients.create(ctx, file, trx);
      return 'created';
    }
    const nonEmpty = (list: string[] | null | undefined) => (list?.length ? list : null);
    const wanted = {
      roles: file.roles,
      description: file.description ?? null,
      allowedPresentationConfigs: nonEmpty(file.allowedPresentationConfigs),
      allowedIssuanceConfigs: nonEmpty(file.allowedIssuanceConfigs),
    };
    const { roles, description, allowedPresentationConfigs, allowedIssuanceConfigs } = existing;
    const changed = !same(wanted, { roles, description, allowedPresentationConfigs, allowedIssuanceConfigs });
    if (changed) await clients.update(ctx, file.clientId, wanted, trx);
    const secretChanged = await clients.ensureSecret(ctx, file.clientId, file.secret, trx);
    return changed || secretChanged ? 'updated' : 'unchanged';
  }

  private async keyChain(ctx: RequestContext, tenantId: string, file: Contents['keyChains'], trx: Executor): Promise<Outcome> {
    const { keyChains } = this.services;
    const form = keyChainForm(file);
    const row = await keyChains.row(tenantId, file.id, trx).catch(missing);
    const existing = row && keyChains.toKeyChain(row);
    if (!existing) {
      if ('privateJwk' in file) await keyChains.import(ctx, tenantId, { ...file, privateJwk: file.privateJwk as JWK }, trx);
      else if ('type' in file) await keyChains.create(ctx, tenantId, file, trx);
      else throw refusal('id', `key chain '${file.id}' does not exist: give type to create one, or privateJwk to import one`);
      return 'created';
    }
    if (form !== 'reference') checkSameChain(existing, file, keyChains.defaultProviderFor(existing.usageType));
    const change: UpdateKeyChain = {};
    for (const key of ['description', 'rotationEnabled', 'rotationIntervalDays', 'certValidityDays'] as const) {
      if (file[key] !== undefined && file[key] !== existing[key]) Object.assign(change, { [key]: file[key] });
    }
    if (file.default === true && !existing.default) change.default = true;
    // Another credential for a chain of a provider that certifies its keys (csc); in a file of an existing chain, for update to judge.
    const externalKeyId = 'externalKeyId' in file ? file.externalKeyId : undefined;
    if (
      typeof externalKeyId === 'string' &&
      externalKeyId !== existing.externalKeyId &&
      (form === 'reference' || keyChains.provider(existing.kmsProvider).issuesCertificates)
    )
      change.externalKeyId = externalKeyId;
    const certificate = 'certificateChain' in file ? file.certificateChain : 'certificate' in file ? file.certificate : undefined;
    const stored = pemOf([existing.activeCertificate, existing.rootCertificate ?? ''].join('\n'));
    if (certificate !== undefined && pemOf(certificate) !== stored) change.certificate = certificate;
    if (!Object.keys(change).length) return 'unchanged';
    await keyChains.update(ctx, tenantId, file.id, change, trx);
    return 'updated';
  }

  /** `trustFile`: trust.json sets the trust settings (federation, EU trusted lists), so issuer.json keeps the stored ones (it leaves them out). */
  private async issuer(
    ctx: RequestContext,
    tenantId: string,
    file: Contents['issuer'],
    trx: Executor,
    trustFile: boolean,
  ): Promise<Outcome> {
    const { issuerSettings } = this.services;
    const stored = trustFile ? await issuerSettings.get(tenantId, trx) : undefined;
    const given = stored ? { ...file, federation: stored.federation, etsiTrustedLists: stored.etsiTrustedLists } : file;
    if (await issuerSettings.isCurrent(tenantId, given, trx)) return 'unchanged';
    await issuerSettings.put(ctx, tenantId, given, trx);
    return 'updated';
  }

  /** The trust settings (PUT /api/trust-config): kept as the issuer settings' federation and etsiTrustedLists fields. */
  private async trust(ctx: RequestContext, tenantId: string, file: Contents['trust'], trx: Executor): Promise<Outcome> {
    const { issuerSettings } = this.services;
    const stored = await issuerSettings.get(tenantId, trx);
    const trust = { federation: file.federation, etsiTrustedLists: file.etsiTrustedLists };
    if (await issuerSettings.isCurrent(tenantId, { ...stored, ...trust }, trx)) return 'unchanged';
    await issuerSettings.putTrust(ctx, tenantId, trust, trx);
    return 'updated';
  }

  private async endpoint(
    kind: 'attributeProviders' | 'webhookEndpoints',
    ctx: RequestContext,
    file: Contents[typeof kind],
    trx: Executor,
  ): Promise<Outcome> {
    const endpoints = this.services[kind];
    const tenantId = ctx.principal.tenantId as string;
    const existing = await endpoints.get(tenantId, file.id, trx).catch(missing);
    if (!existing) {
      await endpoints.create(ctx, tenantId, file, trx);
      return 'created';
    }
    const wanted = { name: file.name, description: file.description ?? null, url: file.url, auth: file.auth };
    const { headers } = await endpoints.resolve(tenantId, file.id, trx);
    const auth: AuthInput =
      existing.auth.type === 'header'
        ? { type: 'header', header: { name: existing.auth.header.name, value: headers[existing.auth.header.name] as string } }
        : { type: 'none' };
    if (same(wanted, { name: existing.name, description: existing.description, url: existing.url, auth })) return 'unchanged';
    await endpoints.update(ctx, tenantId, file.id, wanted, trx);
    return 'updated';
  }

  private async presentationConfig(
    ctx: RequestContext,
    tenantId: string,
    file: Contents['presentationConfigs'],
    trx: Executor,
  ): Promise<Outcome> {
    const { presentationConfigs } = this.services;
    if (await presentationConfigs.isCurrent(tenantId, file, trx)) return 'unchanged';
    return (await presentationConfigs.save(ctx, tenantId, file, trx)).created ? 'created' : 'updated';
  }

  private async trustList(ctx: RequestContext, tenantId: string, file: Contents['trustLists']): Promise<Outcome> {
    const { trustLists } = this.services;
    const existing = await trustLists.export(tenantId, file.id).catch(missing);
    if (!existing) {
      await trustLists.create(ctx, tenantId, file);
      return 'created';
    }
    const wanted = {
      id: file.id,
      description: file.description ?? null,
      keyChainId: file.keyChainId ?? existing.keyChainId,
      ...(file.data && { data: file.data }),
      entities: file.entities,
    };
    if (same(wanted, existing)) return 'unchanged';
    await trustLists.update(ctx, tenantId, file.id, file);
    return 'updated';
  }
}

const refusal = (field: string, message: string) =>
  new Problem(400, 'Bad Request', `${field}: ${message}`, { errors: [{ field: `body.${field}`, message }] });

/**
 * A file asking for a standalone (self-signed) chain is met by an internal chain of that id: the
 * tenant defaults are internal chains now, and POST /api/key-chain/move-to-ca turns standalone
 * chains into internal ones (HAIP 1.0), so folders written or exported before keep importing.
 */
const caIssuedInstead = (wanted: string, existing: string) => wanted === 'standalone' && existing === 'internalChain';

/**
 * What a key chain file says about what the chain is, which no update can change. A file without
 * kmsProvider names the provider a chain made from it would get (`defaultProvider`).
 */
function checkSameChain(existing: KeyChain, file: Contents['keyChains'], defaultProvider: string) {
  const cannot = (field: string, stored: unknown) =>
    refusal(field, `cannot change on the existing key chain '${existing.id}' (it is ${JSON.stringify(stored)})`);
  if ('usageType' in file && file.usageType !== existing.usageType) throw cannot('usageType', existing.usageType);
  if ('privateJwk' in file) {
    if (existing.type !== 'imported') throw cannot('privateJwk', `${existing.type}: its key was made here`);
    const key = file.privateJwk as JWK;
    if (key.crv !== existing.activeJwk.crv || key.x !== existing.activeJwk.x || key.y !== existing.activeJwk.y) {
      throw refusal(
        'privateJwk',
        `key chain '${existing.id}' holds another key; import this one under a new id, or delete the chain first`,
      );
    }
    return;
  }
  if (!('type' in file)) return;
  if (file.type !== existing.type && !caIssuedInstead(file.type, existing.type)) throw cannot('type', existing.type);
  if (file.algorithm !== undefined && file.algorithm !== existing.algorithm) throw cannot('algorithm', existing.algorithm);
  if ((file.kmsProvider ?? defaultProvider) !== existing.kmsProvider) throw cannot('kmsProvider', existing.kmsProvider);
  for (const [key, value] of Object.entries(file.subject ?? {})) {
    const stored = existing.subject[key as keyof KeyChain['subject']];
    if (value !== stored) throw cannot(`subject.${key}`, stored);
  }
}
