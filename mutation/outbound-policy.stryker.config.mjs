import { mutationConfig } from './base.mjs';

export default mutationConfig('outbound-policy', {
  mutate: ['src/platform/http/outbound-policy.ts'],
  testFiles: ['test/outbound/*.test.ts'],
});
