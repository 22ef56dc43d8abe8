import { mutationConfig } from './base.mjs';

export default mutationConfig('federation-policy', {
  mutate: ['src/trust/federation/policy.ts'],
  testFiles: [
    'test/federation/metadata-policy.test.ts',
    'test/federation/prototype-members.test.ts',
    'test/federation/trust-chain.test.ts',
  ],
});
