// Tenancy: tenants, their clients and their users, and the audit log of what they do. Clients are
// built first (they only need to know that a tenant exists); the tenant service, which makes a
// tenant's admin client, then builds on them.

import { auditRoutes } from '../audit/routes.js';
import type { AuditService } from '../audit/service.js';
import { clientRoutes } from '../clients/routes.js';
import { ClientService, type SecretKeeping } from '../clients/service.js';
import type { Clock } from '../platform/clock.js';
import type { Executor } from '../platform/db/values.js';
import type { App } from '../platform/http/types.js';
import type { UserDirectory } from '../users/directory.js';
import { userRoutes } from '../users/routes.js';
import { UserService } from '../users/service.js';
import { tenantRoutes } from './routes.js';
import { type TenantCleanup, type TenantInitializer, TenantService, tenantExists } from './service.js';

export interface TenancyNeeds {
  db: Executor;
  audit: AuditService;
  /** Where client secrets are kept: hashed here, or at the identity provider. */
  secrets: SecretKeeping;
  users: UserDirectory;
  /** STATUS_MAX_CAPACITY. */
  maxStatusListCapacity: number;
  /** What every new tenant gets (its default key chains). */
  initializers: TenantInitializer[];
  /** What must go with a tenant beyond its rows (users kept at the provider). */
  cleanups: (users: UserService) => TenantCleanup[];
  clock: Clock;
}

export function createTenancy(needs: TenancyNeeds) {
  const { db, audit } = needs;
  const clients = new ClientService(db, audit, tenantExists, needs.clock, needs.secrets);
  const users = new UserService(db, needs.users, audit);
  const tenants = new TenantService(
    db,
    clients,
    audit,
    needs.maxStatusListCapacity,
    needs.clock,
    needs.initializers,
    needs.cleanups(users),
  );
  return {
    tenants,
    clients,
    users,
    routes(app: App) {
      tenantRoutes(app, tenants);
      clientRoutes(app, clients);
      userRoutes(app, users);
      auditRoutes(app, audit);
    },
  };
}
