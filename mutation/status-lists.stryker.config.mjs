import { mutationConfig } from './base.mjs';

export default mutationConfig('status-lists', {
  mutate: ['src/status-lists/bitset.ts', 'src/status-lists/token.ts'],
  testFiles: ['test/status-lists/*.test.ts'],
});
