// Keys in Azure Key Vault, over its REST API (./rest.ts): one vault key per key of a chain (kty EC,
// or EC-HSM in a Premium vault or Managed HSM; P-256/-384/-521; key_ops sign and verify), created
// there when missing. Key Vault signs the digest svc computed and answers r || s. A key is pinned to
// the version read when it was taken into the chain (the stored reference is name/version): a new
// version made inside the vault never signs for a certificate made for the earlier one.
import { createHash } from 'node:crypto';
import type { JWK } from 'jose';
import { ALGORITHM_PARAMS, type SigningAlgorithm } from '../../../platform/crypto/algorithms.js';
import type { OutboundClient } from '../../../platform/outbound/client.js';
import { TokenRefused } from '../bearer-token.js';
import { digestOf, ExternalKeyProvider } from '../external.js';
import type { Adoptions, KeyPlace } from '../key-names.js';
import type { ProviderCapabilities } from '../key-provider.js';
import { ProviderStartError } from '../start-error.js';
import { type AzureCredentials, azureTokenSource, KeyVaultClient, KeyVaultError, versionOf } from './rest.js';

export interface AzureKeyVaultSettings {
  id: string;
  adopt: Adoptions;
  vaultUrl: string;
  credentials: AzureCredentials;
  /** Keys of type EC-HSM (Premium vault, Managed HSM) instead of EC. */
  hsm: boolean;
}

/** Key Vault key names: 1-127 letters, digits and -. */
const MAX_NAME = 127;

export class AzureKeyVaultProvider extends ExternalKeyProvider {
  readonly type = 'azure-keyvault';
  readonly capabilities: ProviderCapabilities = { generate: true, import: false, algorithms: ['ES256', 'ES384', 'ES512'], decrypt: false };

  private constructor(
    private readonly settings: AzureKeyVaultSettings,
    private readonly client: KeyVaultClient,
  ) {
    super(settings.id, settings.adopt);
  }

  /** Gets a token and lists one key: an answer means the vault is reachable and takes the identity. */
  static async connect(settings: AzureKeyVaultSettings, outbound: OutboundClient): Promise<AzureKeyVaultProvider> {
    const client = new KeyVaultClient(settings.vaultUrl, azureTokenSource(settings.credentials, outbound), outbound);
    const where = `Azure Key Vault ${settings.vaultUrl}`;
    try {
      await client.listOne();
    } catch (err) {
      if (err instanceof TokenRefused) throw new ProviderStartError(`${where}: ${err.message}`, 'config');
      if (err instanceof KeyVaultError && (err.status === 401 || err.status === 403)) {
        throw new ProviderStartError(`${where} refuses the token (${err.status})`, 'config');
      }
      throw new ProviderStartError(`${where} is unreachable: ${(err as Error).message}`, 'unavailable');
    }
    return new AzureKeyVaultProvider(settings, client);
  }

  /**
   * Key Vault names take letters, digits and - only: a namespaced name (svc.<tenant>.<instance>.<name>)
   * is spelled with - as the escape (-- for -, -u for _, -d for .), one-to-one; one longer than Key Vault
   * takes becomes svch- and the SHA-256 of the namespaced name in hex. An adopted name (no '.') is used as it is.
   */
  protected override keyName(place: KeyPlace): string {
    const name = super.keyName(place);
    if (!name.includes('.')) return name;
    const spelled = name.replace(/[-_.]/g, (char) => ({ '-': '--', _: '-u', '.': '-d' })[char as '-' | '_' | '.']);
    return spelled.length <= MAX_NAME ? spelled : `svch-${createHash('sha256').update(name).digest('hex')}`;
  }

  protected async ensureKey(name: string, algorithm: SigningAlgorithm): Promise<{ jwk: JWK; ref: string }> {
    const curve = ALGORITHM_PARAMS[algorithm].curve;
    const bundle = (await this.client.getKey(name)) ?? (await this.client.createKey(name, this.settings.hsm ? 'EC-HSM' : 'EC', curve));
    const { kty, crv, x, y, kid } = bundle.key;
    if (kty !== 'EC' && kty !== 'EC-HSM') throw new Error(`key '${name}' is of type ${kty}, not EC`);
    if (!crv || !x || !y) throw new Error(`key '${name}' has no public point`);
    return { jwk: { kty: 'EC', crv, x, y }, ref: `${name}/${versionOf(kid)}` };
  }

  protected async signRaw(ref: string, algorithm: SigningAlgorithm, data: Uint8Array): Promise<Uint8Array> {
    const [name = ref, version = ''] = ref.split('/');
    // ES256/ES384/ES512: Key Vault's names for ECDSA over the P-256/-384/-521 digest, answered as r || s.
    return this.client.sign(name, version, algorithm, digestOf(algorithm, data));
  }

  async check(): Promise<void> {
    await this.client.listOne();
  }

  async close(): Promise<void> {}
}
