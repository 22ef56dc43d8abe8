// What every provider whose private keys live outside the database (PKCS#11, Vault Transit, AWS
// KMS, a QTSP through CSC) has in common. The key chain row keeps, per key, only a public record: which key of the
// provider it is (its reference there) and its public JWK. Signatures are asked of the provider; a
// provider that fails is a 503 naming it, and no other key ever signs instead.
import { createHash, type webcrypto } from 'node:crypto';
import type { JWK } from 'jose';
import { ALGORITHM_PARAMS, type SigningAlgorithm } from '../../platform/crypto/algorithms.js';
import { delegatedSigningKey } from '../../platform/crypto/delegated-keys.js';
import { Problem } from '../../platform/http/problem.js';
import { type Adoptions, type KeyPlace, type NameSeparator, providerKeyName } from './key-names.js';
import { type KeyProvider, type ProviderCapabilities, publicPart, type StoredKey, withKid } from './key-provider.js';

/** The stored form of an external key: where it is, and its public half. No private key material. */
interface ExternalKeyRecord {
  ref: string;
  jwk: JWK;
}

/**
 * A key provider's failure, for the response: 503 naming the provider. The provider's own words
 * (return values, key ARNs, server messages) go to the service's log as the cause, not to callers:
 * wallets and tenants see this too.
 */
export function providerFailure(provider: string, action: string, err: unknown): Problem {
  const problem = new Problem(
    503,
    'Service Unavailable',
    `key provider '${provider}' could not ${action}; the service log has the reason`,
    {
      provider,
    },
  );
  return Object.assign(problem, { cause: err });
}

export const HASH_OF: Record<SigningAlgorithm, string> = { ES256: 'sha256', ES384: 'sha384', ES512: 'sha512' };
/** Bytes of r and of s in a raw ECDSA signature. */
export const COORDINATE_BYTES: Record<SigningAlgorithm, number> = { ES256: 32, ES384: 48, ES512: 66 };

export const digestOf = (algorithm: SigningAlgorithm, data: Uint8Array) => createHash(HASH_OF[algorithm]).update(data).digest();

export abstract class ExternalKeyProvider implements KeyProvider {
  abstract readonly type: string;
  abstract readonly capabilities: ProviderCapabilities;
  /** Public records (with the JWK's kid) by stored value: parsed once, never stale (a new key is a new value). */
  private readonly records = new Map<string, ExternalKeyRecord & { publicJwk: JWK }>();
  /** The provider certifies its keys itself (a QTSP): its key chains take its certificates, and it makes no keys. */
  readonly issuesCertificates: boolean = false;

  /** What separates the parts of a namespaced key name: '.' unless the provider's names do not take it. */
  protected readonly nameSeparator: NameSeparator = '.';
  /** The longest name the provider takes for a key: no limit unless the provider has one. */
  protected readonly maxNameLength: number = Number.POSITIVE_INFINITY;

  constructor(
    readonly name: string,
    private readonly adoptions: Adoptions,
  ) {}

  /**
   * The public JWK of the key named `name`, made first (non-extractable, for signing) when the
   * provider has none of that name; and the reference that signatures will name it by (the name,
   * or something more exact such as a pinned version or the provider's own id).
   */
  protected abstract ensureKey(name: string, algorithm: SigningAlgorithm): Promise<{ jwk: JWK; ref: string; certificateChain?: string }>;
  /** Raw (r || s) signature over `data` by the key `ref`, hashed with the algorithm's hash. */
  protected abstract signRaw(ref: string, algorithm: SigningAlgorithm, data: Uint8Array): Promise<Uint8Array>;
  /** Resolves when the provider can sign; rejects with the reason otherwise (/health/ready). */
  abstract check(): Promise<void>;
  abstract close(): Promise<void>;

  /**
   * The provider's name for the key at `place`: the tenant's namespaced name, or the adopted name as
   * it is. A provider whose names take none of the separators overrides it to spell the name its way.
   */
  protected keyName(place: KeyPlace): string {
    return providerKeyName(place, this.nameSeparator, this.adoptions);
  }

  keyNameProblem(place: KeyPlace): string | undefined {
    const name = this.keyName(place);
    if (name.length <= this.maxNameLength) return undefined;
    return `key provider '${this.name}' takes names of at most ${this.maxNameLength} characters, and '${name}' has ${name.length}`;
  }

  async generate(algorithm: SigningAlgorithm, _context: string, place?: KeyPlace | null) {
    if (!place) throw new Error(`key provider '${this.name}' needs the name of the key (externalKeyId)`);
    const ref = this.keyName(place);
    if (!this.capabilities.algorithms.includes(algorithm)) {
      throw new Problem(400, 'Bad Request', `key provider '${this.name}' does not offer ${algorithm}`, {
        errors: [{ field: 'body.algorithm', message: `not offered by key provider '${this.name}'` }],
      });
    }
    let found: { jwk: JWK; ref: string; certificateChain?: string };
    try {
      found = await this.ensureKey(ref, algorithm);
    } catch (err) {
      if (err instanceof Problem) throw err;
      throw providerFailure(this.name, `provide key '${ref}'`, err);
    }
    const { jwk } = found;
    if (jwk.kty !== 'EC' || jwk.crv !== ALGORITHM_PARAMS[algorithm].curve) {
      const curve = ALGORITHM_PARAMS[algorithm].curve;
      throw new Problem(409, 'Conflict', `key '${ref}' of key provider '${this.name}' is not an EC key on ${curve} (${algorithm})`);
    }
    const record: ExternalKeyRecord = { ref: found.ref, jwk: publicPart(jwk) };
    return {
      sealedJwk: JSON.stringify(record),
      externalKeyId: place.name,
      publicJwk: withKid(jwk),
      ...(found.certificateChain && { certificateChain: found.certificateChain }),
    };
  }

  private record(key: StoredKey) {
    let record = this.records.get(key.sealedJwk);
    if (!record) {
      const stored = JSON.parse(key.sealedJwk) as ExternalKeyRecord;
      record = { ...stored, publicJwk: withKid(stored.jwk) };
      if (this.records.size > 5_000) this.records.clear();
      this.records.set(key.sealedJwk, record);
    }
    return record;
  }

  publicJwk(key: StoredKey): JWK {
    return this.record(key).publicJwk;
  }

  async sign(key: StoredKey, algorithm: SigningAlgorithm, data: Uint8Array): Promise<Uint8Array> {
    const { ref } = this.record(key);
    try {
      return await this.signRaw(ref, algorithm, data);
    } catch (err) {
      throw providerFailure(this.name, 'sign', err);
    }
  }

  async signingCryptoKey(key: StoredKey, algorithm: SigningAlgorithm): Promise<webcrypto.CryptoKey> {
    return delegatedSigningKey(ALGORITHM_PARAMS[algorithm].curve, (data) => this.sign(key, algorithm, data));
  }

  async decryptJwe(): Promise<never> {
    throw new Problem(
      409,
      'Conflict',
      `key provider '${this.name}' does not decrypt: key chains of usage type encrypt keep their key in db`,
    );
  }
}
