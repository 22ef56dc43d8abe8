// Keys in HashiCorp Vault's Transit secrets engine: one named transit key per key of a chain (type
// ecdsa-p256/-p384/-p521, not exportable), created there when missing. Vault signs; svc reads the
// public key once, when the key is taken into a chain. A key is pinned to the version read then
// (the stored reference is name:version), so a key rotated inside Vault never signs for a
// certificate made for its earlier version. Calls go through the operator's outbound client.
import { createPublicKey } from 'node:crypto';
import type { JWK } from 'jose';
import { z } from 'zod';
import type { SigningAlgorithm } from '../../../platform/crypto/algorithms.js';
import { jsonObjectOf, type OutboundClient, type OutboundResponse, readAnswer } from '../../../platform/outbound/client.js';
import { ExternalKeyProvider } from '../external.js';
import type { Adoptions } from '../key-names.js';
import type { ProviderCapabilities } from '../key-provider.js';
import { ProviderStartError } from '../start-error.js';

export interface VaultSettings {
  id: string;
  adopt: Adoptions;
  url: string;
  token: string;
  mount: string;
}

const KEY_TYPE: Record<SigningAlgorithm, string> = { ES256: 'ecdsa-p256', ES384: 'ecdsa-p384', ES512: 'ecdsa-p521' };
const HASH: Record<SigningAlgorithm, string> = { ES256: 'sha2-256', ES384: 'sha2-384', ES512: 'sha2-512' };
const TIMEOUT_MS = 10_000;

const KeyAnswer = z.object({
  data: z.object({
    type: z.string(),
    latest_version: z.number().int(),
    keys: z.record(z.string(), z.object({ public_key: z.string() }).loose()),
  }),
});
const SignAnswer = z.object({ data: z.object({ signature: z.string().regex(/^vault:v\d+:/, 'must be vault:v<version>:<signature>') }) });

export class VaultKeyProvider extends ExternalKeyProvider {
  readonly type = 'vault';
  readonly capabilities: ProviderCapabilities = { generate: true, import: false, algorithms: ['ES256', 'ES384', 'ES512'], decrypt: false };

  private constructor(
    private readonly settings: VaultSettings,
    private readonly outbound: OutboundClient,
  ) {
    super(settings.id, settings.adopt);
  }

  /** Asks Vault who the token is: an answer means Vault is reachable and the token valid. */
  static async connect(settings: VaultSettings, outbound: OutboundClient): Promise<VaultKeyProvider> {
    const provider = new VaultKeyProvider(settings, outbound);
    let reply: OutboundResponse;
    try {
      reply = await provider.call('GET', '/v1/auth/token/lookup-self');
    } catch (err) {
      throw new ProviderStartError(`Vault at ${settings.url} is unreachable: ${(err as Error).message}`, 'unavailable');
    }
    if (reply.status === 403) throw new ProviderStartError(`Vault at ${settings.url} refuses the token (403)`, 'config');
    if (!reply.ok) throw new ProviderStartError(`Vault at ${settings.url} answered ${reply.status}${vaultErrors(reply)}`, 'unavailable');
    return provider;
  }

  private call(method: 'GET' | 'POST', path: string, body?: unknown) {
    return this.outbound.request(new URL(path, `${this.settings.url.replace(/\/+$/, '')}/`), {
      method,
      headers: {
        'x-vault-token': this.settings.token,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      timeoutMs: TIMEOUT_MS,
    });
  }

  private keyPath(name: string, action: 'keys' | 'sign') {
    return `/v1/${this.settings.mount}/${action}/${encodeURIComponent(name)}`;
  }

  private async readKey(name: string) {
    const reply = await this.call('GET', this.keyPath(name, 'keys'));
    if (reply.status === 404) return undefined;
    if (!reply.ok) throw new Error(`reading transit key '${name}': Vault answered ${reply.status}${vaultErrors(reply)}`);
    const read = readAnswer(KeyAnswer, jsonObjectOf(reply));
    if ('wrong' in read) throw new Error(`reading transit key '${name}': the answer is not a transit key (${read.wrong})`);
    return read.value.data;
  }

  protected async ensureKey(name: string, algorithm: SigningAlgorithm): Promise<{ jwk: JWK; ref: string }> {
    let key = await this.readKey(name);
    if (!key) {
      const made = await this.call('POST', this.keyPath(name, 'keys'), { type: KEY_TYPE[algorithm], exportable: false });
      if (!made.ok) throw new Error(`creating transit key '${name}': Vault answered ${made.status}${vaultErrors(made)}`);
      key = await this.readKey(name);
      if (!key) throw new Error(`transit key '${name}' was created but cannot be read`);
    }
    if (key.type !== KEY_TYPE[algorithm]) throw new Error(`transit key '${name}' is of type ${key.type}, not ${KEY_TYPE[algorithm]}`);
    const version = key.latest_version;
    const pem = key.keys[String(version)]?.public_key;
    if (!pem) throw new Error(`transit key '${name}' has no public key for version ${version}`);
    const jwk = createPublicKey(pem).export({ format: 'jwk' }) as JWK;
    return { jwk, ref: `${name}:${version}` };
  }

  protected async signRaw(ref: string, algorithm: SigningAlgorithm, data: Uint8Array): Promise<Uint8Array> {
    const [name = ref, version] = ref.split(':');
    const reply = await this.call('POST', this.keyPath(name, 'sign'), {
      input: Buffer.from(data).toString('base64'),
      hash_algorithm: HASH[algorithm],
      // jws: the signature is r || s in base64url, as JOSE and COSE want it (not DER).
      marshaling_algorithm: 'jws',
      ...(version && { key_version: Number(version) }),
    });
    if (!reply.ok) throw new Error(`Vault answered ${reply.status}${vaultErrors(reply)}`);
    const read = readAnswer(SignAnswer, jsonObjectOf(reply));
    if ('wrong' in read) throw new Error(`Vault's answer is not a signature (${read.wrong})`);
    return Buffer.from(read.value.data.signature.replace(/^vault:v\d+:/, ''), 'base64url');
  }

  async check(): Promise<void> {
    const reply = await this.call('GET', '/v1/auth/token/lookup-self');
    if (!reply.ok) throw new Error(`Vault answered ${reply.status}${vaultErrors(reply)}`);
  }

  async close(): Promise<void> {}
}

/** Vault's own words for a failure ({"errors": [...]}), shortened. */
export function vaultErrors(reply: OutboundResponse): string {
  const errors = jsonObjectOf(reply)?.errors;
  if (!Array.isArray(errors) || errors.length === 0) return '';
  return `: ${errors.map(String).join('; ').slice(0, 200)}`;
}
