// Users kept in the service's database (integrated mode). E-mail addresses are personal data and
// are stored encrypted; passwords only as scrypt hashes.

import type { Selectable } from 'kysely';
import type { Role } from '../platform/auth/roles.js';
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/sealed.js';
import { hashSecret } from '../platform/crypto/secrets.js';
import type { UsersTable } from '../platform/db/schema.js';
import { tenantDb } from '../platform/db/tenant-db.js';
import { type Executor, fromBool, isUniqueViolation, toBool } from '../platform/db/values.js';
import { conflict } from '../platform/http/problem.js';
import type { ManagedUser, NewUser, UserChanges, UserDirectory } from './directory.js';
import * as store from './store.js';

export class LocalUserDirectory implements UserDirectory {
  constructor(
    private readonly db: Executor,
    private readonly sealer: Sealer,
    private readonly clock: Clock,
  ) {}

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

  async list(tenantId: string): Promise<ManagedUser[]> {
    return (await store.listUsers(tenantDb(this.db, tenantId))).map((row) => this.toUser(row));
  }

  async find(tenantId: string, id: string, db: Executor): Promise<ManagedUser | undefined> {
    const row = await store.findUser(tenantDb(db, tenantId), id);
    return row && this.toUser(row);
  }

  async create(tenantId: string, user: NewUser, db: Executor): Promise<ManagedUser> {
    const passwordHash = await hashSecret(user.temporaryPassword);
    const now = this.clock.now().toISOString();
    const id = crypto.randomUUID();
    await unlessTaken(user.username, () =>
      store.insertUser(tenantDb(db, tenantId), {
        id,
        username: user.username,
        email: user.email ? this.sealer.seal(user.email) : null,
        enabled: toBool(user.enabled),
        roles: JSON.stringify(user.roles),
        password_hash: passwordHash,
        created_at: now,
        updated_at: now,
      }),
    );
    return (await this.find(tenantId, id, db)) as ManagedUser;
  }

  async update(tenantId: string, id: string, changes: UserChanges, db: Executor): Promise<void> {
    await unlessTaken(changes.username, () =>
      store.updateUser(tenantDb(db, tenantId), id, {
        ...(changes.username !== undefined && { username: changes.username }),
        ...(changes.email !== undefined && { email: changes.email ? this.sealer.seal(changes.email) : null }),
        ...(changes.enabled !== undefined && { enabled: toBool(changes.enabled) }),
        ...(changes.roles !== undefined && { roles: JSON.stringify(changes.roles) }),
        updated_at: this.clock.now().toISOString(),
      }),
    );
  }

  async remove(tenantId: string, id: string, db: Executor): Promise<void> {
    await store.deleteUser(tenantDb(db, tenantId), id);
  }
}

/** Usernames are unique per tenant: the database's unique index says when one is taken. */
async function unlessTaken(username: string | undefined, write: () => Promise<void>) {
  try {
    await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`user '${username}' already exists in this tenant`);
    throw err;
  }
}
