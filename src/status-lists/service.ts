// Status lists: per-tenant lists of credential statuses, allocation of unpredictable indexes at
// issuance, and status changes that flip bits in the stored bitset. The signed tokens are
// publisher.ts's.

import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { AuditService } from '../audit/service.js';
import type { StatusListSigning } from '../credential-configs/service.js';
import type { KeyChainService } from '../key-chains/service.js';
import type { SigningService } from '../key-chains/signing.js';
import type { RequestContext } from '../platform/auth/principal.js';
import type { Clock } from '../platform/clock.js';
import { type TenantDb, tenantDb } from '../platform/db/tenant-db.js';
import { type Executor, fromBool, inTransaction, toBool } from '../platform/db/values.js';
import { conflict, invalidFields, notFound } from '../platform/http/problem.js';
import type { Metrics } from '../platform/observability/metrics.js';
import type { StatusListConfig } from '../tenants/schemas.js';
import { byteLength, getStatus, IndexPermutation, maxStatus, newPermutationKey, type StatusBits, setStatus } from './bitset.js';
import { type CachedStatusToken, type Caches, tenantKey } from './cache.js';
import { StatusListPublisher } from './publisher.js';
import * as store from './store.js';

/** The Token Status List's registered values (draft-ietf-oauth-status-list), by name. */
const STATUS_NAMES: Record<number, SessionCredentialStatus['state']> = { 0: 'valid', 1: 'revoked', 2: 'suspended' };

export interface SessionCredentialStatus {
  credentialConfigurationId: string;
  statusListId: string;
  index: number;
  status: number;
  state: 'valid' | 'revoked' | 'suspended' | 'other';
}

export interface StatusListDefaults {
  capacity: number;
  bits: StatusBits;
  ttl: number;
}

export interface StatusListLimits {
  /** STATUS_MAX_CAPACITY: entries of one list. */
  capacity: number;
  /** STATUS_MAX_LISTS_PER_TENANT: lists the API creates for a tenant. */
  listsPerTenant: number;
}

export interface EffectiveStatusListConfig {
  capacity: number;
  bits: StatusBits;
  ttl: number;
  immediateUpdate: boolean;
  enableAggregation: boolean;
}

export interface StatusList {
  id: string;
  tenantId: string;
  credentialConfigurationId: string | null;
  keyChainId: string | null;
  bits: StatusBits;
  capacity: number;
  usedEntries: number;
  availableEntries: number;
  ttl: number;
  immediateUpdate: boolean;
  enableAggregation: boolean;
  uri: string;
  createdAt: string;
  updatedAt: string;
  expiresAt: string | null;
}

export interface StatusListInput {
  credentialConfigurationId?: string | null;
  keyChainId?: string | null;
  bits?: StatusBits;
  capacity?: number;
}

export interface StatusListUpdate {
  credentialConfigurationId?: string | null;
  keyChainId?: string | null;
}

/** One allocated entry: what goes into the credential's `status.status_list`. */
export interface StatusEntry {
  listId: string;
  idx: number;
  uri: string;
}

export interface StatusListDeps {
  db: Executor;
  publicUrl: string;
  defaults: StatusListDefaults;
  limits: StatusListLimits;
  audit: AuditService;
  keyChains: KeyChainService;
  signing: SigningService;
  caches: Caches;
  /** The tenant's overrides (TenantService.statusListConfig). */
  tenantConfig(tenantId: string): Promise<StatusListConfig | null>;
  /** A credential configuration's signing chain and status-list signer; undefined when the tenant has no such configuration. */
  configurationSigning(tenantId: string, id: string): Promise<StatusListSigning | undefined>;
  /** Gives the space of deleted rows back to the file system, where the database can. */
  reclaimSpace(): Promise<void>;
  /** Whether the tenant has the session (SessionService: the sessions table is not this feature's). */
  sessionExists(tenantId: string, sessionId: string): Promise<boolean>;
  metrics: Pick<Metrics, 'statusListSigned'>;
  /** Stamps rows and entries, and dates the signed tokens. */
  clock: Clock;
}

