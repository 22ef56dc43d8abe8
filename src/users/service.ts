// Human users of a tenant: the rules of who may give and change what, and the audit trail. Where
// the users are kept (the database, or the identity provider in external mode) is the directory's.
import type { AuditService } from '../audit/service.js';
import type { RequestContext } from '../platform/auth/principal.js';
import { type Role, rolesBeyond } from '../platform/auth/roles.js';
import { generateSecret } from '../platform/crypto/secrets.js';
import type { Executor } from '../platform/db/values.js';
import { badRequest, forbidden, notFound } from '../platform/http/problem.js';
import type { ManagedUser, UserDirectory } from './directory.js';

export type { ManagedUser } from './directory.js';

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
    private readonly directory: UserDirectory,
    private readonly audit: AuditService,
  ) {}

  private tenantOf(ctx: RequestContext): string {
    return ctx.principal.tenantId as string;
  }

  list(ctx: RequestContext): Promise<ManagedUser[]> {
    return this.directory.list(this.tenantOf(ctx));
  }

  async get(ctx: RequestContext, id: string, db: Executor = this.db): Promise<ManagedUser> {
    const user = await this.directory.find(this.tenantOf(ctx), id, db);
    if (!user) throw notFound('user', id);
    return user;
  }

  async create(ctx: RequestContext, input: UserInput): Promise<ManagedUser & { temporaryPassword: string }> {
    checkRoles(input.roles);
    checkCanGrant(ctx, input.roles);
    const temporaryPassword = input.temporaryPassword ?? generateSecret().slice(0, 20);
    // The user and its audit entry are stored together or not at all.
    const user = await this.db.transaction().execute(async (trx) => {
      const created = await this.directory.create(
        this.tenantOf(ctx),
        { username: input.username, email: input.email ?? null, enabled: input.enabled ?? true, roles: input.roles, temporaryPassword },
        trx,
      );
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
      await this.directory.update(this.tenantOf(ctx), id, input, trx);
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
      await this.directory.remove(this.tenantOf(ctx), id, trx);
      await this.audit.record(ctx, { tenantId: before.tenantId, actionType: 'user.deleted', before: { ...before } }, trx);
    });
  }

  /** Removes the tenant's users from a directory the tenant's deletion does not reach (the provider's). */
  async removeAllOfTenant(tenantId: string, db: Executor): Promise<void> {
    for (const user of await this.directory.list(tenantId)) await this.directory.remove(tenantId, user.id, db);
  }
}
