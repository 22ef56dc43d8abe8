// Session retention: each tenant keeps its sessions for ttlSeconds after creation (default
// SESSION_TTL), then deletes or anonymizes them (default SESSION_CLEANUP_MODE). A scheduled job
// applies it, and on the way marks open sessions past their expiry as expired.
import { type BatchLimits, CLEANUP_BATCHES } from '../platform/jobs/batches.js';
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

/**
 * The retention job. A run deletes or anonymizes about limits.size × limits.maxBatches sessions
 * across all tenants (one statement of limits.size more at most), so that its time stays bounded
 * however large the backlog: the rest goes at the next runs, each making the same progress.
 */
export function sessionCleanupJob(
  sessions: SessionService,
  sessionConfigs: () => Promise<{ tenantId: string; sessionConfig: SessionConfig | null }[]>,
  defaults: RetentionPolicy,
  limits: BatchLimits = CLEANUP_BATCHES,
): Job {
  return {
    name: SESSION_CLEANUP_JOB,
    async run() {
      // One tenant's failure must not keep the others' data beyond their retention.
      const failures: unknown[] = [];
      let rowsLeft = limits.size * limits.maxBatches;
      for (const { tenantId, sessionConfig } of await sessionConfigs()) {
        try {
          await sessions.expireLapsed(tenantId);
          if (rowsLeft <= 0) continue;
          const budget = { size: Math.min(limits.size, rowsLeft), maxBatches: Math.ceil(rowsLeft / Math.min(limits.size, rowsLeft)) };
          const done = await sessions.applyRetention(
            tenantId,
            effectiveSessionConfig(sessionConfig, defaults),
            sessions.clock.now().getTime(),
            budget,
          );
          rowsLeft -= done.deleted + done.anonymized;
        } catch (err) {
          failures.push(err);
        }
      }
      if (failures.length) throw new AggregateError(failures, `session clean-up failed for ${failures.length} tenant(s)`);
    },
  };
}
