// Azure Key Vault as a KMS_PROVIDERS entry.
import { z } from 'zod';
import { COMMON_SETTINGS, type ExternalProviderType, Value } from '../settings.js';

/** Azure IMDS's token endpoint: every VM, App Service and AKS pod with a managed identity has it. */
export const IMDS_TOKEN_ENDPOINT = 'http://169.254.169.254/metadata/identity/oauth2/token';

const settings = z
  .strictObject({
    ...COMMON_SETTINGS,
    type: z.literal('azure-keyvault'),
    vaultUrl: z.url({ protocol: /^https?$/ }).describe('the vault, e.g. https://svc-keys.vault.azure.net'),
    hsm: z.boolean().default(false).describe('make keys of type EC-HSM (Premium vault or Managed HSM) instead of EC'),
    tenantId: z
      .string()
      .regex(/^[A-Za-z0-9.-]{1,100}$/, 'must be a Microsoft Entra tenant id or domain')
      .optional()
      .describe('with clientId and clientSecret: client credentials; without them: the managed identity'),
    clientId: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,100}$/, 'must be an application (client) id')
      .optional()
      .describe("the app registration's id; without clientSecret: the user-assigned managed identity to use"),
    clientSecret: Value.optional(),
    authorityUrl: z
      .url({ protocol: /^https?$/ })
      .default('https://login.microsoftonline.com')
      .describe('Microsoft Entra (another cloud)'),
    identityEndpoint: z
      .url({ protocol: /^https?$/ })
      .default(IMDS_TOKEN_ENDPOINT)
      .describe("the managed identity's token endpoint (IMDS)"),
  })
  .superRefine((entry, ctx) => {
    if ((entry.tenantId === undefined) !== (entry.clientSecret === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['clientSecret'],
        message: 'set tenantId, clientId and clientSecret together, or only clientId or none',
      });
    } else if (entry.clientSecret !== undefined && entry.clientId === undefined) {
      ctx.addIssue({ code: 'custom', path: ['clientId'], message: 'is required with clientSecret' });
    }
  });

export const azureKeyVault: ExternalProviderType<typeof settings> = {
  settings,
  async connect(entry, { secretOf, outbound }) {
    const credentials =
      entry.tenantId && entry.clientId && entry.clientSecret
        ? {
            kind: 'client-secret' as const,
            authorityUrl: entry.authorityUrl,
            tenantId: entry.tenantId,
            clientId: entry.clientId,
            clientSecret: secretOf(entry.clientSecret, 'clientSecret'),
          }
        : { kind: 'managed-identity' as const, endpoint: entry.identityEndpoint, clientId: entry.clientId };
    const { AzureKeyVaultProvider } = await import('./provider.js');
    return AzureKeyVaultProvider.connect(
      { id: entry.id, adopt: entry.adopt, vaultUrl: entry.vaultUrl, hsm: entry.hsm, credentials },
      outbound,
    );
  },
};
