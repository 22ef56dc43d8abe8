import { mutationConfig } from './base.mjs';

// dpop.ts decides every rule of a proof in DpopProofs and DpopNonces, which dpop-proof-rules.test.ts
// calls directly; the grants are reached only through the token endpoint, so the server tests of the
// flows that use them stay: the refusals at each endpoint, the code and refresh grants (with their
// rule tests in par-rules.test.ts), the wallet-instance binding of attested codes and refresh tokens,
// and the lifetime a wallet-initiated session gets when its code is redeemed.
export default mutationConfig('dpop', {
  mutate: [
    'src/issuance/access/dpop.ts',
    'src/issuance/token/authorization-code.ts',
    'src/issuance/token/refresh-token.ts',
    'src/issuance/token/grant.ts',
    'src/issuance/token/endpoint.ts',
  ],
  testFiles: [
    'test/issuance/dpop-proof-rules.test.ts',
    'test/issuance/dpop-refusals.test.ts',
    'test/issuance/authorization-code.test.ts',
    'test/issuance/wallet-attestation.test.ts',
    'test/issuance/par-rules.test.ts',
    'test/issuance/wallet-initiated.test.ts',
  ],
});
