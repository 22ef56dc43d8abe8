// A tenant's own rate limits (issuer settings, rateLimits): only lower than the operator's, and read
// through a short cache, since the limits are looked up on every wallet request.
import type { FieldError } from '../../platform/http/problem.js';
import { type RateLimitClass, rateLimitKey, TENANT_RATE_LIMIT_CLASSES } from '../../platform/rate-limits/classes.js';
import type { ClassLimits, TenantLimits } from '../../platform/rate-limits/index.js';
import { TtlCache } from '../../platform/ttl-cache.js';
import { DEFAULT_SETTINGS, type IssuerSettings, type IssuerSettingsService, type SettingsCheck } from './service.js';

/** A change on another instance is seen within this bound; one on this instance at once. */
const CACHE_TTL_MS = 30_000;

/** Refuses (400 naming the field) a tenant limit above the operator's ceiling. */
export function rateLimitCeilings(operator: ReadonlyMap<RateLimitClass, ClassLimits>): SettingsCheck {
  return async (_tenantId, settings) => {
    const errors: FieldError[] = [];
    for (const [name, own] of ownLimits(settings)) {
      const ceiling = operator.get(name);
      if (!ceiling) continue;
      const checks = [
        ['perAddress', own.perAddress, ceiling.perAddress.requests, rateLimitKey(name)],
        ['perTenant', own.perTenant, ceiling.perTenant?.requests, `${rateLimitKey(name)}_PER_TENANT`],
      ] as const;
      for (const [field, value, most, key] of checks) {
        if (value !== undefined && most !== undefined && value > most) {
          errors.push({ field: `body.rateLimits.${name}.${field}`, message: `must be at most ${most} (the operator's ${key})` });
        }
      }
    }
    return errors;
  };
}

function ownLimits(settings: IssuerSettings): Map<RateLimitClass, TenantLimits> {
  const own = new Map<RateLimitClass, TenantLimits>();
  const given = new Map(Object.entries(settings.rateLimits));
  for (const name of TENANT_RATE_LIMIT_CLASSES) {
    const limits = given.get(name);
    if (limits) own.set(name, limits);
  }
  return own;
}

/** Each tenant's own limits, cached; forgotten at once when its settings change on this instance. */
export function tenantRateLimits(settings: IssuerSettingsService) {
  const cache = new TtlCache<Map<RateLimitClass, TenantLimits>>(CACHE_TTL_MS);
  settings.onChange((tenantId) => cache.forget(tenantId));
  // A tenant whose settings cannot be read (an unknown one, the database away) has the operator's
  // limits; its endpoint answers for the rest.
  const load = (tenantId: string) => async () => ownLimits(await settings.get(tenantId).catch(() => DEFAULT_SETTINGS));
  return (tenantId: string) => cache.get(tenantId, load(tenantId));
}
