import { mutationConfig } from './base.mjs';

export default mutationConfig('trust', {
  mutate: [
    'src/federation/trust.ts',
    'src/trust-lists/trusted.ts',
    'src/platform/crypto/certificate-chains.ts',
    'src/verification/formats/issuer-trust.ts',
  ],
  testFiles: ['test/federation/trust-chain.test.ts', 'test/trust-lists/trust-lists.test.ts', 'test/verification/*.test.ts'],
});
