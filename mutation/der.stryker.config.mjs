import { mutationConfig } from './base.mjs';

export default mutationConfig('der', {
  mutate: ['src/platform/crypto/der.ts'],
  testFiles: ['test/key-chains/der.test.ts'],
});
