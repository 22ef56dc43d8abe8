// Trust lists: a tenant's signed ETSI TS 119 602 lists of trusted entities (its own key chains and
// outside certificates), with a version per content change, re-signed before NextUpdate passes and
// whenever a key chain they use rotates.
import { randomUUID, X509Certificate } from 'node:crypto';
import type { AuditService } from '../audit/service.js';
import type { KeyChain } from '../key-chains/model.js';
import type { KeyChainService } from '../key-chains/service.js';
import type { SigningService } from '../key-chains/signing.js';
import type { Principal, RequestContext } from '../platform/auth/principal.js';
import { parsePemChain, toPem, toX5c } from '../platform/crypto/x509.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import { type Executor, inTransaction, isUniqueViolation, nowIso } from '../platform/db/values.js';
import { conflict, type FieldError, invalidFields, notFound } from '../platform/http/problem.js';
import { StampedCache, tenantKey, tenantPrefix } from '../status-lists/cache.js';
import {
  buildLote,
  type LoteDocument,
  loteDateTime,
  purposeOf,
  type ResolvedEntity,
  type ServiceType,
  type TrustPurpose,
  trustedEntity,
} from './lote.js';
import type { EntityInput, SchemeData, TrustList, TrustListInput, TrustListVersion } from './schemas.js';
import type { TrustListRow, TrustListVersionRow } from './store.js';
import * as store from './store.js';

/** How long a signed list is valid: NextUpdate = ListIssueDateTime + this. */
export const TRUST_LIST_VALIDITY_SECONDS = 24 * 3600;
/** The scheduled job re-signs a list this long before its NextUpdate. */
export const TRUST_LIST_RESIGN_MARGIN_SECONDS = 6 * 3600;
/** The JOSE typ of a signed list, as the @owf/eudi-lote signer and its consumers use it. */
export const TRUST_LIST_JWT_TYPE = 'trustlist+jwt';

const SYSTEM: Principal = { clientId: 'system:trust-lists', tenantId: null, roles: [] };
const TRUSTED_TTL_MS = 5_000;

export interface TrustListDeps {
  audit: AuditService;
  keyChains: KeyChainService;
  signing: SigningService;
  publicUrl: string;
  /** SchemeTerritory unless the list's data says otherwise. */
  country: string;
  /** SchemeOperatorName unless the list's data says otherwise. */
  tenantName(tenantId: string): Promise<string>;
  validitySeconds?: number;
  resignMarginSeconds?: number;
}

/** What an input resolves to before it is signed. */
interface Prepared {
  keyChainId: string;
  scheme: SchemeData;
  entityConfig: EntityInput[];
  entities: ResolvedEntity[];
  entityKeyChains: string[];
}

interface Signed {
  data: LoteDocument;
  jwt: string;
  issuedAt: string;
  nextUpdate: string;
  resignAt: string;
}

const parse = <T>(json: string) => JSON.parse(json) as T;

/**
 * The certificates that stand for a key chain of the tenant: its root when it has one (it outlives
 * rotations), else its active certificate and, while still published, the previous one.
 */
export function anchorsOf(chain: KeyChain): X509Certificate[] {
  if (chain.rootCertificate) return parsePemChain(chain.rootCertificate);
  const [active] = parsePemChain(chain.activeCertificate);
  const [previous] = parsePemChain(chain.previousCertificate ?? '');
  return [active, previous].filter((c): c is X509Certificate => c !== undefined);
}

/** One PEM certificate, or why the text is not one. */
function parseCertificate(pem: string): X509Certificate | string {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) return 'is not a PEM certificate (-----BEGIN CERTIFICATE----- ... -----END CERTIFICATE-----)';
  if (blocks.length > 1) return 'must hold exactly one certificate; give each certificate as its own item';
  try {
    return new X509Certificate(blocks[0] as string);
  } catch {
    return 'is not a valid X.509 certificate';
  }
}

/** The content of a list, without the times that change on every signing. */
function contentOf(data: LoteDocument): string {
  const { ListIssueDateTime: _i, NextUpdate: _n, ...scheme } = data.LoTE.ListAndSchemeInformation;
  return JSON.stringify({ ...data.LoTE, ListAndSchemeInformation: scheme });
}

