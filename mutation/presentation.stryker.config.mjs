import { mutationConfig } from './base.mjs';

export default mutationConfig('presentation', {
  mutate: ['src/verification/response/*.ts', 'src/verification/formats/*.ts', 'src/verification/dcql/*.ts'],
  testFiles: ['test/verification/*.test.ts', 'test/invariants/verification.test.ts'],
});
