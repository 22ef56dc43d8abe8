import { mutationConfig } from './base.mjs';

export default mutationConfig('outbound-policy', {
  // The address policy, and where the outbound client applies it: the scheme and a literal address
  // (urlRefusal, refusedKind), every address a name resolves to (lookup), and redirects (request).
  mutate: ['src/platform/outbound/policy.ts', 'src/platform/outbound/client.ts:99-160'],
  testFiles: ['test/outbound/*.test.ts'],
});