const SYSTEM = { principal: { clientId: 'system:status-lists', tenantId: null, roles: [] }, requestId: 'status-lists' };
/** How often allocation looks for (or makes) a list with free entries before giving up. */
const ALLOCATION_ROUNDS = 5;
/** Concurrent writers of one bitset retry this often. */
const WRITE_ATTEMPTS = 50;

export class StatusListService {
  private readonly publisher: StatusListPublisher;

  /** What time it is for the lists (their served tokens' max-age too). */
  readonly clock: Clock;

  constructor(private readonly deps: StatusListDeps) {
    this.clock = deps.clock;
    this.publisher = new StatusListPublisher({
      ...deps,
      uri: (tenantId, listId) => this.uri(tenantId, listId),
      aggregationUri: (tenantId) => this.aggregationUri(tenantId),
    });
  }

  private scoped(tenantId: string, db: Executor = this.deps.db) {
    return tenantDb(db, tenantId);
  }

  uri(tenantId: string, listId: string): string {
    return `${this.aggregationUri(tenantId)}/${encodeURIComponent(listId)}`;
  }

  aggregationUri(tenantId: string): string {
    return `${this.deps.publicUrl}/issuers/${encodeURIComponent(tenantId)}/status-lists`;
  }

  async effectiveConfig(tenantId: string): Promise<EffectiveStatusListConfig> {
    const own = (await this.deps.tenantConfig(tenantId)) ?? {};
    const { defaults, limits } = this.deps;
    return {
      // A tenant's capacity set before STATUS_MAX_CAPACITY was lowered gives way to it.
      capacity: Math.min(own.capacity ?? defaults.capacity, limits.capacity),
      bits: own.bits ?? defaults.bits,
      ttl: own.ttl ?? defaults.ttl,
      immediateUpdate: own.immediateUpdate ?? false,
      enableAggregation: own.enableAggregation ?? true,
    };
  }

  private view(row: store.StatusListMeta): StatusList {
    return {
      id: row.id,
      tenantId: row.tenant_id,
      credentialConfigurationId: row.credential_configuration_id,
      keyChainId: row.key_chain_id,
      bits: row.bits as StatusBits,
      capacity: row.capacity,
      usedEntries: row.used_entries,
      availableEntries: row.capacity - row.used_entries,
      ttl: row.ttl,
      immediateUpdate: fromBool(row.immediate_update),
      enableAggregation: fromBool(row.enable_aggregation),
      uri: this.uri(row.tenant_id, row.id),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      expiresAt: row.token_expires_at,
    };
  }

  async list(tenantId: string): Promise<StatusList[]> {
    return (await store.listLists(this.scoped(tenantId))).map((row) => this.view(row));
  }

  async get(tenantId: string, id: string): Promise<StatusList> {
    const row = await store.findMeta(this.scoped(tenantId), id);
    if (!row) throw notFound('status list', id);
    return this.view(row);
  }

  /**
   * `list` is what the list will be: its configuration must exist, and its key chain is a status-list
   * chain, or the attestation chain that signs the credentials of the one configuration the list is
   * bound to (so that a wallet checking the list with the issuer's key succeeds).
   */
  private async checkReferences(tenantId: string, list: StatusListUpdate) {
    const configurationId = list.credentialConfigurationId || null;
    const signing = configurationId ? await this.deps.configurationSigning(tenantId, configurationId) : undefined;
    if (configurationId && !signing) {
      throw invalidFields([
        { field: 'credentialConfigurationId', message: `credential configuration '${configurationId}' does not exist` },
      ]);
    }
    if (!list.keyChainId) return;
    const chain = await this.deps.keyChains.find(tenantId, list.keyChainId);
    if (!chain) throw invalidFields([{ field: 'keyChainId', message: `key chain '${list.keyChainId}' does not exist` }]);
    if (chain.usageType === 'statusList') return;
    if (chain.usageType === 'attestation' && signing?.keyChainId === chain.id) return;
    const message =
      chain.usageType === 'attestation'
        ? `key chain '${chain.id}' is an attestation key chain: it may sign only a list bound (credentialConfigurationId) to a credential configuration whose credentials it signs`
        : `key chain '${chain.id}' has usage type ${chain.usageType}, not statusList`;
    throw invalidFields([{ field: 'keyChainId', message }]);
  }

