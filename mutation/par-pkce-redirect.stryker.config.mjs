import { mutationConfig } from './base.mjs';

// PAR, PKCE and the redirect_uri rule are reached only through the server (the endpoints need the
// sessions, issuers and configurations): par-rules.test.ts tests each rule with one server, and
// wallet-initiated.test.ts the requests without an offer. The redirect_uri rule is redirectUriRefusal.
export default mutationConfig('par-pkce-redirect', {
  mutate: ['src/issuance/authorization/par.ts', 'src/issuance/authorization/authorize.ts', 'src/issuance/authorization/schemas.ts:52-79'],
  testFiles: ['test/issuance/par-rules.test.ts', 'test/issuance/wallet-initiated.test.ts'],
});
