import { mutationConfig } from './base.mjs';

// The presentation set, part one: the wallet's response up to verified SD-JWT VCs (response
// decryption, vp_token, KB-JWT, transaction data, member names, Disclosures). Its tests call these
// modules directly, with credentials issued in-process by the service's own issuance code: no server.
export default mutationConfig('presentation-sd-jwt', {
  mutate: [
    'src/verification/response/decrypt.ts',
    'src/verification/response/vp-token.ts',
    'src/verification/verify-presentation.ts',
    'src/formats/sd-jwt-vc/verify.ts',
    'src/formats/sd-jwt-vc/disclosures.ts',
  ],
  testFiles: [
    'test/verification/response-payload.test.ts',
    'test/verification/sd-jwt-verification.test.ts',
    'test/verification/disclosure-references.test.ts',
  ],
});
