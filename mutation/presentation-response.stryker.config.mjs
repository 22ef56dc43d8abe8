import { mutationConfig } from './base.mjs';

// The presentation set, part three: the response endpoints themselves (which session may answer and
// through which flow, origin and state, each presentation verified for its own query, the status
// check, completion once, the webhook). Only reachable through the server: whole presentations.
const config = mutationConfig('presentation-response', {
  mutate: ['src/verification/response/endpoint.ts', 'src/verification/response/routes.ts', 'src/verification/response/webhook.ts'],
  testFiles: [
    'test/verification/response-endpoint.test.ts',
    'test/verification/sd-jwt-presentation.test.ts',
    'test/verification/dc-api.test.ts',
    // The Annex C path (respondWith) and the response_code that releases a redirected result.
    'test/verification/annex-c.test.ts',
    'test/verification/response-code.test.ts',
    // An SD-JWT VC of a federation issuer: its status list signer is trusted through the same chain.
    'test/federation/svc-in-federation.test.ts',
  ],
});
// annex-c.test.ts serves the example page of docs/examples from the sandbox: the rest of docs stays out.
export default {
  ...config,
  ignorePatterns: [...config.ignorePatterns.filter((pattern) => pattern !== 'docs'), 'docs/*', '!docs/examples'],
};