  async create(ctx: RequestContext, tenantId: string, input: StatusListInput): Promise<StatusList> {
    const { limits } = this.deps;
    if (input.capacity !== undefined && input.capacity > limits.capacity) {
      throw invalidFields([{ field: 'capacity', message: `must be at most ${limits.capacity} (STATUS_MAX_CAPACITY)` }]);
    }
    const belowLimit = async (trx: Executor) => (await store.countLists(this.scoped(tenantId, trx))) < limits.listsPerTenant;
    const created = await this.open(ctx, tenantId, input, belowLimit);
    if (created) return created;
    throw conflict(
      `the tenant has ${limits.listsPerTenant} status lists, as many as it may hold (STATUS_MAX_LISTS_PER_TENANT); delete an unused one first`,
    );
  }

  /**
   * Creates a list if `wanted` says so. `wanted` reads the tenant's lists in the transaction that
   * inserts, after taking the tenant's list-opening lock (store.lockListOpening): so concurrent
   * requests decide one after the other, each seeing the lists the others opened. Undefined when
   * `wanted` declined. (A list opened because every list a credential may use is full is never
   * refused by the limit on the number of lists.)
   */
  private async open(
    ctx: RequestContext | undefined,
    tenantId: string,
    input: StatusListInput,
    wanted: (trx: Executor) => Promise<boolean>,
  ): Promise<StatusList | undefined> {
    // Read before the transaction: on SQLite its one connection is the transaction's until it ends.
    await this.checkReferences(tenantId, input);
    const config = await this.effectiveConfig(tenantId);
    const bits = input.bits ?? config.bits;
    const capacity = input.capacity ?? config.capacity;
    return inTransaction(this.deps.db, async (trx) => {
      await store.lockListOpening(trx, tenantId);
      if (!(await wanted(trx))) return undefined;
      const scoped = this.scoped(tenantId, trx);
      const id = randomUUID();
      const now = this.deps.clock.now().toISOString();
      await store.insertList(scoped, {
        id,
        credential_configuration_id: input.credentialConfigurationId || null,
        key_chain_id: input.keyChainId || null,
        bits,
        capacity,
        ttl: config.ttl,
        immediate_update: toBool(config.immediateUpdate),
        enable_aggregation: toBool(config.enableAggregation),
        used_entries: 0,
        permutation_key: newPermutationKey(),
        bitset: Buffer.alloc(byteLength(capacity, bits)),
        version: 0,
        token_jwt: null,
        token_cwt: null,
        token_version: null,
        token_seq: 0,
        token_issued_at: null,
        token_expires_at: null,
        created_at: now,
        updated_at: now,
      });
      const list = this.view((await store.findMeta(scoped, id)) as store.StatusListMeta);
      await this.deps.audit.record(ctx ?? SYSTEM, { tenantId, actionType: 'status_list.created', after: auditView(list) }, trx);
      return list;
    });
  }

  async update(ctx: RequestContext, tenantId: string, id: string, input: StatusListUpdate): Promise<StatusList> {
    const before = await this.get(tenantId, id);
    await this.checkReferences(tenantId, {
      credentialConfigurationId:
        input.credentialConfigurationId !== undefined ? input.credentialConfigurationId : before.credentialConfigurationId,
      keyChainId: input.keyChainId !== undefined ? input.keyChainId : before.keyChainId,
    });
    const scoped = this.scoped(tenantId);
    await store.updateList(scoped, id, {
      ...(input.credentialConfigurationId !== undefined && { credential_configuration_id: input.credentialConfigurationId || null }),
      ...(input.keyChainId !== undefined && { key_chain_id: input.keyChainId || null }),
      updated_at: this.deps.clock.now().toISOString(),
    });
    // Another key signs from now on: the stored token is re-signed at the next request.
    if (input.keyChainId !== undefined && (input.keyChainId || null) !== before.keyChainId) await store.forgetTokens(scoped, id);
    const after = await this.get(tenantId, id);
    await this.deps.audit.record(ctx, { tenantId, actionType: 'status_list.updated', before: auditView(before), after: auditView(after) });
    return after;
  }

