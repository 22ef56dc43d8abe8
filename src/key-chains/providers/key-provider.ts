// Where private keys live. Callers see only this interface: the `db` provider keeps the private JWK
// encrypted in the key chain row; a PKCS#11 or cloud KMS provider implements the same operations
// against its externalKeyId and stores only the public JWK.
import { createHash, webcrypto } from 'node:crypto';
import type { JWK } from 'jose';
import { ALGORITHM_PARAMS, type SigningAlgorithm } from '../../platform/crypto/algorithms.js';
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
  /** db, or the type of its KMS_PROVIDERS entry (pkcs11, vault, aws-kms, azure-keyvault, gcp-kms, csc). */
  readonly type: string;
  readonly capabilities: ProviderCapabilities;
  /**
   * The provider certifies its keys itself (csc: the QTSP issued the certificates): a key chain of
   * it takes the provider's certificate chain (type imported) instead of one svc makes.
   */
  readonly issuesCertificates?: boolean;
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
  ): Promise<{ sealedJwk: string; externalKeyId: string | null; publicJwk: JWK; certificateChain?: string }>;
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

export function publicPart(jwk: JWK): JWK {
  const { kty, crv, x, y } = jwk;
  return { kty, crv, x, y };
}

/** kid = the RFC 7638 thumbprint of the public key, so it is the same wherever the key is published. */
export function withKid(jwk: JWK): JWK {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return { ...publicPart(jwk), kid: createHash('sha256').update(canonical).digest('base64url') };
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
