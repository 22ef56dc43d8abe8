// MASTER_KEY_PROVIDER=vault-transit: HashiCorp Vault's Transit engine encrypts and decrypts the data
// key under a named key (MASTER_KEY_ID, type aes256-gcm96; Vault makes it at the first encrypt when
// the token may). The key never leaves Vault; its own rotation (POST keys/<name>/rotate) needs
// nothing here, as Vault decrypts under every version it keeps. Calls go through the operator's
// outbound client, as the key chains' Vault provider's do, and read Vault's errors the same way.
import { z } from 'zod';
import { vaultErrors } from '../../key-chains/providers/vault/provider.js';
import { jsonObjectOf, type OutboundClient, type OutboundResponse, readAnswer } from '../outbound/client.js';
import { type MasterKeySource, MasterKeySourceError } from './source.js';

export interface VaultTransitSettings {
  url: string;
  token: string;
  mount: string;
  keyName: string;
}

const TIMEOUT_MS = 10_000;
const EncryptAnswer = z.object({
  data: z.object({ ciphertext: z.string().regex(/^vault:v\d+:/, 'must be vault:v<version>:<ciphertext>') }),
});
const DecryptAnswer = z.object({ data: z.object({ plaintext: z.string() }) });

export function vaultTransitSource(settings: VaultTransitSettings, outbound: OutboundClient): MasterKeySource {
  const where = `Vault at ${settings.url}, transit key '${settings.keyName}' (${settings.mount})`;
  const call = async (action: 'encrypt' | 'decrypt', body: unknown): Promise<OutboundResponse> => {
    const path = `v1/${settings.mount}/${action}/${encodeURIComponent(settings.keyName)}`;
    let reply: OutboundResponse;
    try {
      reply = await outbound.request(new URL(path, `${settings.url.replace(/\/+$/, '')}/`), {
        method: 'POST',
        headers: { 'x-vault-token': settings.token, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        timeoutMs: TIMEOUT_MS,
      });
    } catch (err) {
      throw new MasterKeySourceError(`${where}: unreachable: ${(err as Error).message}`, 'unavailable');
    }
    // 403: the token is refused or may not use the key; 400: the key is missing or does not open the
    // value (Vault's "cipher: message authentication failed"): both the operator's to fix.
    if (reply.status === 403) throw new MasterKeySourceError(`${where}: the token is refused (403)${vaultErrors(reply)}`, 'config');
    if (reply.status === 400 || reply.status === 404) {
      throw new MasterKeySourceError(`${where}: ${action} refused (${reply.status})${vaultErrors(reply)}`, 'config');
    }
    if (!reply.ok) throw new MasterKeySourceError(`${where}: answered ${reply.status}${vaultErrors(reply)}`, 'unavailable');
    return reply;
  };
  return {
    name: `vault-transit:${settings.keyName}`,
    async wrap(dataKey) {
      const read = readAnswer(EncryptAnswer, jsonObjectOf(await call('encrypt', { plaintext: dataKey.toString('base64') })));
      if ('wrong' in read)
        throw new MasterKeySourceError(`${where}: the answer to encrypt is not a ciphertext (${read.wrong})`, 'unavailable');
      return read.value.data.ciphertext;
    },
    async unwrap(wrapped) {
      const read = readAnswer(DecryptAnswer, jsonObjectOf(await call('decrypt', { ciphertext: wrapped })));
      if ('wrong' in read)
        throw new MasterKeySourceError(`${where}: the answer to decrypt is not a plaintext (${read.wrong})`, 'unavailable');
      return Buffer.from(read.value.data.plaintext, 'base64');
    },
  };
}
