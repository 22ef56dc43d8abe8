import { mutationConfig } from './base.mjs';

// Both modules decide everything in functions a test can call directly (verifyKeyAttestation,
// WalletAttestations.check), so their rule tests run without a server; the flows that carry them are
// tested through the server in key-attestation.test.ts and wallet-attestation.test.ts.
export default mutationConfig('attestations', {
  mutate: ['src/issuance/authorization/wallet-attestation.ts', 'src/issuance/credential-request/key-attestation.ts'],
  testFiles: ['test/issuance/wallet-attestation-rules.test.ts', 'test/issuance/key-attestation-rules.test.ts'],
});
