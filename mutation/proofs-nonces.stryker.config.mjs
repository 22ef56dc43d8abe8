import { mutationConfig } from './base.mjs';

// checkKeyProofs decides every rule of a key proof and NonceStore every once-only value, both
// callable directly: their rule tests (one server, for its database) make the set fast. The
// credential endpoint that spends the c_nonce is tested through the server in pre-authorized.test.ts
// and key-attestation.test.ts, and under concurrency in test/invariants/tokens.test.ts.
export default mutationConfig('proofs-nonces', {
  mutate: ['src/issuance/credential-request/proofs.ts', 'src/issuance/nonce/store.ts'],
  testFiles: ['test/issuance/key-proof-rules.test.ts', 'test/issuance/nonce-store.test.ts'],
});
