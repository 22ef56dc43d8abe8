// Trust lists: a tenant's signed ETSI TS 119 602 lists of trusted entities (its own key chains and
// outside certificates), with a version per content change. This service is the lists' CRUD; the
// parts it is made of live beside it: entities.ts checks and resolves an input, signer.ts builds and
// signs the LoTE, records.ts stores a signed state, trusted.ts answers (and caches) what a tenant
// trusts, resigning.ts re-signs before NextUpdate and on key rotation.
import { randomUUID } from 'node:crypto';
import type { AuditService } from '../audit/service.js';
import type { KeyChainService } from '../key-chains/service.js';
import type { RequestContext } from '../platform/auth/principal.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import { type Executor, inTransaction, isUniqueViolation } from '../platform/db/values.js';
import { conflict, invalidFields, notFound } from '../platform/http/problem.js';
import { prepare } from './entities.js';
import type { TrustPurpose } from './lote.js';
import { auditView, insertVersion, parse, requireRow, storedInput, toTrustList, toVersion, writeSigned } from './records.js';
import { TrustListResigner } from './resigning.js';
import type { SchemeData, TrustList, TrustListInput, TrustListVersion } from './schemas.js';
import { TrustListSigner, type TrustListSignerDeps } from './signer.js';
import * as store from './store.js';
import { TrustedCertificates } from './trusted.js';

export interface TrustListDeps extends TrustListSignerDeps {
  audit: AuditService;
  keyChains: KeyChainService;
}

export class TrustListService {
  private readonly signer: TrustListSigner;
  private readonly trusted: TrustedCertificates;
  private readonly resigner: TrustListResigner;

  constructor(
    private readonly db: Executor,
    private readonly deps: TrustListDeps,
  ) {
    this.signer = new TrustListSigner(deps);
    this.trusted = new TrustedCertificates(db, deps.keyChains);
    this.resigner = new TrustListResigner(db, {
      audit: deps.audit,
      keyChains: deps.keyChains,
      signer: this.signer,
      trusted: this.trusted,
      clock: deps.clock,
    });
  }

  /** What time it is for the lists (their served max-age too). */
  get clock() {
    return this.deps.clock;
  }

  /** The certificates a tenant's verifier trusts, cached briefly; /api/cache reports and clears it. */
  get trustCache() {
    return this.trusted.cache;
  }

  /** See TrustedCertificates.of. */
  trustedCertificates(tenantId: string, purpose: TrustPurpose = 'credentials'): Promise<string[]> {
    return this.trusted.of(tenantId, purpose);
  }

  /** See TrustListResigner.refresh. */
  refresh(tenantId: string, id: string, ctx?: RequestContext) {
    return this.resigner.refresh(tenantId, id, ctx);
  }

  /** The scheduled job: see TrustListResigner.resignDue. */
  resignDue(now?: Date) {
    return this.resigner.resignDue(now);
  }

  /** Where the signed list is served. */
  publicUrl(tenantId: string, id: string) {
    return this.signer.publicUrl(tenantId, id);
  }

  async list(tenantId: string): Promise<TrustList[]> {
    return (await store.listTrustLists(tenantDb(this.db, tenantId))).map(toTrustList);
  }

  async get(tenantId: string, id: string): Promise<TrustList> {
    return toTrustList(await requireRow(this.db, tenantId, id));
  }

  /** The input that recreates the list (POST it elsewhere, or PUT it back after editing). */
  async export(tenantId: string, id: string): Promise<TrustListInput & { id: string }> {
    const row = await requireRow(this.db, tenantId, id);
    return {
      id: row.id,
      description: row.description,
      keyChainId: row.key_chain_id,
      ...(row.scheme_data && { data: parse<SchemeData>(row.scheme_data) }),
      entities: parse(row.entity_config),
    };
  }

  async versions(tenantId: string, id: string): Promise<TrustListVersion[]> {
    await requireRow(this.db, tenantId, id);
    return (await store.listVersions(tenantDb(this.db, tenantId), id)).map(toVersion);
  }

  async version(tenantId: string, id: string, versionId: string): Promise<TrustListVersion> {
    await requireRow(this.db, tenantId, id);
    const row = await store.findVersion(tenantDb(this.db, tenantId), id, versionId);
    if (!row) throw notFound('trust list version', versionId);
    return toVersion(row);
  }

  /** The served JWS and its validity, for the public endpoint. */
  async published(tenantId: string, id: string) {
    const row = await requireRow(this.db, tenantId, id);
    return { jwt: row.jwt, issuedAt: row.issued_at, nextUpdate: row.next_update };
  }

  async create(ctx: RequestContext, tenantId: string, input: TrustListInput): Promise<TrustList> {
    const id = input.id ?? randomUUID();
    const prepared = await prepare(this.deps.keyChains, tenantId, this.signer.tenantUrl(tenantId), input);
    const signed = await this.signer.issue(tenantId, id, prepared, 1);
    const now = this.deps.clock.now().toISOString();
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
      await insertVersion(scoped, id, 1, prepared, signed, this.deps.clock.now());
      const list = toTrustList(await requireRow(trx, tenantId, id));
      await this.deps.audit.record(ctx, { tenantId, actionType: 'trust_list.created', after: auditView(list, prepared) }, trx);
      return list;
    });
    this.trusted.forget(tenantId);
    return created;
  }

  /** PUT: the input replaces the list's content; a new version with the next sequence number is signed. */
  async update(ctx: RequestContext, tenantId: string, id: string, input: TrustListInput): Promise<TrustList> {
    if (input.id !== undefined && input.id !== id) {
      throw invalidFields([{ field: 'body.id', message: `cannot change: the path names trust list '${id}'` }]);
    }
    const before = await requireRow(this.db, tenantId, id);
    const prepared = await prepare(this.deps.keyChains, tenantId, this.signer.tenantUrl(tenantId), input, before.key_chain_id);
    const sequenceNumber = before.sequence_number + 1;
    const signed = await this.signer.issue(tenantId, id, prepared, sequenceNumber);
    const updated = await inTransaction(this.db, async (trx) => {
      const written = await writeSigned(trx, tenantId, before, sequenceNumber, prepared, signed, this.deps.clock.now(), {
        description: input.description ?? null,
        scheme_data: input.data ? JSON.stringify(input.data) : null,
      });
      if (!written) throw conflict(`trust list '${id}' changed while it was being updated; try again`);
      const after = toTrustList(await requireRow(trx, tenantId, id));
      await this.deps.audit.record(
        ctx,
        {
          tenantId,
          actionType: 'trust_list.updated',
          before: auditView(toTrustList(before), storedInput(before)),
          after: auditView(after, prepared),
        },
        trx,
      );
      return after;
    });
    this.trusted.forget(tenantId);
    return updated;
  }

  async remove(ctx: RequestContext, tenantId: string, id: string): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      const before = await requireRow(trx, tenantId, id);
      await store.deleteTrustList(tenantDb(trx, tenantId), id);
      await this.deps.audit.record(
        ctx,
        { tenantId, actionType: 'trust_list.deleted', before: auditView(toTrustList(before), storedInput(before)) },
        trx,
      );
    });
    this.trusted.forget(tenantId);
  }
}
