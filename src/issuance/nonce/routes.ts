import type { App } from '../../platform/http/types.js';
import type { IssuerDirectory } from '../issuers.js';
import { noStore, TenantParams, WALLET_TAGS } from '../routes-support.js';
import type { NonceStore } from './store.js';

export function nonceRoutes(app: App, issuers: IssuerDirectory, nonces: NonceStore) {
  app.post(
    '/issuers/:tenantId/nonce',
    {
      schema: {
        tags: WALLET_TAGS,
        summary: 'Nonce endpoint: a fresh c_nonce for key proofs',
        description: 'Each nonce is accepted in one key proof, until it expires (issuer settings: nonceLifetimeSeconds).',
        params: TenantParams,
      },
    },
    async (request, reply) => {
      const { tenantId, settings } = await issuers.get(request.params.tenantId);
      return noStore(reply).send({ c_nonce: await nonces.issue(tenantId, 'c_nonce', settings.nonceLifetimeSeconds) });
    },
  );
}
