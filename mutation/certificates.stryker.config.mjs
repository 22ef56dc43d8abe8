import { mutationConfig } from './base.mjs';

export default mutationConfig('certificates', {
  mutate: ['src/key-chains/certificates.ts', 'src/platform/crypto/x509.ts'],
  testFiles: ['test/key-chains/certificate-profile.test.ts', 'test/key-chains/key-chains.test.ts'],
});
