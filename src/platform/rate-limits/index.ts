// The rate limits as configured: the operator's limits per class (RATE_LIMIT_<CLASS> and
// RATE_LIMIT_<CLASS>_PER_TENANT), counted where REDIS_URL says (the database otherwise).
import type { Config } from '../../config.js';
import type { Executor } from '../db/values.js';
import type { App } from '../http/types.js';
import { parseRate, RATE_LIMIT_CLASS_NAMES, RATE_LIMIT_CLASSES, type RateLimitClass, rateLimitKey } from './classes.js';
import { RateLimiter } from './limiter.js';
import { type ClassLimits, installRateLimits, type TenantLimits } from './routes.js';
import { DatabaseWindows, type SharedWindows } from './windows.js';

export type { ClassLimits, TenantLimits } from './routes.js';

type RateConfig = Pick<Config, 'RATE_LIMITS_ENABLED' | 'REDIS_URL' | 'REDIS_KEY_PREFIX'> & Partial<Record<string, unknown>>;

/** The operator's limits of every class, from the configuration (every key has a default). */
export function operatorLimits(config: RateConfig): Map<RateLimitClass, ClassLimits> {
  const limits = new Map<RateLimitClass, ClassLimits>();
  const rateOf = (key: string) => {
    const value = Object.hasOwn(config, key) ? config[key] : undefined;
    if (typeof value !== 'string') throw new Error(`${key}: not in the configuration (src/config.ts declares one per class)`);
    return parseRate(value);
  };
  for (const name of RATE_LIMIT_CLASS_NAMES) {
    const perAddress = rateOf(rateLimitKey(name));
    const perTenant = 'perTenant' in RATE_LIMIT_CLASSES[name] ? rateOf(`${rateLimitKey(name)}_PER_TENANT`) : undefined;
    limits.set(name, perTenant ? { perAddress, perTenant } : { perAddress });
  }
  return limits;
}

export interface RateLimits {
  limits: ReadonlyMap<RateLimitClass, ClassLimits>;
  /** The longest window of any class: the database clean-up keeps rows that long. */
  longestWindowSeconds: number;
  install(app: App, tenantLimits: (tenantId: string) => Promise<ReadonlyMap<RateLimitClass, TenantLimits>>): void;
  close(): Promise<void>;
}

export async function createRateLimits(config: RateConfig, db: Executor, log: (err: unknown) => void): Promise<RateLimits> {
  const limits = operatorLimits(config);
  const windows = [...limits.values()].flatMap((l) => [l.perAddress.windowSeconds, l.perTenant?.windowSeconds ?? 0]);
  const longestWindowSeconds = Math.max(...windows);
  if (!config.RATE_LIMITS_ENABLED) return { limits, longestWindowSeconds, install: () => {}, close: async () => {} };
  // The redis package is loaded only when REDIS_URL is set.
  const shared: SharedWindows = config.REDIS_URL
    ? await (await import('./redis-windows.js')).connectRedisWindows(config.REDIS_URL, config.REDIS_KEY_PREFIX)
    : new DatabaseWindows(db);
  const limiter = new RateLimiter(shared, atMostEvery(60_000, log));
  return {
    limits,
    longestWindowSeconds,
    install: (app, tenantLimits) => installRateLimits(app, { limiter, limits, tenantLimits }),
    close: () => limiter.close(),
  };
}

/** A store out of reach fails every batch (4 a second): one line a minute says so. */
function atMostEvery(ms: number, log: (err: unknown) => void): (err: unknown) => void {
  let last = Number.NEGATIVE_INFINITY;
  return (err) => {
    // Throttles a log line by elapsed time: the system clock, not the injected one.
    const now = Date.now();
    if (now - last < ms) return;
    last = now;
    log(err);
  };
}
