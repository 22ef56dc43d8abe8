// HashiCorp Vault's Transit secrets engine as a KMS_PROVIDERS entry.
import { z } from 'zod';
import { COMMON_SETTINGS, type ExternalProviderType, Value } from '../settings.js';

const settings = z.strictObject({
  ...COMMON_SETTINGS,
  type: z.literal('vault'),
  url: z.url({ protocol: /^https?$/ }).describe('Vault address, e.g. https://vault.internal:8200'),
  token: Value,
  mount: z
    .string()
    .regex(/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/, 'must be a path of letters, digits, _ and -')
    .default('transit'),
});

export const vault: ExternalProviderType<typeof settings> = {
  settings,
  async connect(entry, { secretOf, outbound }) {
    const token = secretOf(entry.token, 'token');
    const { VaultKeyProvider } = await import('./provider.js');
    return VaultKeyProvider.connect({ ...entry, token }, outbound);
  },
};
