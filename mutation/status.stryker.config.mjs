import { mutationConfig } from './base.mjs';

export default mutationConfig('status', {
  mutate: ['src/verification/status/*.ts'],
  testFiles: ['test/verification/status.test.ts', 'test/verification/mdoc-status.test.ts'],
});
