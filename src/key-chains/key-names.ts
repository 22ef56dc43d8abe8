// Names of keys inside an external provider. A PKCS#11 token, a Vault mount or an AWS account is
// shared by every tenant, so a tenant's key names live in a namespace of its own:
// svc<sep><tenant><sep><name>, with a separator that neither the tenant part nor the name can
// contain. Two tenants, or a tenant and a key chain id, can then never reach the same key. A key the
// operator made outside svc is reached by its own name only where KMS_PROVIDERS lets that tenant adopt it.

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

/** Tenants and the key names of the provider each may use verbatim (KMS_PROVIDERS `adopt`). */
export type Adoptions = ReadonlyMap<string, ReadonlySet<string>>;

/** The name in the provider of the tenant's key `name`: the name itself where it is adopted, else in the tenant's namespace. */
export function providerKeyName(tenantId: string, name: string, separator: NameSeparator, adoptions: Adoptions): string {
  if (adoptions.get(tenantId)?.has(name)) return name;
  return ['svc', escapeId(tenantId), name].join(separator);
}
