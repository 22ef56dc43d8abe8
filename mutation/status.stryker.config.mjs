import { mutationConfig } from './base.mjs';

export default mutationConfig('status', {
  mutate: ['src/verification/status/*.ts'],
  // The checker's own tests, with a reader that serves the tokens each case needs: every refusal,
  // entry size and caching rule. status.test.ts and mdoc-status.test.ts (whole presentations through
  // servers, several per file) took about 40 minutes per run here and add no rule these do not check.
  testFiles: ['test/verification/status-checker.test.ts'],
});
