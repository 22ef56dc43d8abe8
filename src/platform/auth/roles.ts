import { z } from 'zod';

export const ROLES = [
  'presentation:manage',
  'presentation:request',
  'issuance:manage',
  'issuance:offer',
  'clients:manage',
  'users:manage',
  'tenants:manage',
  'registrar:manage',
] as const;
export type Role = (typeof ROLES)[number];
export const RoleSchema = z.enum(ROLES);

/** Roles a client without a tenant may hold: it manages the service, not a tenant's resources. */
export const SERVICE_ROLES: readonly Role[] = ['tenants:manage', 'clients:manage'];
