// Management API clients: who may call the API, in which tenant, with which roles.

import type { Selectable } from 'kysely';
import type { AuditService } from '../audit/service.js';
import type { ClientAdmin, ProviderClient } from '../identity-provider/admin.js';
import type { CurrentClient, Principal, RequestContext } from '../platform/auth/principal.js';
import { type Role, rolesBeyond, SERVICE_ROLES } from '../platform/auth/roles.js';
import type { TokenClaims } from '../platform/auth/tokens.js';
import type { Clock } from '../platform/clock.js';
import { generateSecret, hashSecret, SecretVerifier } from '../platform/crypto/secrets.js';
import type { ClientsTable } from '../platform/db/schema.js';
import { type Executor, inTransaction, isUniqueViolation, parseJson } from '../platform/db/values.js';
import { badRequest, conflict, type FieldError, forbidden, notFound } from '../platform/http/problem.js';
import { StartUpError } from '../platform/lifecycle/start-up-errors.js';
import * as store from './store.js';

export interface Client {
  clientId: string;
  tenantId: string | null;
  description: string | null;
  roles: Role[];
  allowedPresentationConfigs: string[] | null;
  allowedIssuanceConfigs: string[] | null;
  createdAt: string;
  updatedAt: string;
}

export interface ClientInput {
  clientId: string;
  roles: Role[];
  secret?: string;
  description?: string | null;
  allowedPresentationConfigs?: string[] | null;
  allowedIssuanceConfigs?: string[] | null;
  /** Only for callers without a tenant: the tenant the new client belongs to. */
  tenantId?: string | null;
}

export type ClientUpdate = Omit<ClientInput, 'clientId' | 'secret' | 'tenantId'>;

