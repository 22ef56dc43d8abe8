// The deferred transaction from both sides: the integrator completes or fails it, the wallet polls it.
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { contextOf, tenantOf } from '../../platform/http/access.js';
import { withExample } from '../../platform/http/examples.js';
import { WALLET_SECURITY } from '../../platform/http/openapi.js';
import type { App } from '../../platform/http/types.js';
import { acceptEncryptedBodies, encryptedBodyOf } from '../credential-request/encryption.js';
import { ENCRYPTION_DESCRIPTION, sendWalletAnswer } from '../credential-request/routes.js';
import { ProtocolBody, resourceRequest, TenantParams, WALLET_TAGS } from '../routes-support.js';
import { CompleteBody, DeferredResult, TransactionParams } from './schemas.js';
import type { DeferredService } from './service.js';

const tags = ['issuance'];
const manage = { roles: ['issuance:manage'], tenant: 'required' } as const;

export function deferredRoutes(app: App, publicUrl: string, deferred: DeferredService) {
  app.post(
    '/api/issuer/deferred/:transactionId/complete',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Supply the claims of a pending deferred transaction; the credential becomes ready',
        params: TransactionParams,
        body: withExample(CompleteBody, { claims: { given_name: 'Erika', family_name: 'Mustermann' } }),
        response: { 200: DeferredResult },
      },
    },
    (request) => deferred.complete(contextOf(request), tenantOf(request), request.params.transactionId, request.body.claims),
  );

  app.post(
    '/api/issuer/deferred/:transactionId/fail',
    {
      config: { access: manage },
      schema: {
        tags,
        summary: 'Fail a pending deferred transaction; the wallet then gets invalid_transaction_id',
        params: TransactionParams,
        response: { 200: DeferredResult },
      },
    },
    (request) => deferred.fail(contextOf(request), tenantOf(request), request.params.transactionId),
  );

  // Its own plugin scope, so that application/jwt (encrypted) bodies are taken here and at the credential endpoint only.
  app.register(async (plugin) => {
    acceptEncryptedBodies(plugin);
    plugin.withTypeProvider<ZodTypeProvider>().post(
      '/issuers/:tenantId/deferred-credential',
      {
        schema: {
          tags: WALLET_TAGS,
          summary: 'Deferred credential endpoint (optionally encrypted)',
          description: `JSON body with the transaction_id of a deferred issuance; answers the credentials once the issuer completed them (200), else the transaction_id again with an interval (202). The response encryption of the original credential request does not carry over: each deferred request asks for its own. ${ENCRYPTION_DESCRIPTION}`,
          params: TenantParams,
          body: ProtocolBody,
          consumes: ['application/json', 'application/jwt'],
          produces: ['application/json', 'application/jwt'],
          security: WALLET_SECURITY,
        },
      },
      async (request, reply) =>
        sendWalletAnswer(reply, await deferred.retrieve(resourceRequest(publicUrl, request), encryptedBodyOf(request))),
    );
  });
}
