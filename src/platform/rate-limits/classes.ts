// The endpoint classes that are rate limited and the routes of each; their limits are the keys
// RATE_LIMIT_<CLASS> (per address) and RATE_LIMIT_<CLASS>_PER_TENANT of src/config.ts.
import { RATE_PATTERN } from '../../config.js';

export interface ClassSpec {
  /** What the class covers, for docs/operations.md and the configuration table. */
  covers: string;
  routes: readonly string[];
  /**
   * Counted per tenant too (RATE_LIMIT_<CLASS>_PER_TENANT), and lowered by a tenant in its settings.
   * Absent: the routes name no tenant (the verifier's handles hide it), so only the address limit applies.
   */
  perTenant?: true;
}

export const RATE_LIMIT_CLASSES = {
  authorization: {
    covers: 'PAR, authorize, the attestation challenge and the interactive authorization endpoints',
    routes: [
      '/issuers/:tenantId/par',
      '/issuers/:tenantId/authorize',
      '/issuers/:tenantId/challenge',
      '/issuers/:tenantId/iae',
      '/issuers/:tenantId/authorize-challenge',
      '/issuers/:tenantId/iae/web-result',
    ],
    perTenant: true,
  },
  token: { covers: 'the token endpoint', routes: ['/issuers/:tenantId/token'], perTenant: true },
  nonce: { covers: 'the nonce endpoint', routes: ['/issuers/:tenantId/nonce'], perTenant: true },
  credential: {
    covers: 'the credential and deferred credential endpoints',
    routes: ['/issuers/:tenantId/credential', '/issuers/:tenantId/deferred-credential'],
    perTenant: true,
  },
  notification: {
    covers: 'the notification endpoint',
    routes: ['/issuers/:tenantId/notification'],
    perTenant: true,
  },
  presentation: {
    covers: "the verifier's request object and response endpoints (DC API and ISO 18013-7 Annex C responses too)",
    routes: [
      '/presentations/:handle/request',
      '/presentations/:handle/response',
      '/presentations/:handle/dc-api-response',
      '/presentations/:handle/annex-c-response',
    ],
  },
  management_token: {
    covers: 'the management token endpoint (POST /api/oauth2/token; failed attempts have their own, lower limit)',
    routes: ['/api/oauth2/token'],
  },
} as const satisfies Record<string, ClassSpec>;

export type RateLimitClass = keyof typeof RATE_LIMIT_CLASSES;
export const RATE_LIMIT_CLASS_NAMES = Object.keys(RATE_LIMIT_CLASSES) as RateLimitClass[];
/** The classes a tenant can lower in its issuer settings: those counted per tenant. */
export const TENANT_RATE_LIMIT_CLASSES = RATE_LIMIT_CLASS_NAMES.filter((name) => 'perTenant' in RATE_LIMIT_CLASSES[name]);

export interface Rate {
  requests: number;
  windowSeconds: number;
}

export function parseRate(value: string): Rate {
  const match = RATE_PATTERN.exec(value.trim());
  if (!match) throw new Error('unreachable: checked by the schema');
  return { requests: Number(match[1]), windowSeconds: Number(match[2]) };
}

/** The configuration key of a class's per-address limit, and (suffix _PER_TENANT) of its per-tenant limit. */
export const rateLimitKey = (name: RateLimitClass) => `RATE_LIMIT_${name.toUpperCase()}`;
