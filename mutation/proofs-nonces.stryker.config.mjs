import { mutationConfig } from './base.mjs';

export default mutationConfig('proofs-nonces', {
  mutate: ['src/issuance/credential-request/proofs.ts', 'src/issuance/nonce/store.ts'],
  testFiles: ['test/issuance/pre-authorized.test.ts', 'test/issuance/nonce-cleanup.test.ts', 'test/issuance/key-attestation.test.ts'],
});
