// MASTER_KEY_PROVIDER=aws-kms: AWS KMS encrypts and decrypts the data key under a symmetric key
// (MASTER_KEY_ID: key id, ARN or alias/<name>; KeyUsage ENCRYPT_DECRYPT). Through the official
// client, loaded only for this source, whose HTTP requests go through the operator's outbound
// client as the key chains' AWS KMS provider's do. Automatic key rotation in KMS needs nothing here.
import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { CREDENTIAL_ERRORS, outboundHandler } from '../../key-chains/providers/aws-kms/provider.js';
import type { OutboundClient } from '../outbound/client.js';
import { type MasterKeySource, MasterKeySourceError } from './source.js';

export interface AwsKmsSettings {
  keyId: string;
  region: string;
  endpoint?: string;
  /** Absent: the SDK's default chain (environment, shared files, web identity, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

/** Answers that name the key or the value as the fault: the key is wrong, missing, disabled or not allowed. */
const KEY_ERRORS = new Set([
  'InvalidCiphertextException',
  'IncorrectKeyException',
  'NotFoundException',
  'DisabledException',
  'InvalidKeyUsageException',
  'KMSInvalidStateException',
  'ValidationException',
]);

export function awsKmsSource(settings: AwsKmsSettings, outbound: OutboundClient): MasterKeySource {
  const client = new KMSClient({
    region: settings.region,
    ...(settings.endpoint && { endpoint: settings.endpoint }),
    ...(settings.credentials && { credentials: settings.credentials }),
    requestHandler: outboundHandler(outbound),
    maxAttempts: 2,
  });
  const where = `AWS KMS (${settings.endpoint ?? `region ${settings.region}`}), key ${settings.keyId}`;
  const failure = (action: string, err: unknown) => {
    const name = (err as Error).name;
    if (CREDENTIAL_ERRORS.has(name) || KEY_ERRORS.has(name)) {
      return new MasterKeySourceError(`${where}: ${action} refused (${name}): ${(err as Error).message}`, 'config');
    }
    return new MasterKeySourceError(`${where}: unreachable: ${(err as Error).message}`, 'unavailable');
  };
  return {
    name: `aws-kms:${settings.keyId}`,
    async wrap(dataKey) {
      try {
        const answer = await client.send(new EncryptCommand({ KeyId: settings.keyId, Plaintext: dataKey }));
        if (!answer.CiphertextBlob) throw new MasterKeySourceError(`${where}: Encrypt answered without a ciphertext`, 'unavailable');
        return Buffer.from(answer.CiphertextBlob).toString('base64');
      } catch (err) {
        throw err instanceof MasterKeySourceError ? err : failure('Encrypt', err);
      }
    },
    async unwrap(wrapped) {
      try {
        // KeyId as well: KMS refuses a value that another key wrapped instead of opening it with that key.
        const answer = await client.send(new DecryptCommand({ KeyId: settings.keyId, CiphertextBlob: Buffer.from(wrapped, 'base64') }));
        if (!answer.Plaintext) throw new MasterKeySourceError(`${where}: Decrypt answered without a plaintext`, 'unavailable');
        return Buffer.from(answer.Plaintext);
      } catch (err) {
        throw err instanceof MasterKeySourceError ? err : failure('Decrypt', err);
      }
    },
  };
}
