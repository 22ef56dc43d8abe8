// Human users of a tenant, stored by the service in integrated mode. Their e-mail addresses are
// personal data and are stored encrypted; passwords only as scrypt hashes.
import type { Selectable } from 'kysely';
import type { AuditService } from '../audit/service.js';
import type { RequestContext } from '../platform/auth/principal.js';
import { type Role, rolesBeyond } from '../platform/auth/roles.js';
import type { Sealer } from '../platform/crypto/sealed.js';
import { generateSecret, hashSecret } from '../platform/crypto/secrets.js';
import type { UsersTable } from '../platform/db/schema.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import type { Executor } from '../platform/db/values.js';
import { fromBool, isUniqueViolation, nowIso, toBool } from '../platform/db/values.js';
import { badRequest, conflict, forbidden, notFound } from '../platform/http/problem.js';
import * as store from './store.js';

export interface ManagedUser {
  id: string;
  username: string;
  email: string | null;
  enabled: boolean;
  roles: Role[];
  tenantId: string;
  createdAt: string;
  updatedAt: string;
}

export interface UserInput {
  username: string;
  roles: Role[];
  email?: string | null;
  enabled?: boolean;
  temporaryPassword?: string;
}
export type UserUpdate = Partial<Omit<UserInput, 'temporaryPassword'>>;

function checkRoles(roles: Role[] | undefined) {
  if (roles?.includes('tenants:manage')) {
    throw badRequest('roles: tenants:manage cannot be given to a user of a tenant', [
      { field: 'body.roles', message: 'tenants:manage is for clients without a tenant' },
    ]);
  }
}

/** users:manage gives a user only roles the caller holds itself, or users:manage alone would mint any role of the tenant. */
function checkCanGrant(ctx: RequestContext, roles: Role[] | undefined) {
  const missing = rolesBeyond(ctx.principal, roles ?? []);
  if (missing.length) {
    const message = `the caller lacks ${missing.join(', ')}`;
    throw forbidden(`roles: a client can give a user only roles it holds itself; ${message}`, [{ field: 'body.roles', message }]);
  }
}

/** ...and changes or deletes only users who hold no role the caller lacks. */
function checkCanActOn(ctx: RequestContext, user: ManagedUser, action: string) {
  const missing = rolesBeyond(ctx.principal, user.roles);
  if (missing.length) {
    throw forbidden(
      `user '${user.username}' holds roles the caller lacks (${missing.join(', ')}); a client can ${action} only users whose roles it holds itself`,
    );
  }
}

export class UserService {
  constructor(
    private readonly db: Executor,
    private readonly sealer: Sealer,
    private readonly audit: AuditService,
  ) {}

  private scoped(ctx: RequestContext, db: Executor = this.db) {
    return tenantDb(db, ctx.principal.tenantId as string);
  }

  private toUser(row: Selectable<UsersTable>): ManagedUser {
    return {
      id: row.id,
      username: row.username,
      email: row.email === null ? null : this.sealer.open(row.email),
      enabled: fromBool(row.enabled),
      roles: JSON.parse(row.roles) as Role[],
      tenantId: row.tenant_id,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  async list(ctx: RequestContext): Promise<ManagedUser[]> {
    return (await store.listUsers(this.scoped(ctx))).map((row) => this.toUser(row));
  }

  async get(ctx: RequestContext, id: string, db: Executor = this.db): Promise<ManagedUser> {
    const row = await store.findUser(this.scoped(ctx, db), id);
    if (!row) throw notFound('user', id);
    return this.toUser(row);
  }

  async create(ctx: RequestContext, input: UserInput): Promise<ManagedUser & { temporaryPassword: string }> {
    checkRoles(input.roles);
    checkCanGrant(ctx, input.roles);
    const temporaryPassword = input.temporaryPassword ?? generateSecret().slice(0, 20);
    const passwordHash = await hashSecret(temporaryPassword);
    const now = nowIso();
    const id = crypto.randomUUID();
    // The user and its audit entry are stored together or not at all.
    const user = await this.db.transaction().execute(async (trx) => {
      try {
        await store.insertUser(this.scoped(ctx, trx), {
          id,
          username: input.username,
          email: input.email ? this.sealer.seal(input.email) : null,
          enabled: toBool(input.enabled ?? true),
          roles: JSON.stringify(input.roles),
          password_hash: passwordHash,
          created_at: now,
          updated_at: now,
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`user '${input.username}' already exists in this tenant`);
        throw err;
      }
      const created = await this.get(ctx, id, trx);
      await this.audit.record(ctx, { tenantId: created.tenantId, actionType: 'user.created', after: { ...created } }, trx);
      return created;
    });
    return { ...user, temporaryPassword };
  }

  async update(ctx: RequestContext, id: string, input: UserUpdate): Promise<ManagedUser> {
    checkRoles(input.roles);
    checkCanGrant(ctx, input.roles);
    return this.db.transaction().execute(async (trx) => {
      const before = await this.get(ctx, id, trx);
      checkCanActOn(ctx, before, 'change');
      try {
        await store.updateUser(this.scoped(ctx, trx), id, {
          ...(input.username !== undefined && { username: input.username }),
          ...(input.email !== undefined && { email: input.email ? this.sealer.seal(input.email) : null }),
          ...(input.enabled !== undefined && { enabled: toBool(input.enabled) }),
          ...(input.roles !== undefined && { roles: JSON.stringify(input.roles) }),
          updated_at: nowIso(),
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`user '${input.username}' already exists in this tenant`);
        throw err;
      }
      const after = await this.get(ctx, id, trx);
      await this.audit.record(
        ctx,
        { tenantId: after.tenantId, actionType: 'user.updated', before: { ...before }, after: { ...after } },
        trx,
      );
      return after;
    });
  }

  async remove(ctx: RequestContext, id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const before = await this.get(ctx, id, trx);
      checkCanActOn(ctx, before, 'delete');
      await store.deleteUser(this.scoped(ctx, trx), id);
      await this.audit.record(ctx, { tenantId: before.tenantId, actionType: 'user.deleted', before: { ...before } }, trx);
    });
  }
}
