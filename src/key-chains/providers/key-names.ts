// Names of keys inside an external provider. A PKCS#11 token, a Vault mount or an AWS account is
// shared by every tenant, so a tenant's key names live in a namespace of its own:
// svc<sep><tenant><sep><instance><sep><name>, with a separator that none of the parts can contain.
// Two tenants, or a tenant and a key chain id, can then never reach the same key. The instance part
// (when the tenant row was created) tells a deleted tenant from a later one with the same id: keys
// stay in the provider when their tenant goes, and must never sign for whoever takes up its id. A
// key the operator made outside svc is reached by its own name only where KMS_PROVIDERS lets that
// tenant adopt it.

/** The letters of externalKeyId and of the names derived from it (root, rotated keys): every provider takes them. */
export const KEY_NAME = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * An id (of a tenant or a key chain: letters, digits and . _ ~ -) in the letters of KEY_NAME: each
 * character other than a letter, digit or - becomes _ and its two hex digits. One-to-one, because _
 * itself is escaped; never contains a separator.
 */
export const escapeId = (id: string) => id.replace(/[^A-Za-z0-9-]/g, (char) => `_${char.charCodeAt(0).toString(16).padStart(2, '0')}`);

/** Separators: '.' where the provider takes it in a name (PKCS#11 label, Vault transit key), '/' for AWS KMS aliases. */
export type NameSeparator = '.' | '/';

/** A key of an external provider as a tenant names it: the provider derives its own name from all three. */
export interface KeyPlace {
  tenantId: string;
  /** The tenant row's created_at (ISO, to the millisecond): set once, when the tenant is created, and never changed. */
  tenantCreatedAt: string;
  name: string;
}

/**
 * The tenant instance's part of a name: its creation time in milliseconds, base 36 (8 letters and
 * digits until 2059). A tenant deleted and created again with the same id gets another.
 */
const tenantInstance = (createdAt: string) => {
  const ms = Date.parse(createdAt);
  if (!Number.isSafeInteger(ms)) throw new Error(`a tenant's created_at is not a time: '${createdAt}'`);
  return ms.toString(36);
};

/** Tenants and the key names of the provider each may use verbatim (KMS_PROVIDERS `adopt`). */
export type Adoptions = ReadonlyMap<string, ReadonlySet<string>>;

/**
 * The name in the provider of the tenant's key: the name itself where it is adopted (for the tenant
 * id, whichever instance: the operator's explicit choice), else in the tenant instance's namespace.
 */
export function providerKeyName(place: KeyPlace, separator: NameSeparator, adoptions: Adoptions): string {
  if (adoptions.get(place.tenantId)?.has(place.name)) return place.name;
  return ['svc', escapeId(place.tenantId), tenantInstance(place.tenantCreatedAt), place.name].join(separator);
}
