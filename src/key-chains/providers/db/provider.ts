// The database provider: the private JWK sealed (AES-GCM under a key derived from MASTER_SECRET, bound
// to its key chain) in the key chain row. Always present, under the id db.
import { createPrivateKey, type JsonWebKey, type KeyObject, webcrypto } from 'node:crypto';
import { compactDecrypt, type JWK } from 'jose';
import { ALGORITHM_PARAMS, SIGNING_ALGORITHMS, type SigningAlgorithm } from '../../../platform/crypto/algorithms.js';
import { signP1363 } from '../../../platform/crypto/ecdsa-signatures.js';
import type { Sealer } from '../../../platform/crypto/sealed.js';
import { type KeyProvider, type ProviderCapabilities, type StoredKey, withKid } from '../key-provider.js';

const NODE_HASH = { 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' } as const;

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
