// A qualified trust service provider's remote signing (Cloud Signature Consortium API v2.0) as a
// KMS_PROVIDERS entry.
import { z } from 'zod';
import { COMMON_SETTINGS, type ExternalProviderType, Value } from '../settings.js';

const settings = z.strictObject({
  ...COMMON_SETTINGS,
  type: z.literal('csc'),
  url: z
    .url({ protocol: /^https?$/ })
    .describe("the QTSP's CSC base URI (the API is at <url>/csc/v2/, the token endpoint at <url>/oauth2/token unless info names another)"),
  clientId: z.string().min(1).describe("svc's OAuth 2.0 client at the QTSP (client credentials grant)"),
  clientSecret: Value,
  scope: z.string().min(1).default('service').describe('scope of the client credentials token, default service'),
});

export const csc: ExternalProviderType<typeof settings> = {
  settings,
  async connect(entry, { secretOf, outbound }) {
    const clientSecret = secretOf(entry.clientSecret, 'clientSecret');
    const { CscKeyProvider } = await import('./provider.js');
    return CscKeyProvider.connect({ ...entry, clientSecret }, outbound);
  },
};
