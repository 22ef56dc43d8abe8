// Where the claims of an offered credential come from (inline in the offer, an attribute provider or
// a webhook asked at issuance; by default the fields' default values), and how given claims lie over
// those defaults. The offer records the sources in its session; the credential, deferred credential
// and interactive authorization steps merge what they get.
import { z } from 'zod';
import { isJsonObject } from '../platform/json.js';

const HeaderAuth = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('none') }),
  z.strictObject({ type: z.literal('header'), header: z.strictObject({ name: z.string().min(1), value: z.string().min(1) }) }),
]);

export const ClaimSourceSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('inline'), claims: z.record(z.string(), z.unknown()) }),
  z.strictObject({ type: z.literal('attributeProvider'), attributeProviderId: z.string().min(1) }),
  z.strictObject({
    type: z.literal('webhook'),
    webhook: z.strictObject({ url: z.url({ protocol: /^https?$/ }), auth: HeaderAuth.optional() }),
  }),
]);
export type ClaimSource = z.infer<typeof ClaimSourceSchema>;

/** Given claims over the fields' defaults, object by object (an mdoc namespace keeps the defaults it does not override). */
export function mergeClaims(defaults: Record<string, unknown>, given: Record<string, unknown>): Record<string, unknown> {
  // Claim names come from outside (an attribute provider, a webhook): merged in a Map and made into
  // own members, so that no name (toString, __proto__) finds or replaces an inherited member.
  const merged = new Map(Object.entries(defaults));
  for (const [key, value] of Object.entries(given)) {
    const base = merged.get(key);
    merged.set(key, isJsonObject(base) && isJsonObject(value) ? mergeClaims(base, value) : value);
  }
  return Object.fromEntries(merged);
}
