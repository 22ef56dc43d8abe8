// AWS KMS as a KMS_PROVIDERS entry.
import { z } from 'zod';
import { COMMON_SETTINGS, type ExternalProviderType, Value } from '../settings.js';

const settings = z
  .strictObject({
    ...COMMON_SETTINGS,
    type: z.literal('aws-kms'),
    region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be an AWS region such as eu-central-1'),
    endpoint: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe("another endpoint than the region's (a VPC endpoint)"),
    accessKeyId: Value.optional().describe("without it and secretAccessKey: the AWS SDK's default credential chain"),
    secretAccessKey: Value.optional(),
  })
  .superRefine((entry, ctx) => {
    if ((entry.accessKeyId === undefined) !== (entry.secretAccessKey === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['accessKeyId'], message: 'set both accessKeyId and secretAccessKey, or neither' });
    }
  });

export const awsKms: ExternalProviderType<typeof settings> = {
  settings,
  async connect(entry, { secretOf, outbound }) {
    const credentials =
      entry.accessKeyId && entry.secretAccessKey
        ? { accessKeyId: secretOf(entry.accessKeyId, 'accessKeyId'), secretAccessKey: secretOf(entry.secretAccessKey, 'secretAccessKey') }
        : undefined;
    // The AWS SDK is loaded only when an AWS KMS provider is configured.
    const { AwsKmsKeyProvider } = await import('./provider.js');
    return AwsKmsKeyProvider.connect(
      { id: entry.id, adopt: entry.adopt, region: entry.region, endpoint: entry.endpoint, credentials },
      outbound,
    );
  },
};
