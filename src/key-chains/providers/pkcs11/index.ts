// PKCS#11 tokens (an HSM, or SoftHSM2) as a KMS_PROVIDERS entry.
import { z } from 'zod';
import { COMMON_SETTINGS, type ExternalProviderType, Value } from '../settings.js';

const settings = z.strictObject({
  ...COMMON_SETTINGS,
  type: z.literal('pkcs11'),
  module: z.string().min(1).describe("path of the PKCS#11 library, e.g. SoftHSM2's /usr/lib/softhsm/libsofthsm2.so"),
  tokenLabel: z.string().min(1).max(32),
  pin: Value,
  sessions: z.number().int().min(1).max(64).optional().describe('sessions for concurrent signatures, default 4'),
});

export const pkcs11: ExternalProviderType<typeof settings> = {
  settings,
  async connect(entry, { secretOf }) {
    const pin = secretOf(entry.pin, 'pin');
    // Loaded only when a PKCS#11 provider is configured: koffi and the module are never read otherwise.
    const { Pkcs11KeyProvider } = await import('./provider.js');
    return Pkcs11KeyProvider.connect({ ...entry, pin });
  },
};
