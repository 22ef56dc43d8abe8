// What every entry of KMS_PROVIDERS has (an id, the keys it lets tenants adopt, a type), the values
// that may stand for a secret, and the shape a provider type plugs in with: its entry's schema and
// how it connects. Each type lives in a folder of its own (pkcs11/, vault/, aws-kms/) and is named
// once in ./index.ts.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { OutboundClient } from '../../platform/outbound/client.js';
import { TENANT_ID } from '../../tenants/routes.js';
import type { ExternalKeyProvider } from './external.js';
import { type Adoptions, KEY_NAME } from './key-names.js';

/** A value written in the file, or read from an environment variable or a file (secrets stay out of the JSON). */
export const Value = z
  .union([z.string().min(1), z.strictObject({ env: z.string().min(1) }), z.strictObject({ file: z.string().min(1) })])
  .describe('a string, {"env": NAME} or {"file": PATH}');
export type ValueRef = z.infer<typeof Value>;

const ProviderId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'must be 1-32 lower-case letters, digits, _ or -')
  .refine((id) => id !== 'db', 'db is the database provider, always present; choose another id');

/**
 * Keys the operator made in the provider outside svc, each with the tenant that may take it into a
 * key chain under its own name (externalKeyId). Every other name a tenant gives lives in its
 * namespace. A list, not an object keyed by tenant, so no tenant id is ever a property name.
 */
const Adopt = z
  .array(
    z.strictObject({
      tenant: TENANT_ID,
      keys: z.array(z.string().regex(KEY_NAME, 'must be 1-100 letters, digits, _ or - (a valid externalKeyId)')).min(1),
    }),
  )
  .optional()
  .transform((entries): Adoptions => {
    const adoptions = new Map<string, Set<string>>();
    for (const { tenant, keys } of entries ?? []) {
      const names = adoptions.get(tenant) ?? new Set<string>();
      for (const key of keys) names.add(key);
      adoptions.set(tenant, names);
    }
    return adoptions;
  })
  .describe('[{"tenant": id, "keys": [names]}]: existing keys of the provider a tenant may use as externalKeyId, verbatim');

/** The fields every entry has, beside its type's own. */
export const COMMON_SETTINGS = { id: ProviderId, adopt: Adopt };

/** The value a reference stands for: written, from the environment, or from a file (one trailing newline dropped). */
export function resolveValue(value: ValueRef, env: Record<string, string | undefined>, what: string): string {
  if (typeof value === 'string') return value;
  if ('env' in value) {
    const found = env[value.env];
    if (found === undefined || found === '') throw new Error(`${what}: environment variable ${value.env} is not set`);
    return found;
  }
  try {
    return readFileSync(value.file, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new Error(`${what}: file ${value.file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/** What a provider type's connect gets besides its entry: its secrets resolved, and the outbound client. */
export interface ConnectContext {
  /** The secret a Value of the entry stands for; `field` names it in the start-up error. */
  secretOf(value: ValueRef, field: string): string;
  /** Every call to a provider's server goes through it (the operator's addresses are admitted). */
  outbound: OutboundClient;
}

/**
 * One kind of place where keys live. `settings` is its KMS_PROVIDERS entry (with COMMON_SETTINGS and
 * `type`); `connect` loads its module on first use (so a library nobody configured is never read),
 * and connects or throws (a ProviderStartError says whether the file or the provider is at fault).
 */
export interface ExternalProviderType<Settings extends z.ZodObject> {
  settings: Settings;
  connect(settings: z.infer<Settings>, context: ConnectContext): Promise<ExternalKeyProvider>;
}
