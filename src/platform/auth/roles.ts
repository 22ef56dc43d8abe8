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

/**
 * The roles in `roles` that `caller` does not hold. None for a client without a tenant: it manages
 * the service, tenants and their clients included. A tenant's caller grants, and acts on holders
 * of, only roles it holds itself, so that clients:manage or users:manage alone cannot reach the
 * tenant's other roles.
 */
export function rolesBeyond(caller: { tenantId: string | null; roles: readonly Role[] }, roles: readonly Role[]): Role[] {
  return caller.tenantId ? roles.filter((role) => !caller.roles.includes(role)) : [];
}
