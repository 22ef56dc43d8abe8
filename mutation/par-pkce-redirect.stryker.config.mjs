import { mutationConfig } from './base.mjs';

export default mutationConfig('par-pkce-redirect', {
  mutate: ['src/issuance/authorization/par.ts', 'src/issuance/authorization/authorize.ts'],
  testFiles: ['test/issuance/authorization-code.test.ts', 'test/issuance/wallet-initiated.test.ts', 'test/invariants/issuance.test.ts'],
});