const auditView = (list: { id: string; description: string | null; keyChainId: string; sequenceNumber: number }, input: Prepared) => ({
  id: list.id,
  description: list.description,
  keyChainId: list.keyChainId,
  sequenceNumber: list.sequenceNumber,
  data: input.scheme,
  entities: input.entityConfig.map((e) =>
    e.type === 'internal'
      ? { type: e.type, keyChainId: e.keyChainId, serviceType: e.serviceType ?? null }
      : { type: e.type, name: e.name, serviceType: e.serviceType ?? null, certificates: e.certificates.length },
  ),
});

export class TrustListService {
  private readonly validityMs: number;
  private readonly marginMs: number;
  /** trustedCertificates per tenant, for a few seconds: verification asks on every presentation. */
  /**
   * The certificates a tenant's verifier trusts, for TRUSTED_TTL_MS (a change made here clears the
   * tenant's entry at once; one made on another instance shows within the TTL). /api/cache reports and clears it.
   */
  readonly trustCache = new StampedCache<{ pems: string[]; until: number }>();

  constructor(
    private readonly db: Executor,
    private readonly deps: TrustListDeps,
  ) {
    this.validityMs = (deps.validitySeconds ?? TRUST_LIST_VALIDITY_SECONDS) * 1000;
    this.marginMs = Math.min(deps.resignMarginSeconds ?? TRUST_LIST_RESIGN_MARGIN_SECONDS, (this.validityMs / 1000) * 0.5) * 1000;
    deps.keyChains.onUsageCheck((db, tenantId, keyChainId) => this.usersOf(db, tenantId, keyChainId));
    deps.keyChains.onRotated((tenantId, keyChainId) => this.afterRotation(tenantId, keyChainId));
  }

  /** Where the signed list is served. */
  publicUrl(tenantId: string, id: string) {
    return `${this.deps.publicUrl}/issuers/${encodeURIComponent(tenantId)}/trust-lists/${encodeURIComponent(id)}`;
  }

