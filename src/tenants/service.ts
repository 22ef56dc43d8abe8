// Tenants: the organisations that share one deployment, each with its own data and clients.

import type { Selectable } from 'kysely';
import type { AuditService } from '../audit/service.js';
import type { Client, ClientService } from '../clients/service.js';
import type { RequestContext } from '../platform/auth/principal.js';
import type { Role } from '../platform/auth/roles.js';
import type { Clock } from '../platform/clock.js';
import type { TenantsTable } from '../platform/db/schema.js';
import { type Executor, inTransaction, isUniqueViolation, parseJson } from '../platform/db/values.js';
import { conflict, invalidFields, notFound } from '../platform/http/problem.js';
import { overrides, type SessionConfig, type StatusListConfig } from './schemas.js';
import * as store from './store.js';

export interface Tenant {
  id: string;
  name: string;
  description: string | null;
  status: TenantStatus;
  sessionConfig: SessionConfig | null;
  statusListConfig: StatusListConfig | null;
  createdAt: string;
  updatedAt: string;
  clients: Client[];
}

/** `initializing` while the tenant's defaults are created (in the same transaction), then `active`. */
export type TenantStatus = 'initializing' | 'active';

export interface TenantInput {
  id: string;
  name: string;
  description?: string | null;
  sessionConfig?: SessionConfig | null;
  statusListConfig?: StatusListConfig | null;
  roles?: Role[];
}
export type TenantUpdate = Partial<Omit<TenantInput, 'id'>>;

/** Later features (key chains, status lists) give every new tenant its defaults through these. */
export type TenantInitializer = (db: Executor, tenantId: string, ctx: RequestContext) => Promise<void>;

/** Removes what a tenant has outside the database (its users at the identity provider) when it is deleted. */
export type TenantCleanup = (db: Executor, tenantId: string) => Promise<void>;

type TenantRow = Selectable<TenantsTable>;

/** PATCH semantics for a config object: a key with null resets it, a key with a value sets it. */
function mergeConfig<T extends Record<string, unknown>>(current: T | null, change: T | null | undefined): T | null {
  if (change === undefined) return current;
  if (change === null) return null;
  return overrides({ ...(current ?? {}), ...change }) as T | null;
}

const adminClientId = (tenantId: string) => `${tenantId}-admin`;

/**
 * Whether the tenant exists: what clients need of tenants before the tenant service can exist (the
 * tenant service makes a tenant's admin client, so it is built after the clients).
 */
export async function tenantExists(db: Executor, id: string): Promise<boolean> {
  return (await store.findTenant(db, id)) !== undefined;
}

export class TenantService {
  constructor(
    private readonly db: Executor,
    private readonly clients: ClientService,
    private readonly audit: AuditService,
    /** STATUS_MAX_CAPACITY: the most entries a tenant's status list configuration may ask for. */
    private readonly maxStatusListCapacity: number,
    private readonly clock: Clock,
    private readonly initializers: TenantInitializer[] = [],
    private readonly cleanups: TenantCleanup[] = [],
  ) {}

  private checkStatusListCapacity(config: StatusListConfig | null | undefined, field: string) {
    const capacity = config?.capacity;
    if (capacity !== null && capacity !== undefined && capacity > this.maxStatusListCapacity) {
      throw invalidFields([{ field, message: `must be at most ${this.maxStatusListCapacity} (STATUS_MAX_CAPACITY)` }]);
    }
  }

