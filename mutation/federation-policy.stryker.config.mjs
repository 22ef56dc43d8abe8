import { mutationConfig } from './base.mjs';

export default mutationConfig('federation-policy', {
  mutate: ['src/federation/policy.ts'],
  // Not yet test/federation/trust-chain.test.ts: its tests fail when run without the file's first one,
  // and Stryker runs only the tests covering a mutant, so every mutant they cover would count as killed
  // (112 of 186 kills on c77a461). Add it once each of its tests passes alone.
  testFiles: ['test/federation/metadata-policy.test.ts', 'test/federation/prototype-members.test.ts'],
});
