import { mutationConfig } from './base.mjs';

export default mutationConfig('dpop', {
  mutate: [
    'src/issuance/access/dpop.ts',
    'src/issuance/token/authorization-code.ts',
    'src/issuance/token/refresh-token.ts',
    'src/issuance/token/grant.ts',
    'src/issuance/token/endpoint.ts',
  ],
  testFiles: [
    'test/issuance/dpop-refusals.test.ts',
    'test/issuance/authorization-code.test.ts',
    'test/issuance/pre-authorized.test.ts',
    'test/issuance/haip-flow.test.ts',
    'test/invariants/tokens.test.ts',
  ],
});
