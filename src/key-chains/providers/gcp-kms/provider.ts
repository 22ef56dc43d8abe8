// Keys in Google Cloud KMS, over its REST API (./rest.ts): one crypto key per key of a chain in the
// configured key ring (purpose ASYMMETRIC_SIGN, EC_SIGN_P256_SHA256 or EC_SIGN_P384_SHA384;
// protection level SOFTWARE or HSM), created there when missing. svc hashes, Cloud KMS signs the
// digest and answers DER, which becomes r || s here. A key is pinned to the version read when it was
// taken into the chain (the stored reference is the version's resource name): a version added inside
// Cloud KMS never signs for a certificate made for an earlier one.
import { createHash, createPublicKey } from 'node:crypto';
import type { JWK } from 'jose';
import type { SigningAlgorithm } from '../../../platform/crypto/algorithms.js';
import type { OutboundClient } from '../../../platform/outbound/client.js';
import { TokenRefused } from '../bearer-token.js';
import { derToRaw } from '../der-signature.js';
import { COORDINATE_BYTES, digestOf, ExternalKeyProvider } from '../external.js';
import type { Adoptions, KeyPlace } from '../key-names.js';
import type { ProviderCapabilities } from '../key-provider.js';
import { ProviderStartError } from '../start-error.js';
import { CloudKmsClient, CloudKmsError, type GcpCredentials, gcpTokenSource } from './rest.js';

export interface GcpKmsSettings {
  id: string;
  adopt: Adoptions;
  /** projects/<project>/locations/<location>/keyRings/<ring> */
  keyRing: string;
  endpoint: string;
  protectionLevel: 'SOFTWARE' | 'HSM';
  credentials: GcpCredentials;
}

/** Cloud KMS's EC signing algorithms (it has no P-521). */
const KEY_ALGORITHM: Partial<Record<SigningAlgorithm, string>> = { ES256: 'EC_SIGN_P256_SHA256', ES384: 'EC_SIGN_P384_SHA384' };
const DIGEST: Partial<Record<SigningAlgorithm, 'sha256' | 'sha384'>> = { ES256: 'sha256', ES384: 'sha384' };
/** Crypto key ids: 1-63 letters, digits, _ and -. */
const MAX_NAME = 63;

export class GcpKmsKeyProvider extends ExternalKeyProvider {
  readonly type = 'gcp-kms';
  readonly capabilities: ProviderCapabilities = { generate: true, import: false, algorithms: ['ES256', 'ES384'], decrypt: false };

  private constructor(
    private readonly settings: GcpKmsSettings,
    private readonly client: CloudKmsClient,
  ) {
    super(settings.id, settings.adopt);
  }

  /** Gets a token and reads the key ring: an answer means Cloud KMS is reachable, takes the identity, and the ring is there. */
  static async connect(settings: GcpKmsSettings, outbound: OutboundClient): Promise<GcpKmsKeyProvider> {
    const client = new CloudKmsClient(settings.endpoint, gcpTokenSource(settings.credentials, outbound), outbound);
    const where = `Cloud KMS key ring ${settings.keyRing}`;
    try {
      await client.getKeyRing(settings.keyRing);
    } catch (err) {
      if (err instanceof TokenRefused) throw new ProviderStartError(`${where}: ${err.message}`, 'config');
      if (err instanceof CloudKmsError && [401, 403, 404].includes(err.status)) {
        throw new ProviderStartError(`${where}: ${err.message} (a wrong key ring, or the identity may not use it)`, 'config');
      }
      throw new ProviderStartError(`${where} is unreachable: ${(err as Error).message}`, 'unavailable');
    }
    return new GcpKmsKeyProvider(settings, client);
  }

  /**
   * Crypto key ids take letters, digits, _ and -, at most 63: a namespaced name (svc.<tenant>.<instance>.<name>)
   * is spelled with _ as the escape (__ for _, _d for .), one-to-one; one longer than 63 becomes svch_
   * and the SHA-256 of the namespaced name (base64url). An adopted name (no '.') is used as it is.
   */
  protected override keyName(place: KeyPlace): string {
    const name = super.keyName(place);
    if (!name.includes('.')) return name;
    const spelled = name.replace(/[_.]/g, (char) => (char === '_' ? '__' : '_d'));
    return spelled.length <= MAX_NAME ? spelled : `svch_${createHash('sha256').update(name).digest('base64url')}`;
  }

  protected async ensureKey(name: string, algorithm: SigningAlgorithm): Promise<{ jwk: JWK; ref: string }> {
    const { keyRing, protectionLevel } = this.settings;
    const keyAlgorithm = KEY_ALGORITHM[algorithm];
    if (!keyAlgorithm) throw new Error(`Cloud KMS has no ${algorithm} keys`);
    const key = (await this.client.getCryptoKey(keyRing, name)) ?? (await this.createOrRead(name, keyAlgorithm, protectionLevel));
    if (key.purpose !== 'ASYMMETRIC_SIGN') throw new Error(`crypto key ${key.name} is for ${key.purpose}, not ASYMMETRIC_SIGN`);
    const version = await this.client.newestEnabledVersion(key.name);
    if (!version) throw new Error(`crypto key ${key.name} has no enabled version`);
    const publicKey = await this.client.publicKey(version.name);
    // Another algorithm (a P-384 key asked for ES256, secp256k1, RSA) gives another JWK, which the caller refuses with a 409.
    const jwk = createPublicKey(publicKey.pem).export({ format: 'jwk' }) as JWK;
    return { jwk, ref: version.name };
  }

  /** Creates the crypto key; when another instance of svc created it meanwhile (409), reads that one. */
  private async createOrRead(name: string, algorithm: string, protectionLevel: 'SOFTWARE' | 'HSM') {
    const { keyRing } = this.settings;
    try {
      return await this.client.createCryptoKey(keyRing, name, algorithm, protectionLevel);
    } catch (err) {
      const made = err instanceof CloudKmsError && err.status === 409 ? await this.client.getCryptoKey(keyRing, name) : undefined;
      if (!made) throw err;
      return made;
    }
  }

  protected async signRaw(ref: string, algorithm: SigningAlgorithm, data: Uint8Array): Promise<Uint8Array> {
    const hash = DIGEST[algorithm];
    if (!hash) throw new Error(`Cloud KMS has no ${algorithm} keys`);
    return derToRaw(await this.client.asymmetricSign(ref, hash, digestOf(algorithm, data)), COORDINATE_BYTES[algorithm]);
  }

  async check(): Promise<void> {
    await this.client.getKeyRing(this.settings.keyRing);
  }

  async close(): Promise<void> {}
}
