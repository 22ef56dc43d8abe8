import { mutationConfig } from './base.mjs';

// The presentation set, part three: the response endpoints themselves (which session may answer and
// through which flow, origin and state, each presentation verified for its own query, the status
// check, completion once, the webhook). Only reachable through the server: whole presentations.
export default mutationConfig('presentation-response', {
  mutate: ['src/verification/response/endpoint.ts', 'src/verification/response/routes.ts', 'src/verification/response/webhook.ts'],
  testFiles: [
    'test/verification/response-endpoint.test.ts',
    'test/verification/sd-jwt-presentation.test.ts',
    'test/verification/dc-api.test.ts',
    // The Annex C path (respondWith) and the response_code that releases a redirected result.
    'test/verification/annex-c.test.ts',
    'test/verification/response-code.test.ts',
  ],
});
