// Keeping signed lists current: re-signing before NextUpdate passes (the scheduled job) and whenever
// a key chain a list signs with or lists rotates; and telling key chains which lists use them.
import { randomUUID } from 'node:crypto';
import type { AuditService } from '../audit/service.js';
import type { KeyChainService } from '../key-chains/service.js';
import type { Principal, RequestContext } from '../platform/auth/principal.js';
import type { Clock } from '../platform/clock.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import { type Executor, inTransaction } from '../platform/db/values.js';
import { prepare } from './entities.js';
import { loteDateTime } from './lote.js';
import { auditView, parse, requireRow, storedInput, toTrustList, writeSigned } from './records.js';
import { contentOf, type TrustListSigner } from './signer.js';
import * as store from './store.js';
import type { TrustedCertificates } from './trusted.js';

const SYSTEM: Principal = { clientId: 'system:trust-lists', tenantId: null, roles: [] };

export interface ResignerDeps {
  audit: AuditService;
  keyChains: KeyChainService;
  signer: TrustListSigner;
  trusted: TrustedCertificates;
  clock: Clock;
}

export class TrustListResigner {
  constructor(
    private readonly db: Executor,
    private readonly deps: ResignerDeps,
  ) {
    deps.keyChains.onUsageCheck((db, tenantId, keyChainId) => this.usersOf(db, tenantId, keyChainId));
    deps.keyChains.onRotated((tenantId, keyChainId) => this.afterRotation(tenantId, keyChainId));
  }

  /**
   * Re-signs a list from its stored input against the current key chains. When the generated content
   * is unchanged (the usual case: NextUpdate approaching, or the signing key rotated) only
   * ListIssueDateTime, NextUpdate and the signature change and the sequence number stays; when it
   * changed (a listed standalone key chain rotated, the tenant was renamed) the list gets the next
   * sequence number and a version, audited as the service's own update.
   */
  async refresh(tenantId: string, id: string, ctx: RequestContext = this.systemContext(tenantId, 'resign')) {
    const { audit, keyChains, signer, trusted } = this.deps;
    const before = await store.findTrustList(tenantDb(this.db, tenantId), id);
    if (!before) return 'gone' as const;
    const stored = storedInput(before);
    const prepared = await prepare(keyChains, tenantId, signer.tenantUrl(tenantId), {
      keyChainId: before.key_chain_id,
      entities: stored.entityConfig,
      ...(before.scheme_data && { data: stored.scheme }),
    });
    const built = await signer.build(tenantId, id, prepared, before.sequence_number);
    const changed = contentOf(built.data) !== contentOf(parse(before.data));
    const sequenceNumber = changed ? before.sequence_number + 1 : before.sequence_number;
    built.data.LoTE.ListAndSchemeInformation.LoTESequenceNumber = sequenceNumber;
    const signed = await signer.sign(tenantId, prepared, built);
    const outcome = await inTransaction(this.db, async (trx) => {
      if (!(await writeSigned(trx, tenantId, before, sequenceNumber, prepared, signed, this.deps.clock.now()))) return 'skipped' as const;
      if (changed) {
        const after = toTrustList(await requireRow(trx, tenantId, id));
        await audit.record(
          ctx,
          {
            tenantId,
            actionType: 'trust_list.updated',
            before: auditView(toTrustList(before), stored),
            after: auditView(after, prepared),
          },
          trx,
        );
        return 'updated' as const;
      }
      return 'resigned' as const;
    });
    trusted.forget(tenantId);
    return outcome;
  }

  /** The scheduled job: re-sign every list whose NextUpdate is within the margin. */
  async resignDue(now = this.deps.clock.now()) {
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
        await store.resignSoon(tenantDb(this.db, tenantId), ref.id, loteDateTime(this.deps.clock.now()));
      }
    }
  }
}
