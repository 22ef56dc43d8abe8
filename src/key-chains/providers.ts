// Where private keys live. Callers see only this interface: the `db` provider keeps the private JWK
// encrypted in the key chain row; a PKCS#11 or cloud KMS provider implements the same operations
// against its externalKeyId and stores only the public JWK.
import { createHash, createPrivateKey, type JsonWebKey, type KeyObject, webcrypto } from 'node:crypto';
import { compactDecrypt, type JWK } from 'jose';
import { ALGORITHM_PARAMS, SIGNING_ALGORITHMS, type SigningAlgorithm } from '../platform/crypto/algorithms.js';
import { signP1363 } from '../platform/crypto/ecdsa-signatures.js';
import type { Sealer } from '../platform/crypto/sealed.js';
import type { KeyPlace } from './key-names.js';

/**
 * One key as stored in a key chain row: the JWK column (db: the private JWK, sealed; an external
 * provider: where the key is and its public JWK, nothing private) and the chain's external id, if any.
 */
export interface StoredKey {
  sealedJwk: string;
  externalKeyId: string | null;
  /** Binds the sealed value to its key chain (associated data). */
  context: string;
}

/** What GET /api/key-chain/providers says a provider can do. */
export interface ProviderCapabilities {
  /** Makes new keys (for an external provider: when the externalKeyId names no key yet). */
  generate: boolean;
  /** Takes private keys from outside (POST /api/key-chain/import). */
  import: boolean;
  algorithms: SigningAlgorithm[];
  /** Decrypts ECDH-ES JWEs (key chains of usage type encrypt). */
  decrypt: boolean;
}

export interface KeyProvider {
  /** The provider's id: db, or the id given in KMS_PROVIDERS. */
  readonly name: string;
  /** db, pkcs11, vault or aws-kms. */
  readonly type: string;
  readonly capabilities: ProviderCapabilities;
  /** Resolves when the provider can sign now; rejects with the reason otherwise (/health/ready). */
  check(): Promise<void>;
  /**
   * A new key; returns the value for the JWK column (and the external id for external providers).
   * `place` names the key inside an external provider (the tenant's name for it), which uses the
   * key of that name if the tenant has one there.
   */
  generate(
    algorithm: SigningAlgorithm,
    context: string,
    place?: KeyPlace | null,
  ): Promise<{ sealedJwk: string; externalKeyId: string | null; publicJwk: JWK }>;
  /** Why an external provider cannot hold a key at `place` (its name would be too long there); undefined when it can. */
  keyNameProblem?(place: KeyPlace): string | undefined;
  /** The public JWK with its kid (RFC 7638 thumbprint). */
  publicJwk(key: StoredKey): JWK;
  /** Raw (IEEE P1363, r || s) signature over `data`, hashed with the algorithm's hash. */
  sign(key: StoredKey, algorithm: SigningAlgorithm, data: Uint8Array): Promise<Uint8Array>;
  /** A WebCrypto signing key, for the certificate library. */
  signingCryptoKey(key: StoredKey, algorithm: SigningAlgorithm): Promise<webcrypto.CryptoKey>;
  /** Decrypts a compact ECDH-ES JWE addressed to this key. */
  decryptJwe(key: StoredKey, jwe: string): Promise<{ plaintext: Uint8Array; protectedHeader: Record<string, unknown> }>;
}

const NODE_HASH = { 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' } as const;

export function publicPart(jwk: JWK): JWK {
  const { kty, crv, x, y } = jwk;
  return { kty, crv, x, y };
}

/** kid = the RFC 7638 thumbprint of the public key, so it is the same wherever the key is published. */
export function withKid(jwk: JWK): JWK {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return { ...publicPart(jwk), kid: createHash('sha256').update(canonical).digest('base64url') };
}

export class DbKeyProvider implements KeyProvider {
  readonly name = 'db';
  readonly type = 'db';
  readonly capabilities: ProviderCapabilities = { generate: true, import: true, algorithms: [...SIGNING_ALGORITHMS], decrypt: true };
  /** Decrypted keys by sealed value: a new key has a new sealed value, so entries never go stale. */
  private readonly keys = new Map<string, { privateKey: KeyObject; jwk: JWK; publicJwk: JWK }>();

  constructor(private readonly sealer: Sealer) {}

  async generate(algorithm: SigningAlgorithm, context: string) {
    const pair = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: ALGORITHM_PARAMS[algorithm].curve }, true, [
      'sign',
      'verify',
    ]);
    const jwk = (await webcrypto.subtle.exportKey('jwk', pair.privateKey)) as JWK;
    return { sealedJwk: this.sealPrivate(jwk, context), externalKeyId: null, publicJwk: withKid(jwk) };
  }

  /** The database answers for itself in /health/ready. */
  async check() {}

  sealPrivate(jwk: JWK, context: string): string {
    const { kty, crv, x, y, d } = jwk;
    return this.sealer.sealJson({ kty, crv, x, y, d }, context);
  }

  private unseal(key: StoredKey) {
    // Keyed with the context too, so a sealed value copied into another key chain is refused, not served from cache.
    const cacheKey = `${key.context}|${key.sealedJwk}`;
    let entry = this.keys.get(cacheKey);
    if (!entry) {
      const jwk = this.sealer.openJson<JWK>(key.sealedJwk, key.context);
      entry = { jwk, publicJwk: withKid(jwk), privateKey: createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' }) };
      if (this.keys.size > 5_000) this.keys.clear();
      this.keys.set(cacheKey, entry);
    }
    return entry;
  }

  publicJwk(key: StoredKey): JWK {
    return this.unseal(key).publicJwk;
  }

  async sign(key: StoredKey, algorithm: SigningAlgorithm, data: Uint8Array): Promise<Uint8Array> {
    const hash = NODE_HASH[ALGORITHM_PARAMS[algorithm].hash];
    return signP1363(hash, data, this.unseal(key).privateKey);
  }

  async signingCryptoKey(key: StoredKey, algorithm: SigningAlgorithm) {
    return webcrypto.subtle.importKey(
      'jwk',
      this.unseal(key).jwk as webcrypto.JsonWebKey,
      { name: 'ECDSA', namedCurve: ALGORITHM_PARAMS[algorithm].curve },
      false,
      ['sign'],
    );
  }

  async decryptJwe(key: StoredKey, jwe: string) {
    const { plaintext, protectedHeader } = await compactDecrypt(jwe, this.unseal(key).privateKey, {
      keyManagementAlgorithms: ['ECDH-ES'],
      contentEncryptionAlgorithms: ['A128GCM', 'A256GCM'],
    });
    return { plaintext, protectedHeader: protectedHeader as Record<string, unknown> };
  }
}

/** The public key of a JWK as a WebCrypto key, for certificates whose private key lives elsewhere. */
export function publicCryptoKey(jwk: JWK, algorithm: SigningAlgorithm) {
  return webcrypto.subtle.importKey(
    'jwk',
    publicPart(jwk) as webcrypto.JsonWebKey,
    { name: 'ECDSA', namedCurve: ALGORITHM_PARAMS[algorithm].curve },
    true,
    ['verify'],
  );
}
