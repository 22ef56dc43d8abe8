// How a signed list is stored and read back: rows as the API shows them, the audit snapshot, the
// compare-and-set write of a signed state and its version rows.
import { randomUUID } from 'node:crypto';
import { type TenantDb, tenantDb } from '../platform/db/tenant-db.js';
import { type Executor, isUniqueViolation } from '../platform/db/values.js';
import { notFound } from '../platform/http/problem.js';
import type { Prepared } from './entities.js';
import type { TrustList, TrustListVersion } from './schemas.js';
import type { Signed } from './signer.js';
import type { TrustListRow, TrustListVersionRow } from './store.js';
import * as store from './store.js';

export const parse = <T>(json: string) => JSON.parse(json) as T;

export function toTrustList(row: TrustListRow): TrustList {
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

export function toVersion(row: TrustListVersionRow): TrustListVersion {
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

/** The stored input of a row, for audit snapshots and re-signing (entities as given, not re-resolved). */
export function storedInput(row: TrustListRow): Prepared {
  return {
    keyChainId: row.key_chain_id,
    scheme: row.scheme_data ? parse(row.scheme_data) : {},
    entityConfig: parse(row.entity_config),
    entities: [],
    entityKeyChains: parse(row.entity_key_chains),
  };
}

export const auditView = (
  list: { id: string; description: string | null; keyChainId: string; sequenceNumber: number },
  input: Prepared,
) => ({
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

/** The list's row, or 404. */
export async function requireRow(db: Executor, tenantId: string, id: string): Promise<TrustListRow> {
  const row = await store.findTrustList(tenantDb(db, tenantId), id);
  if (!row) throw notFound('trust list', id);
  return row;
}

export async function insertVersion(db: TenantDb, id: string, sequenceNumber: number, prepared: Prepared, signed: Signed, now: Date) {
  await store.insertVersion(db, {
    id: randomUUID(),
    trust_list_id: id,
    sequence_number: sequenceNumber,
    key_chain_id: prepared.keyChainId,
    entity_config: JSON.stringify(prepared.entityConfig),
    data: JSON.stringify(signed.data),
    jwt: signed.jwt,
    created_at: now.toISOString(),
  });
}

/**
 * Writes a signed state over `before` (compare-and-set), with a version row when the sequence number
 * moves. False when another update or re-signing came first.
 */
export async function writeSigned(
  trx: Executor,
  tenantId: string,
  before: TrustListRow,
  sequenceNumber: number,
  prepared: Prepared,
  signed: Signed,
  now: Date,
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
      updated_at: now.toISOString(),
    },
  );
  if (written && sequenceNumber !== before.sequence_number) {
    try {
      await insertVersion(scoped, before.id, sequenceNumber, prepared, signed, now);
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw err;
    }
  }
  return written;
}
