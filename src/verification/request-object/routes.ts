import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import type { RequestObjects } from './endpoint.js';

const Handle = z.object({ handle: z.string() });
const tags = ['wallet: OpenID4VP'];
const JAR = 'application/oauth-authz-req+jwt';

export function requestObjectRoutes(app: App, requests: RequestObjects) {
  app.get(
    '/presentations/:handle/request',
    {
      schema: {
        tags,
        summary: 'The signed request object (JAR); it can be fetched once',
        description:
          'The request_uri of a presentation request: a JWT (application/oauth-authz-req+jwt) signed with the key chain of the request, its certificate chain in x5c, with the DCQL query, nonce, state and where to respond. With the client identifier prefix openid_federation: the key named by kid (one of the jwks of the openid_credential_verifier metadata of the entity configuration), the trust chain to a trust anchor in the trust_chain header, no client_metadata; 503 when the chain no longer resolves. A second fetch is refused (400 invalid_request).',
        params: Handle,
      },
    },
    async (request, reply) =>
      reply
        .type(JAR)
        .header('cache-control', 'no-store')
        .send(await requests.fetch(request.params.handle)),
  );

  app.post(
    '/presentations/:handle/request',
    {
      schema: {
        tags,
        summary: 'The signed request object by POST (request_uri_method=post), echoing wallet_nonce',
        description: 'As the GET, for wallets that post their capabilities and a wallet_nonce, which the signed request then carries.',
        params: Handle,
        body: z.record(z.string(), z.unknown()).nullish(),
      },
    },
    async (request, reply) => {
      const walletNonce = request.body?.wallet_nonce;
      const jwt = await requests.fetch(request.params.handle, typeof walletNonce === 'string' ? walletNonce : undefined);
      return reply.type(JAR).header('cache-control', 'no-store').send(jwt);
    },
  );
}