  private async withClients(rows: TenantRow[], db: Executor = this.db): Promise<Tenant[]> {
    const byTenant = await this.clients.listOfTenants(
      rows.map((r) => r.id),
      db,
    );
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      description: row.description,
      status: row.status as TenantStatus,
      sessionConfig: parseJson<SessionConfig>(row.session_config),
      statusListConfig: parseJson<StatusListConfig>(row.status_list_config),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      clients: byTenant.get(row.id) ?? [],
    }));
  }

  exists(db: Executor, id: string): Promise<boolean> {
    return tenantExists(db, id);
  }

  /** Whether the tenant exists and has finished initialising. */
  async isActive(id: string, db: Executor = this.db): Promise<boolean> {
    return (await store.findTenant(db, id))?.status === 'active';
  }

  async list(): Promise<Tenant[]> {
    return this.withClients(await store.listTenants(this.db));
  }

  async get(id: string, db: Executor = this.db): Promise<Tenant> {
    const row = await store.findTenant(db, id);
    if (!row) throw notFound('tenant', id);
    const [tenant] = await this.withClients([row], db);
    return tenant as Tenant;
  }

  /** The tenant without its clients: what other features show of it. */
  async summary(id: string): Promise<Pick<Tenant, 'id' | 'name' | 'description' | 'status'>> {
    const row = await store.findTenant(this.db, id);
    if (!row) throw notFound('tenant', id);
    return { id: row.id, name: row.name, description: row.description, status: row.status as TenantStatus };
  }

  /** The tenant's session storage overrides; null (or an absent key) means the global default. */
  async sessionConfig(id: string): Promise<SessionConfig | null> {
    const row = await store.findTenant(this.db, id);
    if (!row) throw notFound('tenant', id);
    return parseJson<SessionConfig>(row.session_config);
  }

  /** Every tenant with its session storage overrides (for the retention job). */
  async sessionConfigs(): Promise<{ tenantId: string; sessionConfig: SessionConfig | null }[]> {
    const rows = await store.listSessionConfigs(this.db);
    return rows.map((row) => ({ tenantId: row.id, sessionConfig: parseJson<SessionConfig>(row.session_config) }));
  }

  /**
   * Changes the session storage overrides like PATCH of a tenant does: a key with a value sets it, a
   * key with null resets it, an absent key stays; `null` for the whole config resets everything.
   */
  async updateSessionConfig(ctx: RequestContext, id: string, change: SessionConfig | null): Promise<SessionConfig | null> {
    return this.db.transaction().execute(async (trx) => {
      const row = await store.findTenant(trx, id);
      if (!row) throw notFound('tenant', id);
      const before = parseJson<SessionConfig>(row.session_config);
      const after = mergeConfig(before, change);
      await store.updateTenant(trx, id, { session_config: jsonOrNull(after), updated_at: this.clock.now().toISOString() });
      const snapshot = (config: SessionConfig | null) => ({
        ttlSeconds: config?.ttlSeconds ?? null,
        cleanupMode: config?.cleanupMode ?? null,
      });
      await this.audit.record(
        ctx,
        { tenantId: id, actionType: 'session_config.updated', before: snapshot(before), after: snapshot(after) },
        trx,
      );
      return after;
    });
  }

  /** The tenant's status list overrides; null (or an absent key) means the global default. */
  async statusListConfig(id: string): Promise<StatusListConfig | null> {
    const row = await store.findTenant(this.db, id);
    if (!row) throw notFound('tenant', id);
    return parseJson<StatusListConfig>(row.status_list_config);
  }

  /** Changes the status list overrides with the same semantics as updateSessionConfig. */
  async updateStatusListConfig(ctx: RequestContext, id: string, change: StatusListConfig | null): Promise<StatusListConfig | null> {
    this.checkStatusListCapacity(change, 'capacity');
    return this.db.transaction().execute(async (trx) => {
      const row = await store.findTenant(trx, id);
      if (!row) throw notFound('tenant', id);
      const before = parseJson<StatusListConfig>(row.status_list_config);
      const after = mergeConfig(before, change);
      await store.updateTenant(trx, id, { status_list_config: jsonOrNull(after), updated_at: this.clock.now().toISOString() });
      await this.audit.record(
        ctx,
        { tenantId: id, actionType: 'status_list_config.updated', before: { ...before }, after: { ...after } },
        trx,
      );
      return after;
    });
  }

  async create(ctx: RequestContext, input: TenantInput, db: Executor = this.db) {
    this.checkStatusListCapacity(input.statusListConfig, 'statusListConfig.capacity');
    return inTransaction(db, async (trx) => {
      const now = this.clock.now().toISOString();
      try {
        await store.insertTenant(trx, {
          id: input.id,
          name: input.name,
          description: input.description ?? null,
          status: 'initializing',
          session_config: jsonOrNull(overrides(input.sessionConfig)),
          status_list_config: jsonOrNull(overrides(input.statusListConfig)),
          admin_client_id: input.roles?.length ? adminClientId(input.id) : null,
          created_at: now,
          updated_at: now,
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`tenant '${input.id}' already exists`);
        throw err;
      }
      const client = input.roles?.length
        ? await this.clients.create(
            ctx,
            { clientId: adminClientId(input.id), roles: input.roles, tenantId: input.id, description: `administrator of ${input.id}` },
            trx,
          )
        : undefined;
      for (const initialize of this.initializers) await initialize(trx, input.id, ctx);
      await store.updateTenant(trx, input.id, { status: 'active' });
      const tenant = await this.get(input.id, trx);
      await this.audit.record(ctx, { tenantId: null, actionType: 'tenant.created', after: withoutClients(tenant) }, trx);
      return { ...tenant, ...(client && { client: { clientId: client.clientId, secret: client.secret, roles: client.roles } }) };
    });
  }

  async update(ctx: RequestContext, id: string, input: TenantUpdate, db: Executor = this.db) {
    this.checkStatusListCapacity(input.statusListConfig, 'statusListConfig.capacity');
    return inTransaction(db, async (trx) => {
      const row = await store.findTenant(trx, id);
      if (!row) throw notFound('tenant', id);
      const before = await this.get(id, trx);
      await store.updateTenant(trx, id, {
        ...(input.name !== undefined && { name: input.name }),
        ...(input.description !== undefined && { description: input.description }),
        session_config: jsonOrNull(mergeConfig(before.sessionConfig, input.sessionConfig)),
        status_list_config: jsonOrNull(mergeConfig(before.statusListConfig, input.statusListConfig)),
        updated_at: this.clock.now().toISOString(),
      });
      const client = input.roles ? await this.applyAdminRoles(ctx, row, input.roles, trx) : undefined;
      const after = await this.get(id, trx);
      await this.audit.record(
        ctx,
        { tenantId: null, actionType: 'tenant.updated', before: withoutClients(before), after: withoutClients(after) },
        trx,
      );
      return { ...after, ...(client && { client }) };
    });
  }

  /** PATCH roles sets the roles of the tenant's admin client, creating it (secret shown once) if it is gone. */
  private async applyAdminRoles(ctx: RequestContext, row: TenantRow, roles: Role[], trx: Executor) {
    const clientId = row.admin_client_id ?? adminClientId(row.id);
    const existing = (await this.clients.listOfTenants([row.id], trx)).get(row.id)?.find((c) => c.clientId === clientId);
    if (existing) {
      await this.clients.update(ctx, clientId, { roles }, trx);
      return undefined;
    }
    const created = await this.clients.create(ctx, { clientId, roles, tenantId: row.id, description: `administrator of ${row.id}` }, trx);
    await store.updateTenant(trx, row.id, { admin_client_id: clientId });
    return { clientId, secret: created.secret, roles };
  }

  async remove(ctx: RequestContext, id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const before = await this.get(id, trx);
      // Before the rows go: a failure at the provider keeps the tenant, to be deleted again.
      await this.clients.removeTenantClientsAtProvider(id, trx);
      for (const cleanup of this.cleanups) await cleanup(trx, id);
      await store.deleteTenant(trx, id);
      this.clients.forgetPrincipals();
      await this.audit.record(ctx, { tenantId: null, actionType: 'tenant.deleted', before: withoutClients(before) }, trx);
    });
  }
}

const jsonOrNull = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
const withoutClients = ({ clients: _clients, ...tenant }: Tenant) => tenant;