  async remove(ctx: RequestContext, tenantId: string, id: string): Promise<void> {
    const before = await this.get(tenantId, id);
    const scoped = this.scoped(tenantId);
    if (before.usedEntries > 0 || (await store.countEntries(scoped, id)) > 0) {
      throw conflict(`status list '${id}' is in use by ${before.usedEntries} credential(s) and cannot be deleted`);
    }
    await store.deleteList(scoped, id);
    this.deps.caches.statusList.clear(tenantKey(tenantId, id));
    await this.deps.reclaimSpace();
    await this.deps.audit.record(ctx, { tenantId, actionType: 'status_list.deleted', before: auditView(before) });
  }

  /**
   * Entries for `count` new credentials of a configuration: from a list bound to the configuration,
   * else a shared list; when all are full, a new shared list is made. A configuration whose status
   * lists its issuer signs (statusListSigner issuer) uses, and makes, only lists bound to it and
   * signed by its credentials' key chain. Each index comes from the
   * list's atomic slot counter (one conditional UPDATE) through its secret permutation; the entry rows
   * follow (their primary key (list, idx) rules out a second hand-out even if something went wrong;
   * a failure between the two leaves an index never handed out, not one handed out twice).
   */
  async allocate(
    tenantId: string,
    request: { credentialConfigurationId: string; sessionId?: string | null; count?: number },
  ): Promise<StatusEntry[]> {
    const { entries, record } = await this.allocateUnrecorded(tenantId, request);
    await record.execute();
    return entries;
  }

  /**
   * `allocate` without writing the entry rows: `record` is the INSERT (with RETURNING) that writes
   * them, for the caller to send with its own statement, before any credential with these entries
   * is handed out (an index whose row is never written was never handed out).
   */
  async allocateUnrecorded(
    tenantId: string,
    request: { credentialConfigurationId: string; sessionId?: string | null; count?: number },
  ): Promise<{ entries: StatusEntry[]; record: store.EntriesInsert }> {
    const allocated: { entry: StatusEntry; row: store.EntryRow }[] = [];
    const signing = await this.deps.configurationSigning(tenantId, request.credentialConfigurationId);
    // statusListSigner issuer: only lists of this configuration signed by its credentials' key chain.
    const issuerChainId = signing?.statusListSigner === 'issuer' ? signing.keyChainId : undefined;
    for (let i = 0; i < (request.count ?? 1); i++)
      allocated.push(await this.allocateOne(tenantId, request.credentialConfigurationId, issuerChainId, request.sessionId ?? null));
    const record = store.insertEntries(
      this.deps.db,
      tenantId,
      allocated.map(({ row }) => row),
    );
    return { entries: allocated.map(({ entry }) => entry), record };
  }

