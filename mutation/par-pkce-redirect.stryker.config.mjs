import { mutationConfig } from './base.mjs';

// PAR, PKCE and the redirect_uri rule are reached only through the server (the endpoints need the
// sessions, issuers and configurations), so the set runs the server tests of the authorization code
// flow and of wallet-initiated requests; the redirect_uri rule is the function redirectUriRefusal.
export default mutationConfig('par-pkce-redirect', {
  mutate: [
    'src/issuance/authorization/par.ts',
    'src/issuance/authorization/authorize.ts',
    'src/issuance/authorization/schemas.ts:52-79',
  ],
  testFiles: ['test/issuance/authorization-code.test.ts', 'test/issuance/wallet-initiated.test.ts'],
});
