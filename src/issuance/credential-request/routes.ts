import { WALLET_SECURITY } from '../../platform/http/openapi.js';
import type { App } from '../../platform/http/types.js';
import { noStore, ProtocolBody, resourceRequest, TenantParams, WALLET_TAGS } from '../routes-support.js';
import type { CredentialEndpoint } from './endpoint.js';

export function credentialRoutes(app: App, publicUrl: string, credential: CredentialEndpoint) {
  app.post(
    '/issuers/:tenantId/credential',
    {
      schema: {
        tags: WALLET_TAGS,
        summary: 'Credential endpoint (jwt proofs; several proofs give a batch)',
        description:
          'JSON body with credential_configuration_id (or credential_identifier) and proofs.jwt: key proofs of type openid4vci-proof+jwt over a c_nonce from the nonce endpoint, one credential per proof. Needs the access token of the token endpoint, as a DPoP-bound token with a DPoP proof when it was issued so. Answers the credentials, or a transaction_id for deferred issuance (202).',
        params: TenantParams,
        body: ProtocolBody,
        security: WALLET_SECURITY,
      },
    },
    async (request, reply) => {
      const result = await credential.issue(resourceRequest(publicUrl, request));
      return noStore(reply).code(result.status).send(result.body);
    },
  );
}
