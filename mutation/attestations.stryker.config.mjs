import { mutationConfig } from './base.mjs';

export default mutationConfig('attestations', {
  mutate: ['src/issuance/authorization/wallet-attestation.ts', 'src/issuance/credential-request/key-attestation.ts'],
  testFiles: ['test/issuance/wallet-attestation.test.ts', 'test/issuance/key-attestation.test.ts'],
});
