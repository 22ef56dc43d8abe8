// Where a tenant's users are kept: in the service's database (integrated mode, local-directory.ts)
// or at the identity provider (external mode, through its admin adapter). The service's rules and
// audit are the same for both; `db` is the transaction the audit entry is written in, which a
// directory in the database joins and one at the provider cannot.
import type { UserAdmin } from '../identity-provider/admin.js';
import type { Role } from '../platform/auth/roles.js';
import type { Executor } from '../platform/db/values.js';

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

export interface NewUser {
  username: string;
  email: string | null;
  enabled: boolean;
  roles: Role[];
  temporaryPassword: string;
}

export type UserChanges = Partial<Pick<ManagedUser, 'username' | 'email' | 'enabled' | 'roles'>>;

export interface UserDirectory {
  list(tenantId: string): Promise<ManagedUser[]>;
  find(tenantId: string, id: string, db: Executor): Promise<ManagedUser | undefined>;
  /** A username taken in the tenant is a 409. */
  create(tenantId: string, user: NewUser, db: Executor): Promise<ManagedUser>;
  update(tenantId: string, id: string, changes: UserChanges, db: Executor): Promise<void>;
  remove(tenantId: string, id: string, db: Executor): Promise<void>;
}

/** The provider's users, as a directory: its calls take part in no transaction. */
export function providerDirectory(admin: UserAdmin): UserDirectory {
  return {
    list: (tenantId) => admin.listUsers(tenantId),
    find: (tenantId, id) => admin.findUser(tenantId, id),
    create: (tenantId, user) => admin.createUser(tenantId, user),
    update: (tenantId, id, changes) => admin.updateUser(tenantId, id, changes),
    remove: (tenantId, id) => admin.deleteUser(tenantId, id),
  };
}