  private async allocateOne(
    tenantId: string,
    configurationId: string,
    issuerChainId: string | undefined,
    sessionId: string | null,
  ): Promise<{ entry: StatusEntry; row: store.EntryRow }> {
    const scoped = this.scoped(tenantId);
    const usableLists = (db: Executor) => store.usableLists(this.scoped(tenantId, db), configurationId, issuerChainId).execute();
    /** The entry of a slot taken: its index through the list's secret permutation, its row keyed (list, idx). */
    const entryOf = (slot: store.ClaimedSlot) => {
      const idx = new IndexPermutation(slot.permutation_key, slot.capacity).permute(slot.used_entries - 1);
      const row = {
        list_id: slot.id,
        idx,
        session_id: sessionId,
        credential_configuration_id: configurationId,
        created_at: this.deps.clock.now().toISOString(),
      };
      return { entry: { listId: slot.id, idx, uri: this.uri(tenantId, slot.id) }, row };
    };
    // Most of the time the first usable list has room: one statement picks it and takes a slot.
    const first = await store.claimFirstSlot(scoped, configurationId, issuerChainId);
    if (first) return entryOf(first);
    for (let round = 0; round < ALLOCATION_ROUNDS; round++) {
      for (const list of await usableLists(this.deps.db)) {
        const slot = await store.claimSlot(scoped, list.id);
        if (slot) return entryOf(slot);
      }
      // Every list the configuration may use is full: roll over to a new one, shared unless the
      // credentials' own key chain signs it. Of the allocations that find them full at once, the
      // first opens it; the others, deciding after it under the lock, find its free entries and
      // take them in their next round.
      const rollover = issuerChainId ? { credentialConfigurationId: configurationId, keyChainId: issuerChainId } : {};
      await this.open(undefined, tenantId, rollover, async (trx) => (await usableLists(trx)).length === 0);
    }
    throw new Error(`no status list entry could be allocated for '${configurationId}'`);
  }

  /**
   * Sets the session's entries (or those of one configuration) to `value`: the entry rows keep the
   * value and the bits of the stored bitsets flip, in one transaction, for exactly the rows the UPDATE
   * changed, so what the rows say (which decides whether the session's tokens may be refreshed) is
   * what the lists say; on PostgreSQL a concurrent change of the same session waits for the entry
   * rows this one locked, so the two apply in one order to rows and bits alike. 400 (nothing
   * changed) if a list has too few bits for it.
   */
  private async setStatus(tenantId: string, sessionId: string, configurationId: string | undefined, value: number): Promise<number> {
    const { metas, versions, changed } = await inTransaction(this.deps.db, async (trx) => {
      const scoped = this.scoped(tenantId, trx);
      const byList = new Map<string, number[]>();
      for (const entry of await store.setEntriesStatus(scoped, sessionId, configurationId, value)) {
        byList.set(entry.list_id, [...(byList.get(entry.list_id) ?? []), entry.idx]);
      }
      const metas = new Map<string, store.StatusListMeta>();
      // Lists in one order, so two transactions flipping the same lists never wait for each other in a cycle.
      for (const listId of [...byList.keys()].sort()) {
        const meta = await store.findMeta(scoped, listId);
        if (!meta) continue;
        if (value > maxStatus(meta.bits)) {
          throw invalidFields([
            {
              field: 'status',
              message: `status ${value} needs more bits than the ${meta.bits} bit(s) per entry of status list '${listId}'`,
            },
          ]);
        }
        metas.set(listId, meta);
      }
      const versions = new Map<string, number>();
      let changed = 0;
      for (const listId of metas.keys()) {
        const indexes = byList.get(listId) ?? [];
        changed += indexes.length;
        const version = await this.flip(scoped, listId, indexes, value);
        if (version !== undefined) versions.set(listId, version);
      }
      return { metas, versions, changed };
    });
    for (const [listId, version] of versions) {
      if (fromBool((metas.get(listId) as store.StatusListMeta).immediate_update)) {
        await this.publisher.signedAtLeast(tenantId, listId, version);
      }
    }
    return changed;
  }

