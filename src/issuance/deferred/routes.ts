// The deferred transaction from both sides: the integrator completes or fails it, the wallet polls it.
import { contextOf, tenantOf } from '../../platform/http/access.js';
import { WALLET_SECURITY } from '../../platform/http/openapi.js';
import type { App } from '../../platform/http/types.js';
import { noStore, ProtocolBody, resourceRequest, TenantParams, WALLET_TAGS } from '../routes-support.js';
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
        body: CompleteBody,
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

  app.post(
    '/issuers/:tenantId/deferred-credential',
    {
      schema: {
        tags: WALLET_TAGS,
        summary: 'Deferred credential endpoint',
        description:
          'JSON body with the transaction_id of a deferred issuance; answers the credentials once the issuer completed them, else issuance_pending with an interval.',
        params: TenantParams,
        body: ProtocolBody,
        security: WALLET_SECURITY,
      },
    },
    async (request, reply) => {
      const result = await deferred.retrieve(resourceRequest(publicUrl, request));
      return noStore(reply).code(result.status).send(result.body);
    },
  );
}