function toClient(row: Selectable<ClientsTable>): Client {
  return {
    clientId: row.id,
    tenantId: row.tenant_id,
    description: row.description,
    roles: JSON.parse(row.roles) as Role[],
    allowedPresentationConfigs: parseJson<string[]>(row.allowed_presentation_configs),
    allowedIssuanceConfigs: parseJson<string[]>(row.allowed_issuance_configs),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** An allowed list as it takes effect: empty means all, as null does. */
const effectiveList = (list: string[] | null | undefined) => (list?.length ? list : null);
const listOrNull = (list: string[] | null | undefined) => (list?.length ? JSON.stringify(list) : null);

/** The rule that ties roles to tenancy: tenants:manage only without a tenant, tenant roles only within one. */
function checkRolesFitTenancy(roles: Role[], tenantId: string | null) {
  if (tenantId && roles.includes('tenants:manage')) {
    throw badRequest('roles: tenants:manage belongs to clients without a tenant', [
      { field: 'body.roles', message: 'tenants:manage cannot be given to a client of a tenant' },
    ]);
  }
  if (!tenantId) {
    const misplaced = roles.filter((r) => !SERVICE_ROLES.includes(r));
    if (!roles.includes('tenants:manage') || misplaced.length) {
      throw badRequest('roles: a client without a tenant manages the service', [
        { field: 'body.roles', message: `a client without tenantId must hold tenants:manage and may add only ${SERVICE_ROLES.join(', ')}` },
      ]);
    }
  }
}

/** What a client can do: its roles, narrowed by its allowed configuration lists (null: all). */
type Powers = Pick<Client, 'roles' | 'allowedIssuanceConfigs' | 'allowedPresentationConfigs'>;

/**
 * What `powers` has beyond the caller: roles the caller lacks, and configurations outside the
 * caller's allowed lists (a restricted caller cannot make or unlock an unrestricted client). Nothing
 * for a client without a tenant, which manages the service.
 */
function beyondCaller(caller: Principal, powers: Powers): FieldError[] {
  const missing = rolesBeyond(caller, powers.roles);
  const excess = missing.length ? [{ field: 'roles', message: `the caller lacks ${missing.join(', ')}` }] : [];
  if (!caller.tenantId) return excess;
  for (const list of ['allowedIssuanceConfigs', 'allowedPresentationConfigs'] as const) {
    const own = caller[list];
    if (!own?.length) continue;
    const outside = powers[list]?.length ? (powers[list] ?? []).filter((id) => !own.includes(id)) : undefined;
    if (!outside) excess.push({ field: list, message: `unrestricted, but the caller may use only ${own.join(', ')}` });
    else if (outside.length) excess.push({ field: list, message: `outside the caller's ${list}: ${outside.join(', ')}` });
  }
  return excess;
}

const described = (excess: FieldError[]) => excess.map((e) => `${e.field}: ${e.message}`).join('; ');

/** A tenant's client grants only what it holds itself, so clients:manage alone cannot mint an issuer or a user admin. */
function checkCanGrant(ctx: RequestContext, powers: Powers) {
  const excess = beyondCaller(ctx.principal, powers);
  if (excess.length) {
    throw forbidden(
      `a client can grant only what it holds itself; ${described(excess)}`,
      excess.map((e) => ({ field: `body.${e.field}`, message: e.message })),
    );
  }
}

/**
 * ...and changes, rotates or deletes only clients that hold no more than itself: a new secret of a
 * stronger client would be its powers, and taking a stronger client's roles away is not its call.
 */
function checkCanActOn(ctx: RequestContext, target: Client, action: string) {
  const excess = beyondCaller(ctx.principal, target);
  if (excess.length) {
    throw forbidden(
      `client '${target.clientId}' holds more than the caller (${described(excess)}); a client can ${action} only clients that hold no more than itself`,
    );
  }
}

const PRINCIPAL_TTL_MS = 1_000;

/**
 * Where client secrets are kept: hashed here (integrated mode); at the identity provider, which the
 * service manages through its admin adapter; or at a provider it has no adapter for, where it can
 * make no client (external mode without an adapter).
 */
export type SecretKeeping = { at: 'service' } | { at: 'provider'; admin: ClientAdmin } | { at: 'unmanaged provider'; issuer: string };

/** What a record holds in place of a secret's hash when the secret is kept at the provider: matches no secret. */
const SECRET_AT_PROVIDER = 'kept-at-the-identity-provider';
const BOOTSTRAP_DESCRIPTION = 'bootstrap client (AUTH_CLIENT_ID)';

const atProvider = (client: Client): ProviderClient => ({
  clientId: client.clientId,
  tenantId: client.tenantId,
  roles: client.roles,
  description: client.description,
});

export class ClientService {
  private readonly verifier = new SecretVerifier();
  /** The client of AUTH_CLIENT_ID: re-created at every start, so deleting it through the API is refused. */
  private bootstrapClientId: string | undefined;
  private readonly tokenNoted = new Set<string>();
  private readonly principals = new Map<string, { current: CurrentClient | undefined; until: number }>();

  constructor(
    private readonly db: Executor,
    private readonly audit: AuditService,
    private readonly tenantExists: (db: Executor, tenantId: string) => Promise<boolean>,
    /** Stamps changes, and the time from which a replaced secret's tokens are refused. */
    private readonly clock: Clock,
    private readonly secrets: SecretKeeping = { at: 'service' },
  ) {}

  /** The provider's admin adapter, when the clients are kept there. */
  private get providerAdmin(): ClientAdmin | undefined {
    return this.secrets.at === 'provider' ? this.secrets.admin : undefined;
  }

  /**
   * The provider's admin adapter, or undefined in integrated mode, for what makes a secret; refused
   * at a provider without an adapter, where a secret made here could get no token.
   */
  private providerFor(what: string): ClientAdmin | undefined {
    if (this.secrets.at !== 'unmanaged provider') return this.providerAdmin;
    throw conflict(
      `${what}: in external mode clients and their secrets are kept at the identity provider ${this.secrets.issuer}, which this service has no admin adapter for; create the client there, with the tenant claim and its roles`,
    );
  }

  /** The secret's hash for a new record, or the marker of a secret kept at the provider. */
  private async secretHashFor(secret: string, provider: ClientAdmin | undefined): Promise<string> {
    return provider ? SECRET_AT_PROVIDER : hashSecret(secret);
  }

  /** A tenant caller sees its tenant; a service manager (no tenant) sees every client. */
  private scopeOf(ctx: RequestContext): store.ClientScope {
    return ctx.principal.tenantId;
  }

  /**
   * The caller behind a token, read on every management request: cached for PRINCIPAL_TTL_MS because
   * it is the hottest query of the API. Changes made on this instance clear the cache at once; a change
   * made on another instance is seen here within that time. A token of a generation the cache does not
   * hold is judged on the row itself: it may be newer than the cache (a secret replaced elsewhere).
   * Provider tokens carry no generation (undefined): any cached state will do.
   */
  async resolvePrincipal(clientId: string, tokenGeneration?: string): Promise<CurrentClient | undefined> {
    const cached = this.principals.get(clientId);
    const sameGeneration = tokenGeneration === undefined || cached?.current?.tokenGeneration === tokenGeneration;
    // An in-process cache's age: the system clock (see src/platform/ttl-cache.ts).
    if (cached && cached.until > Date.now() && sameGeneration) return cached.current;
    const row = await store.findClient(this.db, null, clientId);
    const current = row && {
      principal: {
        clientId: row.id,
        tenantId: row.tenant_id,
        roles: JSON.parse(row.roles) as Role[],
        allowedIssuanceConfigs: parseJson<string[]>(row.allowed_issuance_configs),
        allowedPresentationConfigs: parseJson<string[]>(row.allowed_presentation_configs),
      },
      tokenGeneration: row.token_generation,
      tokensValidFrom: row.tokens_valid_from,
    };
    if (this.principals.size >= 10_000) this.principals.clear();
    this.principals.set(clientId, { current, until: Date.now() + PRINCIPAL_TTL_MS });
    return current;
  }

  /** Forget cached principals: after any change to clients, or to tenants (whose deletion removes clients). */
  forgetPrincipals() {
    this.principals.clear();
  }

  /**
   * Checks client credentials and answers what a token of the client says; undefined when the client
   * is unknown or the secret is wrong. The generation is read with the secret's hash, so a token
   * issued against a secret replaced meanwhile is born dead.
   */
  async authenticate(clientId: string, secret: string): Promise<TokenClaims | undefined> {
    const row = await store.findClient(this.db, null, clientId);
    if (!row) return undefined;
    if (!(await this.verifier.verify(row.id, secret, row.secret_hash))) return undefined;
    return { clientId: row.id, tenantId: row.tenant_id, roles: JSON.parse(row.roles) as Role[], tokenGeneration: row.token_generation };
  }

  list(ctx: RequestContext): Promise<Client[]> {
    return store.listClients(this.db, this.scopeOf(ctx)).then((rows) => rows.map(toClient));
  }

  async listOfTenants(tenantIds: string[], db: Executor = this.db): Promise<Map<string, Client[]>> {
    const byTenant = new Map<string, Client[]>(tenantIds.map((id) => [id, []]));
    for (const row of await store.listClientsOfTenants(db, tenantIds)) byTenant.get(row.tenant_id as string)?.push(toClient(row));
    return byTenant;
  }

  async get(ctx: RequestContext, id: string, db: Executor = this.db): Promise<Client> {
    const row = await store.findClient(db, this.scopeOf(ctx), id);
    if (!row) throw notFound('client', id);
    return toClient(row);
  }

  async create(ctx: RequestContext, input: ClientInput, db: Executor = this.db): Promise<Client & { secret: string }> {
    const tenantId = this.tenantForNewClient(ctx, input);
    checkRolesFitTenancy(input.roles, tenantId);
    checkCanGrant(ctx, {
      roles: input.roles,
      allowedIssuanceConfigs: effectiveList(input.allowedIssuanceConfigs),
      allowedPresentationConfigs: effectiveList(input.allowedPresentationConfigs),
    });
    const provider = this.providerFor('body.clientId');
    const secret = input.secret ?? generateSecret();
    const secretHash = await this.secretHashFor(secret, provider); // slow by design: outside the transaction
    return inTransaction(db, async (trx) => {
      if (tenantId && !(await this.tenantExists(trx, tenantId))) {
        throw badRequest(`tenantId: tenant '${tenantId}' does not exist`, [{ field: 'body.tenantId', message: 'no such tenant' }]);
      }
      const now = this.clock.now().toISOString();
      const values = {
        id: input.clientId,
        tenant_id: tenantId,
        secret_hash: secretHash,
        description: input.description ?? null,
        roles: JSON.stringify(input.roles),
        allowed_presentation_configs: listOrNull(input.allowedPresentationConfigs),
        allowed_issuance_configs: listOrNull(input.allowedIssuanceConfigs),
        created_at: now,
        updated_at: now,
      };
      let row: Selectable<ClientsTable>;
      try {
        row = await store.insertClient(trx, values, provider ? now : null);
        this.forgetPrincipals();
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`client '${input.clientId}' already exists`);
        throw err;
      }
      const client = toClient(row);
      await this.audit.record(ctx, { tenantId, actionType: 'client.created', after: { ...client } }, trx);
      // Last, so that a refusal by the provider takes the record back with it.
      await provider?.createClient(atProvider(client), secret);
      return { ...client, secret };
    });
  }

  private tenantForNewClient(ctx: RequestContext, input: ClientInput): string | null {
    const own = ctx.principal.tenantId;
    if (own) {
      if (input.tenantId !== undefined && input.tenantId !== own) {
        throw forbidden('tenantId: a client of a tenant creates clients only in its own tenant');
      }
      return own;
    }
    return input.tenantId ?? null;
  }

  async update(ctx: RequestContext, id: string, input: ClientUpdate, db: Executor = this.db): Promise<Client> {
    return inTransaction(db, async (trx) => {
      const before = await this.get(ctx, id, trx);
      checkCanActOn(ctx, before, 'change');
      checkRolesFitTenancy(input.roles, before.tenantId);
      const keptOr = (given: string[] | null | undefined, kept: string[] | null) => (given === undefined ? kept : effectiveList(given));
      checkCanGrant(ctx, {
        roles: input.roles,
        allowedIssuanceConfigs: keptOr(input.allowedIssuanceConfigs, before.allowedIssuanceConfigs),
        allowedPresentationConfigs: keptOr(input.allowedPresentationConfigs, before.allowedPresentationConfigs),
      });
      const changes = {
        roles: JSON.stringify(input.roles),
        ...(input.description !== undefined && { description: input.description }),
        ...(input.allowedPresentationConfigs !== undefined && {
          allowed_presentation_configs: listOrNull(input.allowedPresentationConfigs),
        }),
        ...(input.allowedIssuanceConfigs !== undefined && { allowed_issuance_configs: listOrNull(input.allowedIssuanceConfigs) }),
        updated_at: this.clock.now().toISOString(),
      };
      await store.updateClient(trx, this.scopeOf(ctx), id, changes);
      this.forgetPrincipals();
      const after = await this.get(ctx, id, trx);
      await this.audit.record(
        ctx,
        { tenantId: after.tenantId, actionType: 'client.updated', before: { ...before }, after: { ...after } },
        trx,
      );
      await this.providerAdmin?.updateClient(atProvider(after));
      return after;
    });
  }

  async remove(ctx: RequestContext, id: string): Promise<void> {
    if (id === this.bootstrapClientId)
      throw conflict('the bootstrap client is defined by AUTH_CLIENT_ID and AUTH_CLIENT_SECRET; change those instead');
    await inTransaction(this.db, async (trx) => {
      const before = await this.get(ctx, id, trx);
      checkCanActOn(ctx, before, 'delete');
      await store.deleteClient(trx, this.scopeOf(ctx), id);
      this.forgetPrincipals();
      await this.audit.record(ctx, { tenantId: before.tenantId, actionType: 'client.deleted', before: { ...before } }, trx);
      await this.providerAdmin?.deleteClient(id);
    });
  }

  /** Deletes the tenant's clients at the provider, for the tenant's deletion (which removes their records). */
  async removeTenantClientsAtProvider(tenantId: string, db: Executor): Promise<void> {
    const admin = this.providerAdmin;
    if (!admin) return;
    for (const row of await store.listClientsOfTenants(db, [tenantId])) await admin.deleteClient(row.id);
  }

  /** A new secret, returned once; the old secret and every token issued under it stop working. */
  async rotateSecret(ctx: RequestContext, id: string): Promise<{ secret: string }> {
    const rotatable = async (db: Executor) => {
      const client = await this.get(ctx, id, db);
      checkCanActOn(ctx, client, 'rotate the secret of');
      return client;
    };
    const provider = this.providerFor('rotate-secret');
    if (provider) return this.rotateAtProvider(ctx, id, provider, rotatable);
    await rotatable(this.db); // 404 or 403 before the slow hash
    const secret = generateSecret();
    const secretHash = await hashSecret(secret);
    await inTransaction(this.db, async (trx) => {
      const client = await rotatable(trx);
      await store.updateClient(trx, this.scopeOf(ctx), id, { secret_hash: secretHash, updated_at: this.clock.now().toISOString() });
      this.forgetPrincipals();
      await this.audit.record(ctx, { tenantId: client.tenantId, actionType: 'client.secret_rotated', after: { clientId: id } }, trx);
    });
    return { secret };
  }

  /** The provider makes the new secret; the record only notes the change. */
  private rotateAtProvider(
    ctx: RequestContext,
    id: string,
    provider: ClientAdmin,
    rotatable: (db: Executor) => Promise<Client>,
  ): Promise<{ secret: string }> {
    return inTransaction(this.db, async (trx) => {
      const client = await rotatable(trx);
      const now = this.clock.now().toISOString();
      await store.updateClient(trx, this.scopeOf(ctx), id, { tokens_valid_from: now, updated_at: now });
      this.forgetPrincipals();
      await this.audit.record(ctx, { tenantId: client.tenantId, actionType: 'client.secret_rotated', after: { clientId: id } }, trx);
      return { secret: await provider.rotateSecret(id) };
    });
  }

  /**
   * Makes `secret` the client's secret unless it already is, for secrets kept outside the service (a
   * configuration file or the environment); true when it changed.
   */
  async ensureSecret(ctx: RequestContext, id: string, secret: string, db: Executor = this.db): Promise<boolean> {
    const row = await store.findClient(db, this.scopeOf(ctx), id);
    if (!row) throw notFound('client', id);
    const provider = this.providerFor('secret');
    if (provider) return this.ensureAtProvider(ctx, toClient(row), secret, provider, db);
    if (await this.verifier.verify(row.id, secret, row.secret_hash)) return false;
    const secretHash = await hashSecret(secret);
    await inTransaction(db, async (trx) => {
      await store.updateClient(trx, this.scopeOf(ctx), id, { secret_hash: secretHash, updated_at: this.clock.now().toISOString() });
      this.forgetPrincipals();
      await this.audit.record(ctx, { tenantId: row.tenant_id, actionType: 'client.secret_replaced', after: { clientId: id } }, trx);
    });
    return true;
  }

  private async ensureAtProvider(ctx: RequestContext, client: Client, secret: string, provider: ClientAdmin, db: Executor) {
    const replaced = await this.ensureSecretAtProvider(atProvider(client), secret, provider, db);
    if (replaced) {
      await this.audit.record(
        ctx,
        { tenantId: client.tenantId, actionType: 'client.secret_replaced', after: { clientId: client.clientId } },
        db,
      );
    }
    return replaced;
  }

  /** True when the provider has a new secret for the client: the tokens issued under the old one end. */
  private async ensureSecretAtProvider(client: ProviderClient, secret: string, provider: ClientAdmin, db: Executor): Promise<boolean> {
    const since = this.clock.now().toISOString();
    const outcome = await provider.ensureClient(client, secret);
    if (outcome !== 'created' && outcome !== 'secret replaced') return false;
    await store.updateClient(db, null, client.clientId, { tokens_valid_from: since });
    this.forgetPrincipals();
    return true;
  }

  /**
   * Called when a token is issued: the first one of a client is noted (the first-run announcement
   * waits for the bootstrap client's). Remembered per instance so that later tokens cost no write.
   */
  async noteTokenIssued(clientId: string): Promise<void> {
    if (this.tokenNoted.has(clientId)) return;
    await store.recordFirstToken(this.db, clientId, this.clock.now().toISOString());
    if (this.tokenNoted.size >= 10_000) this.tokenNoted.clear();
    this.tokenNoted.add(clientId);
  }

  /** Whether the client has ever obtained an access token. */
  async hasObtainedToken(clientId: string): Promise<boolean> {
    const row = await store.findClient(this.db, null, clientId);
    return Boolean(row?.first_token_at);
  }

  /**
   * Creates the bootstrap client, or brings its secret and roles in line with the configuration; in
   * external mode at the provider too (its record here has no secret).
   */
  async ensureBootstrapClient(clientId: string, secret: string): Promise<void> {
    this.bootstrapClientId = clientId;
    const provider = this.providerFor('AUTH_CLIENT_ID');
    const roles: Role[] = ['tenants:manage', 'clients:manage'];
    const existing =
      (await store.findClient(this.db, null, clientId)) ?? (await this.insertBootstrapRecord(clientId, secret, roles, provider));
    if (existing && existing.tenant_id !== null) {
      throw new StartUpError(
        'config',
        `AUTH_CLIENT_ID: client '${clientId}' exists and belongs to tenant '${existing.tenant_id}'; name a client id of its own`,
      );
    }
    if (existing) await this.alignBootstrapRecord(existing, secret, roles, provider);
    if (provider)
      await this.ensureSecretAtProvider({ clientId, tenantId: null, roles, description: BOOTSTRAP_DESCRIPTION }, secret, provider, this.db);
  }

  /**
   * Makes the bootstrap client; undefined when it is made now. Instances starting at once on a new
   * database both try: the primary key lets one insert, and the other gets the row it made (to align
   * with its own settings, as at any later start).
   */
  private async insertBootstrapRecord(clientId: string, secret: string, roles: Role[], provider?: ClientAdmin) {
    const now = this.clock.now().toISOString();
    try {
      await store.insertClient(this.db, {
        id: clientId,
        tenant_id: null,
        secret_hash: await this.secretHashFor(secret, provider),
        description: BOOTSTRAP_DESCRIPTION,
        roles: JSON.stringify(roles),
        allowed_presentation_configs: null,
        allowed_issuance_configs: null,
        created_at: now,
        updated_at: now,
      });
      return undefined;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      return store.findClient(this.db, null, clientId);
    }
  }

  /**
   * A changed secret also ends the tokens issued under the old one; a change of roles alone does not.
   * With the secret at the provider, a hash left from integrated mode is dropped.
   */
  private async alignBootstrapRecord(existing: Selectable<ClientsTable>, secret: string, roles: Role[], provider?: ClientAdmin) {
    const secretChanged = provider
      ? existing.secret_hash !== SECRET_AT_PROVIDER
      : !(await this.verifier.verify(existing.id, secret, existing.secret_hash));
    if (secretChanged || existing.roles !== JSON.stringify(roles)) {
      const secretHash = secretChanged ? { secret_hash: await this.secretHashFor(secret, provider) } : {};
      await store.updateClient(this.db, null, existing.id, {
        ...secretHash,
        roles: JSON.stringify(roles),
        updated_at: this.clock.now().toISOString(),
      });
    }
  }
}
