// A master key source: what wraps (encrypts) the data-encryption key, the secret that plays
// MASTER_SECRET's role for derive.ts, so that the database holds it only wrapped. A source is two
// calls and a name; a new one (Azure Key Vault, Google Cloud KMS) is a file of this folder and a
// line in index.ts, nothing else changes.

/** Why a source failed: `config` for a key that does not open or is refused (exit 78), `unavailable` for one not reachable now (exit 69). */
export class MasterKeySourceError extends Error {
  constructor(
    message: string,
    readonly kind: 'config' | 'unavailable',
  ) {
    super(message);
  }
}

export interface MasterKeySource {
  /**
   * Which key wraps, as stored next to the wrapped value (`vault-transit:<key>`, `aws-kms:<key id>`,
   * `file:<fingerprint>`): a start compares it with its configured key before asking the source,
   * and knows so whether the stored value is one to re-wrap (wrapped under MASTER_KEY_PREVIOUS_*).
   */
  readonly name: string;
  /** The data key, wrapped, as text for the database. */
  wrap(dataKey: Buffer): Promise<string>;
  /** The data key again; a MasterKeySourceError when the key does not open it or cannot be reached. */
  unwrap(wrapped: string): Promise<Buffer>;
}