  private toTrustList(row: TrustListRow): TrustList {
    return {
      id: row.id,
      description: row.description,
      tenantId: row.tenant_id,
      keyChainId: row.key_chain_id,
      data: parse(row.data),
      entityConfig: parse(row.entity_config),
      sequenceNumber: row.sequence_number,
      jwt: row.jwt,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  private toVersion(row: TrustListVersionRow): TrustListVersion {
    return {
      id: row.id,
      trustListId: row.trust_list_id,
      tenantId: row.tenant_id,
      sequenceNumber: row.sequence_number,
      data: parse(row.data),
      entityConfig: parse(row.entity_config),
      jwt: row.jwt,
      createdAt: row.created_at,
    };
  }

  private async row(tenantId: string, id: string, db: Executor = this.db): Promise<TrustListRow> {
    const row = await store.findTrustList(tenantDb(db, tenantId), id);
    if (!row) throw notFound('trust list', id);
    return row;
  }

  async list(tenantId: string): Promise<TrustList[]> {
    return (await store.listTrustLists(tenantDb(this.db, tenantId))).map((row) => this.toTrustList(row));
  }

  async get(tenantId: string, id: string): Promise<TrustList> {
    return this.toTrustList(await this.row(tenantId, id));
  }

  /** The input that recreates the list (POST it elsewhere, or PUT it back after editing). */
  async export(tenantId: string, id: string): Promise<TrustListInput & { id: string }> {
    const row = await this.row(tenantId, id);
    return {
      id: row.id,
      description: row.description,
      keyChainId: row.key_chain_id,
      ...(row.scheme_data && { data: parse<SchemeData>(row.scheme_data) }),
      entities: parse(row.entity_config),
    };
  }

  async versions(tenantId: string, id: string): Promise<TrustListVersion[]> {
    await this.row(tenantId, id);
    return (await store.listVersions(tenantDb(this.db, tenantId), id)).map((row) => this.toVersion(row));
  }

  async version(tenantId: string, id: string, versionId: string): Promise<TrustListVersion> {
    await this.row(tenantId, id);
    const row = await store.findVersion(tenantDb(this.db, tenantId), id, versionId);
    if (!row) throw notFound('trust list version', versionId);
    return this.toVersion(row);
  }

  /** The served JWS and its validity, for the public endpoint. */
  async published(tenantId: string, id: string) {
    const row = await this.row(tenantId, id);
    return { jwt: row.jwt, issuedAt: row.issued_at, nextUpdate: row.next_update };
  }

  /**
   * The PEM certificates of the entities of every trust list of the tenant that are trusted for
   * `purpose`: credentials (issuers and status list signers: what a verifier of this tenant trusts)
   * or wallet attestations (wallet providers: what its issuer trusts). Internal entities give their
   * key chain's anchors (see anchorsOf).
   */
  async trustedCertificates(tenantId: string, purpose: TrustPurpose = 'credentials'): Promise<string[]> {
    const cached = this.trustCache.get(tenantKey(tenantId, `anchors:${purpose}`), '');
    if (cached && cached.until > Date.now()) return cached.pems;
    const entities = (await store.listTrustLists(tenantDb(this.db, tenantId)))
      .flatMap((row) => parse<EntityInput[]>(row.entity_config))
      .filter((entity) => purposeOf(entity.serviceType ?? 'issuance') === purpose);
    const chains = entities.some((e) => e.type === 'internal')
      ? new Map((await this.deps.keyChains.list(tenantId)).map((chain) => [chain.id, chain]))
      : new Map<string, KeyChain>();
    const pems = new Set<string>();
    for (const entity of entities) {
      const chain = entity.type === 'internal' ? chains.get(entity.keyChainId) : undefined;
      const certificates = chain ? anchorsOf(chain) : entity.type === 'external' ? entity.certificates.map(parseCertificate) : [];
      for (const certificate of certificates) if (typeof certificate !== 'string') pems.add(toPem([certificate]));
    }
    this.trustCache.set(tenantKey(tenantId, `anchors:${purpose}`), '', { pems: [...pems], until: Date.now() + TRUSTED_TTL_MS });
    return [...pems];
  }

  /**
   * Checks an input against the tenant's key chains and resolves its entities. Errors name the
   * field: body.keyChainId, body.entities.N.keyChainId, body.entities.N.certificates.M.
   */
  private async prepare(tenantId: string, input: TrustListInput, currentKeyChainId?: string): Promise<Prepared> {
    const chains = new Map((await this.deps.keyChains.list(tenantId)).map((chain) => [chain.id, chain]));
    const errors: FieldError[] = [];
    const signerId = input.keyChainId ?? currentKeyChainId;
    const signer = signerId ? chains.get(signerId) : [...chains.values()].find((chain) => chain.usageType === 'trustList' && chain.default);
    if (!signerId && !signer) throw conflict('the tenant has no default trustList key chain; name one in keyChainId');
    if (!signer) errors.push({ field: 'body.keyChainId', message: `key chain '${signerId}' does not exist` });
    else if (signer.usageType !== 'trustList') {
      errors.push({
        field: 'body.keyChainId',
        message: `key chain '${signer.id}' has usage type ${signer.usageType}; trust lists are signed with trustList key chains`,
      });
    }
    const entities: ResolvedEntity[] = [];
    input.entities.forEach((entity, i) => {
      const resolved = entity.type === 'internal' ? this.internalEntity(tenantId, entity, chains) : this.externalEntity(entity);
      if (Array.isArray(resolved)) errors.push(...resolved.map((e) => ({ ...e, field: `body.entities.${i}.${e.field}` })));
      else entities.push(resolved);
    });
    if (errors.length) throw invalidFields(errors);
    const internal = input.entities.flatMap((e) => (e.type === 'internal' ? [e.keyChainId] : []));
    return {
      keyChainId: (signer as KeyChain).id,
      scheme: input.data ?? {},
      entityConfig: input.entities,
      entities,
      entityKeyChains: [...new Set(internal)].sort(),
    };
  }

  private internalEntity(
    tenantId: string,
    entity: Extract<EntityInput, { type: 'internal' }>,
    chains: Map<string, KeyChain>,
  ): ResolvedEntity | FieldError[] {
    const chain = chains.get(entity.keyChainId);
    if (!chain) return [{ field: 'keyChainId', message: `key chain '${entity.keyChainId}' does not exist` }];
    if (chain.usage !== 'sign')
      return [{ field: 'keyChainId', message: `key chain '${chain.id}' is an encryption key; only signing keys can be listed` }];
    const serviceType: ServiceType = entity.serviceType ?? (chain.usageType === 'statusList' ? 'revocation' : 'issuance');
    return {
      name: entity.name ?? chain.subject.organization ?? chain.subject.commonName,
      serviceType,
      certificates: toX5c(anchorsOf(chain)),
      informationUri: `${this.deps.publicUrl}/issuers/${encodeURIComponent(tenantId)}`,
      ...(entity.information && { information: entity.information }),
    };
  }

  private externalEntity(entity: Extract<EntityInput, { type: 'external' }>): ResolvedEntity | FieldError[] {
    const errors: FieldError[] = [];
    const certificates: X509Certificate[] = [];
    entity.certificates.forEach((pem, j) => {
      const parsed = parseCertificate(pem);
      if (typeof parsed === 'string') errors.push({ field: `certificates.${j}`, message: parsed });
      else certificates.push(parsed);
    });
    if (errors.length) return errors;
    return {
      name: entity.name,
      serviceType: entity.serviceType ?? 'issuance',
      certificates: toX5c(certificates),
      ...(entity.information && { information: entity.information }),
    };
  }

  /** The LoTE of a prepared input at a sequence number, issued now. */
  private async build(tenantId: string, id: string, prepared: Prepared, sequenceNumber: number) {
    const issuedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
    const nextUpdate = new Date(issuedAt.getTime() + this.validityMs);
    const data = buildLote(
      {
        sequenceNumber,
        issuedAt,
        nextUpdate,
        operatorName: await this.deps.tenantName(tenantId),
        territory: this.deps.country,
        distributionPoint: this.publicUrl(tenantId, id),
        scheme: prepared.scheme,
      },
      prepared.entities.map(trustedEntity),
    );
    return { data, issuedAt, nextUpdate };
  }

  /** Signs a built LoTE: the document is the JWS payload, with iat and exp (= NextUpdate) beside it. */
  private async sign(tenantId: string, prepared: Prepared, built: Awaited<ReturnType<TrustListService['build']>>): Promise<Signed> {
    const { data, issuedAt, nextUpdate } = built;
    const claims = { ...data, iat: issuedAt.getTime() / 1000, exp: nextUpdate.getTime() / 1000 };
    const jwt = await this.deps.signing.signJwt(
      tenantId,
      { usageType: 'trustList', keyChainId: prepared.keyChainId },
      { typ: TRUST_LIST_JWT_TYPE },
      claims,
    );
    return {
      data,
      jwt,
      issuedAt: loteDateTime(issuedAt),
      nextUpdate: loteDateTime(nextUpdate),
      resignAt: loteDateTime(new Date(nextUpdate.getTime() - this.marginMs)),
    };
  }

  private forgetTrusted(tenantId: string) {
    this.trustCache.clear(tenantPrefix(tenantId));
  }

  async create(ctx: RequestContext, tenantId: string, input: TrustListInput): Promise<TrustList> {
    const id = input.id ?? randomUUID();
    const prepared = await this.prepare(tenantId, input);
    const signed = await this.sign(tenantId, prepared, await this.build(tenantId, id, prepared, 1));
    const now = nowIso();
    const created = await inTransaction(this.db, async (trx) => {
      const scoped = tenantDb(trx, tenantId);
      try {
        await store.insertTrustList(scoped, {
          id,
          description: input.description ?? null,
          key_chain_id: prepared.keyChainId,
          scheme_data: input.data ? JSON.stringify(input.data) : null,
          entity_config: JSON.stringify(prepared.entityConfig),
          entity_key_chains: JSON.stringify(prepared.entityKeyChains),
          data: JSON.stringify(signed.data),
          jwt: signed.jwt,
          sequence_number: 1,
          issued_at: signed.issuedAt,
          next_update: signed.nextUpdate,
          resign_at: signed.resignAt,
          created_at: now,
          updated_at: now,
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`trust list '${id}' already exists`);
        throw err;
      }
      await this.insertVersion(scoped, id, 1, prepared, signed);
      const list = this.toTrustList(await this.row(tenantId, id, trx));
      await this.deps.audit.record(ctx, { tenantId, actionType: 'trust_list.created', after: auditView(list, prepared) }, trx);
      return list;
    });
    this.forgetTrusted(tenantId);
    return created;
  }

  private async insertVersion(db: ReturnType<typeof tenantDb>, id: string, sequenceNumber: number, prepared: Prepared, signed: Signed) {
    await store.insertVersion(db, {
      id: randomUUID(),
      trust_list_id: id,
      sequence_number: sequenceNumber,
      key_chain_id: prepared.keyChainId,
      entity_config: JSON.stringify(prepared.entityConfig),
      data: JSON.stringify(signed.data),
      jwt: signed.jwt,
      created_at: nowIso(),
    });
  }

  /** PUT: the input replaces the list's content; a new version with the next sequence number is signed. */
  async update(ctx: RequestContext, tenantId: string, id: string, input: TrustListInput): Promise<TrustList> {
    if (input.id !== undefined && input.id !== id) {
      throw invalidFields([{ field: 'body.id', message: `cannot change: the path names trust list '${id}'` }]);
    }
    const before = await this.row(tenantId, id);
    const prepared = await this.prepare(tenantId, input, before.key_chain_id);
    const sequenceNumber = before.sequence_number + 1;
    const signed = await this.sign(tenantId, prepared, await this.build(tenantId, id, prepared, sequenceNumber));
    const updated = await inTransaction(this.db, async (trx) => {
      const written = await this.write(trx, tenantId, before, sequenceNumber, prepared, signed, {
        description: input.description ?? null,
        scheme_data: input.data ? JSON.stringify(input.data) : null,
      });
      if (!written) throw conflict(`trust list '${id}' changed while it was being updated; try again`);
      const after = this.toTrustList(await this.row(tenantId, id, trx));
      const beforeInput = await this.preparedOf(before);
      await this.deps.audit.record(
        ctx,
        {
          tenantId,
          actionType: 'trust_list.updated',
          before: auditView(this.toTrustList(before), beforeInput),
          after: auditView(after, prepared),
        },
        trx,
      );
      return after;
    });
    this.forgetTrusted(tenantId);
    return updated;
  }

  /** The stored input of a row, for audit snapshots (entities as given, not re-resolved). */
  private async preparedOf(row: TrustListRow): Promise<Prepared> {
    return {
      keyChainId: row.key_chain_id,
      scheme: row.scheme_data ? parse(row.scheme_data) : {},
      entityConfig: parse(row.entity_config),
      entities: [],
      entityKeyChains: parse(row.entity_key_chains),
    };
  }

  /** Writes a signed state over `before` (compare-and-set), with a version row when the sequence number moves. */
  private async write(
    trx: Executor,
    tenantId: string,
    before: TrustListRow,
    sequenceNumber: number,
    prepared: Prepared,
    signed: Signed,
    extra: { description?: string | null; scheme_data?: string | null } = {},
  ) {
    const scoped = tenantDb(trx, tenantId);
    const written = await store.updateTrustList(
      scoped,
      before.id,
      { sequenceNumber: before.sequence_number, issuedAt: before.issued_at },
      {
        ...extra,
        key_chain_id: prepared.keyChainId,
        entity_config: JSON.stringify(prepared.entityConfig),
        entity_key_chains: JSON.stringify(prepared.entityKeyChains),
        data: JSON.stringify(signed.data),
        jwt: signed.jwt,
        sequence_number: sequenceNumber,
        issued_at: signed.issuedAt,
        next_update: signed.nextUpdate,
        resign_at: signed.resignAt,
        updated_at: nowIso(),
      },
    );
    if (written && sequenceNumber !== before.sequence_number) {
      try {
        await this.insertVersion(scoped, before.id, sequenceNumber, prepared, signed);
      } catch (err) {
        if (isUniqueViolation(err)) return false;
        throw err;
      }
    }
    return written;
  }

  async remove(ctx: RequestContext, tenantId: string, id: string): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      const before = await this.row(tenantId, id, trx);
      await store.deleteTrustList(tenantDb(trx, tenantId), id);
      await this.deps.audit.record(
        ctx,
        { tenantId, actionType: 'trust_list.deleted', before: auditView(this.toTrustList(before), await this.preparedOf(before)) },
        trx,
      );
    });
    this.forgetTrusted(tenantId);
  }

