import { z } from 'zod';

// The spec's rules; on update every field also accepts null, meaning "back to the global default".
export const SessionConfigSchema = z
  .strictObject({
    ttlSeconds: z.number().int().min(60).nullable().optional().describe('seconds; unset uses SESSION_TTL'),
    cleanupMode: z.enum(['full', 'anonymize']).nullable().optional().describe('full deletes, anonymize keeps metadata; default full'),
  })
  .meta({ id: 'SessionStorageConfig' });

export const StatusListConfigSchema = z
  .strictObject({
    capacity: z
      .number()
      .int()
      .min(100)
      .nullable()
      .optional()
      .describe('unset uses STATUS_CAPACITY; at most STATUS_MAX_CAPACITY (400 beyond)'),
    bits: z
      .union([z.literal(1), z.literal(2), z.literal(4), z.literal(8)])
      .nullable()
      .optional()
      .describe('unset uses STATUS_BITS'),
    ttl: z.number().int().min(60).nullable().optional().describe('seconds; unset uses STATUS_TTL'),
    immediateUpdate: z.boolean().nullable().optional().describe('default false'),
    enableAggregation: z.boolean().nullable().optional().describe('default true'),
  })
  .meta({ id: 'StatusListConfig' });

export type SessionConfig = z.infer<typeof SessionConfigSchema>;
export type StatusListConfig = z.infer<typeof StatusListConfigSchema>;

/** Drops the keys that are unset or null: what remains is what the tenant overrides. */
export function overrides<T extends Record<string, unknown>>(config: T | null | undefined): Partial<T> | null {
  if (!config) return null;
  const kept = Object.fromEntries(Object.entries(config).filter(([, v]) => v !== null && v !== undefined));
  return Object.keys(kept).length ? (kept as Partial<T>) : null;
}
