import { mutationConfig } from './base.mjs';

// The presentation set, part two: mso_mdoc DeviceResponses (structure, session transcript, issuer
// trust, claims, status reference) and the DCQL query over what was verified. Direct tests, no server.
export default mutationConfig('presentation-mdoc-dcql', {
  mutate: ['src/formats/mso-mdoc/verify.ts', 'src/verification/dcql/*.ts'],
  testFiles: ['test/verification/mdoc-verification.test.ts', 'test/verification/dcql-check.test.ts'],
});