  /**
   * Re-signs a list from its stored input against the current key chains. When the generated content
   * is unchanged (the usual case: NextUpdate approaching, or the signing key rotated) only
   * ListIssueDateTime, NextUpdate and the signature change and the sequence number stays; when it
   * changed (a listed standalone key chain rotated, the tenant was renamed) the list gets the next
   * sequence number and a version, audited as the service's own update.
   */
  async refresh(tenantId: string, id: string, ctx: RequestContext = this.systemContext(tenantId, 'resign')) {
    const before = await store.findTrustList(tenantDb(this.db, tenantId), id);
    if (!before) return 'gone' as const;
    const stored = await this.preparedOf(before);
    const prepared = await this.prepare(tenantId, {
      keyChainId: before.key_chain_id,
      entities: stored.entityConfig,
      ...(before.scheme_data && { data: stored.scheme }),
    });
    const built = await this.build(tenantId, id, prepared, before.sequence_number);
    const changed = contentOf(built.data) !== contentOf(parse(before.data));
    const sequenceNumber = changed ? before.sequence_number + 1 : before.sequence_number;
    built.data.LoTE.ListAndSchemeInformation.LoTESequenceNumber = sequenceNumber;
    const signed = await this.sign(tenantId, prepared, built);
    const outcome = await inTransaction(this.db, async (trx) => {
      if (!(await this.write(trx, tenantId, before, sequenceNumber, prepared, signed))) return 'skipped' as const;
      if (changed) {
        const after = this.toTrustList(await this.row(tenantId, id, trx));
        await this.deps.audit.record(
          ctx,
          {
            tenantId,
            actionType: 'trust_list.updated',
            before: auditView(this.toTrustList(before), stored),
            after: auditView(after, prepared),
          },
          trx,
        );
        return 'updated' as const;
      }
      return 'resigned' as const;
    });
    this.forgetTrusted(tenantId);
    return outcome;
  }

