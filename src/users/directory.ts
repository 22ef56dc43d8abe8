// Where a tenant's users are kept: in the service's database (integrated mode, local-directory.ts)
// or at the identity provider (external mode, through its admin adapter). The service's rules and
// audit are the same for both; `db` is the transaction the audit entry is written in, which a
// directory in the database joins and one at the provider cannot.
import type { NewProviderUser, ProviderUser, ProviderUserChanges, UserAdmin } from '../identity-provider/admin.js';
import type { Executor } from '../platform/db/values.js';

// The provider's users are the API's users: one shape for both directories.
export type ManagedUser = ProviderUser;
export type NewUser = NewProviderUser;
export type UserChanges = ProviderUserChanges;

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