  /** Writes the changed bitset and bumps the list's version in one statement; the new version, or undefined if nothing changed. */
  private async flip(scoped: TenantDb, listId: string, indexes: number[], value: number): Promise<number | undefined> {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const row = await store.findList(scoped, listId);
      if (!row) return undefined;
      const bitset = new Uint8Array(row.bitset);
      for (const idx of indexes) setStatus(bitset, row.bits, idx, value);
      if (Buffer.compare(bitset, row.bitset) === 0) return undefined;
      if (await store.writeBitset(scoped, listId, row.version, bitset, this.deps.clock.now().toISOString())) return row.version + 1;
    }
    throw conflict(`status list '${listId}' is changing too often; try again`);
  }

  /** SQL over a session row (the table `sessions` in scope) that holds while none of its credentials is revoked, suspended or otherwise not valid. */
  readonly sessionCredentialsValid = store.credentialsAllValid(sql.ref('sessions.tenant_id'), sql.ref('sessions.id'));

  /** POST /api/session/revoke: every credential of a session (or of one of its configurations) gets `status`. */
  async changeSessionStatus(
    ctx: RequestContext,
    tenantId: string,
    input: { sessionId: string; status: number; credentialConfigurationId?: string },
  ) {
    if (!(await this.deps.sessionExists(tenantId, input.sessionId))) throw notFound('session', input.sessionId);
    const updated = await this.setStatus(tenantId, input.sessionId, input.credentialConfigurationId, input.status);
    await this.deps.audit.record(ctx, {
      tenantId,
      actionType: 'status_list.status_changed',
      after: {
        sessionId: input.sessionId,
        status: input.status,
        credentialConfigurationId: input.credentialConfigurationId ?? null,
        entries: updated,
      },
    });
    return { sessionId: input.sessionId, status: input.status, updatedEntries: updated };
  }

  /**
   * GET /api/session/{id}/credentials: each credential the session issued with its entry's status now
   * (0 valid, 1 revoked, 2 suspended, other values as the list holds them), read from the stored bitsets.
   */
  async sessionCredentials(tenantId: string, sessionId: string): Promise<SessionCredentialStatus[]> {
    const scoped = this.scoped(tenantId);
    if (!(await this.deps.sessionExists(tenantId, sessionId))) throw notFound('session', sessionId);
    const entries = await store.entriesOfSessionWithConfiguration(scoped, sessionId);
    const lists = new Map<string, store.StatusListRow | undefined>();
    for (const listId of new Set(entries.map((e) => e.list_id))) lists.set(listId, await store.findList(scoped, listId));
    return entries.flatMap((entry) => {
      const list = lists.get(entry.list_id);
      if (!list) return [];
      const value = getStatus(new Uint8Array(list.bitset), list.bits, entry.idx);
      return [
        {
          credentialConfigurationId: entry.credential_configuration_id,
          statusListId: entry.list_id,
          index: entry.idx,
          status: value,
          state: STATUS_NAMES[value] ?? 'other',
        },
      ];
    });
  }

  /** The token to serve (StatusListPublisher.token). */
  token(tenantId: string, listId: string): Promise<CachedStatusToken> {
    return this.publisher.token(tenantId, listId);
  }

  /** Signs the list as it is now and stores the token, so that every instance serves it. */
  regenerate(tenantId: string, listId: string): Promise<CachedStatusToken> {
    return this.publisher.regenerate(tenantId, listId);
  }

  /** After a key rotation: re-signs the tenant's signed lists that the rotated chain signs. */
  resignFor(tenantId: string, keyChainId: string): Promise<void> {
    return this.publisher.resignFor(tenantId, keyChainId);
  }

  /** For the key-chain usage check: why a key chain cannot be deleted. */
  async keyChainUsers(db: Executor, tenantId: string, keyChainId: string): Promise<string[]> {
    const lists = await store.listsUsingKeyChain(this.scoped(tenantId, db), keyChainId);
    return lists.map((l) => `status list '${l.id}' signs with it`);
  }

  async aggregation(tenantId: string): Promise<{ status_lists: string[] }> {
    const lists = await store.listLists(this.scoped(tenantId));
    return { status_lists: lists.map((l) => this.uri(tenantId, l.id)) };
  }
}

const auditView = (list: StatusList) => ({
  id: list.id,
  credentialConfigurationId: list.credentialConfigurationId,
  keyChainId: list.keyChainId,
  bits: list.bits,
  capacity: list.capacity,
  ttl: list.ttl,
  immediateUpdate: list.immediateUpdate,
  enableAggregation: list.enableAggregation,
});
