// Session retention: each tenant keeps its sessions for ttlSeconds after creation (default
// SESSION_TTL), then deletes or anonymizes them (default SESSION_CLEANUP_MODE). A scheduled job
// applies it, and on the way marks open sessions past their expiry as expired.
import type { Job } from '../platform/jobs/scheduler.js';
import type { SessionConfig } from '../tenants/schemas.js';
import type { CleanupMode, RetentionPolicy } from './model.js';
import type { SessionService } from './service.js';

export interface EffectiveSessionConfig extends RetentionPolicy {
  /** Which values come from the global configuration rather than from the tenant. */
  usesGlobalDefault: { ttlSeconds: boolean; cleanupMode: boolean };
}

export function effectiveSessionConfig(overrides: SessionConfig | null, defaults: RetentionPolicy): EffectiveSessionConfig {
  const ttlSeconds = overrides?.ttlSeconds ?? undefined;
  const cleanupMode: CleanupMode | undefined = overrides?.cleanupMode ?? undefined;
  return {
    ttlSeconds: ttlSeconds ?? defaults.ttlSeconds,
    cleanupMode: cleanupMode ?? defaults.cleanupMode,
    usesGlobalDefault: { ttlSeconds: ttlSeconds === undefined, cleanupMode: cleanupMode === undefined },
  };
}

export const SESSION_CLEANUP_JOB = 'session-cleanup';

export function sessionCleanupJob(
  sessions: SessionService,
  sessionConfigs: () => Promise<{ tenantId: string; sessionConfig: SessionConfig | null }[]>,
  defaults: RetentionPolicy,
): Job {
  return {
    name: SESSION_CLEANUP_JOB,
    async run() {
      // One tenant's failure must not keep the others' data beyond their retention.
      const failures: unknown[] = [];
      for (const { tenantId, sessionConfig } of await sessionConfigs()) {
        try {
          await sessions.expireLapsed(tenantId);
          await sessions.applyRetention(tenantId, effectiveSessionConfig(sessionConfig, defaults));
        } catch (err) {
          failures.push(err);
        }
      }
      if (failures.length) throw new AggregateError(failures, `session clean-up failed for ${failures.length} tenant(s)`);
    },
  };
}
