// Google Cloud KMS as a KMS_PROVIDERS entry.
import { z } from 'zod';
import { parseOutsideJson } from '../../../platform/json.js';
import { COMMON_SETTINGS, type ExternalProviderType, Value } from '../settings.js';
import { ProviderStartError } from '../start-error.js';
import type { GcpCredentials } from './rest.js';

/** The metadata server of Compute Engine, Cloud Run and GKE (Workload Identity). */
export const METADATA_SERVER = 'http://metadata.google.internal';

const settings = z.strictObject({
  ...COMMON_SETTINGS,
  type: z.literal('gcp-kms'),
  keyRing: z
    .string()
    .regex(
      /^projects\/[a-z][a-z0-9-]{4,28}[a-z0-9]\/locations\/[a-z0-9-]{1,63}\/keyRings\/[A-Za-z0-9_-]{1,63}$/,
      'must be projects/<project>/locations/<location>/keyRings/<key ring>',
    )
    .describe('the key ring the keys are made in'),
  protectionLevel: z.enum(['SOFTWARE', 'HSM']).default('SOFTWARE').describe('of the keys svc makes: SOFTWARE, or HSM (Cloud HSM)'),
  endpoint: z
    .url({ protocol: /^https?$/ })
    .default('https://cloudkms.googleapis.com')
    .describe('another endpoint than cloudkms.googleapis.com (Private Service Connect)'),
  serviceAccountKey: Value.optional().describe("a service account key file's JSON; without it: the metadata server's service account"),
  metadataServer: z
    .url({ protocol: /^https?$/ })
    .default(METADATA_SERVER)
    .describe('the metadata server (without serviceAccountKey)'),
});

export const gcpKms: ExternalProviderType<typeof settings> = {
  settings,
  async connect(entry, { secretOf, outbound }) {
    const { GcpKmsKeyProvider } = await import('./provider.js');
    const { ServiceAccountKey, serviceAccountCredentials } = await import('./rest.js');
    let credentials: GcpCredentials = { kind: 'metadata', endpoint: entry.metadataServer };
    if (entry.serviceAccountKey !== undefined) {
      const text = secretOf(entry.serviceAccountKey, 'serviceAccountKey');
      let json: unknown;
      try {
        json = parseOutsideJson(text);
      } catch {
        throw new ProviderStartError('serviceAccountKey: is not JSON (a service account key file)', 'config');
      }
      const parsed = ServiceAccountKey.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new ProviderStartError(`serviceAccountKey: ${issue?.path.join('.')}: ${issue?.message}`, 'config');
      }
      try {
        credentials = serviceAccountCredentials(parsed.data);
      } catch {
        throw new ProviderStartError('serviceAccountKey: private_key: is not a private key svc can read', 'config');
      }
    }
    return GcpKmsKeyProvider.connect(
      {
        id: entry.id,
        adopt: entry.adopt,
        keyRing: entry.keyRing,
        endpoint: entry.endpoint,
        protectionLevel: entry.protectionLevel,
        credentials,
      },
      outbound,
    );
  },
};