  private systemContext(tenantId: string, why: string): RequestContext {
    return { principal: { ...SYSTEM, tenantId }, requestId: `trust-list-${why}-${randomUUID()}` };
  }

  /** The trust lists that sign with, or list, a key chain. */
  private async referencing(db: Executor, tenantId: string, keyChainId: string) {
    const rows = await store.keyChainReferences(tenantDb(db, tenantId));
    return rows
      .map((row) => ({
        id: row.id,
        signer: row.key_chain_id === keyChainId,
        entity: parse<string[]>(row.entity_key_chains).includes(keyChainId),
      }))
      .filter((ref) => ref.signer || ref.entity);
  }

  private async usersOf(db: Executor, tenantId: string, keyChainId: string): Promise<string[]> {
    return (await this.referencing(db, tenantId, keyChainId)).map(
      (ref) => `trust list '${ref.id}' (${[ref.signer && 'signs with it', ref.entity && 'lists it'].filter(Boolean).join(' and ')})`,
    );
  }

  /** A rotated key chain: the lists it signs get the new key; the lists it appears in, its new certificates. */
  private async afterRotation(tenantId: string, keyChainId: string) {
    const ctx = this.systemContext(tenantId, 'rotation');
    for (const ref of await this.referencing(this.db, tenantId, keyChainId)) {
      try {
        await this.refresh(tenantId, ref.id, ctx);
      } catch {
        // The rotation stands; the scheduled job retries the list at its next round.
        await store.resignSoon(tenantDb(this.db, tenantId), ref.id, loteDateTime(new Date()));
      }
    }
  }

  /** The scheduled job: re-sign every list whose NextUpdate is within the margin. */
  async resignDue(now = new Date()) {
    const failures: unknown[] = [];
    for (const due of await store.listsDue(this.db, loteDateTime(now))) {
      try {
        await this.refresh(due.tenant_id, due.id);
      } catch (err) {
        failures.push(err); // one broken list must not keep the others from being re-signed
      }
    }
    if (failures.length) throw new AggregateError(failures, `${failures.length} trust list(s) could not be re-signed`);
  }
}
