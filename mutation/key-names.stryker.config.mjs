import { mutationConfig } from './base.mjs';

export default mutationConfig('key-names', {
  mutate: ['src/key-chains/key-names.ts'],
  testFiles: ['test/key-chains/tenant-key-names.test.ts', 'test/key-chains/pkcs11.test.ts', 'test/key-chains/vault.test.ts'],
});
