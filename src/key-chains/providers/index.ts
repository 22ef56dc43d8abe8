// The kinds of place where key chains' private keys may live besides the database, each a folder of
// its own with its KMS_PROVIDERS entry and its connection. A new kind is a folder and a line here.
import { awsKms } from './aws-kms/index.js';
import { azureKeyVault } from './azure-keyvault/index.js';
import { csc } from './csc/index.js';
import { gcpKms } from './gcp-kms/index.js';
import { pkcs11 } from './pkcs11/index.js';
import { vault } from './vault/index.js';

export const EXTERNAL_PROVIDER_TYPES = [pkcs11, vault, awsKms, azureKeyVault, gcpKms, csc] as const;

/** The provider type of a KMS_PROVIDERS entry's `type` (the file's schema admits no other). */
export function providerTypeOf(type: string) {
  const found = EXTERNAL_PROVIDER_TYPES.find((providerType) => providerType.settings.shape.type.value === type);
  if (!found) throw new Error(`no key provider type '${type}'`);
  return found;
}
