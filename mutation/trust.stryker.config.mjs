import { mutationConfig } from './base.mjs';

export default mutationConfig('trust', {
  mutate: [
    'src/trust/federation/trust.ts',
    'src/trust-lists/trusted.ts',
    'src/platform/crypto/certificate-chains.ts',
    'src/formats/sd-jwt-vc/issuer-trust.ts',
    'src/trust/index.ts',
    'src/trust/lote/index.ts',
    'src/trust/federation/framework.ts',
  ],
  // Focused tests, one per mutated file: only trusted-certificates.test.ts starts a server (the trust
  // lists live in the database). The whole presentation flows are the presentation set's.
  testFiles: [
    'test/federation/federation-trust.test.ts',
    'test/trust-lists/trusted-certificates.test.ts',
    'test/platform/certificate-chains.test.ts',
    'test/verification/issuer-trust.test.ts',
    'test/trust/trust-service.test.ts',
  ],
});
