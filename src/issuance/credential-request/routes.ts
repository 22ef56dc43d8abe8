import type { FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { WALLET_SECURITY } from '../../platform/http/openapi.js';
import type { App } from '../../platform/http/types.js';
import { noStore, ProtocolBody, resourceRequest, TenantParams, WALLET_TAGS } from '../routes-support.js';
import { acceptEncryptedBodies, encryptedBodyOf, MAX_ENCRYPTED_REQUEST_BYTES, type WalletAnswer } from './encryption.js';
import type { CredentialEndpoint } from './endpoint.js';

/** What the credential and deferred credential endpoints say about encryption in their descriptions. */
export const ENCRYPTION_DESCRIPTION = `The request may instead be encrypted (Content-Type application/jwt, at most ${MAX_ENCRYPTED_REQUEST_BYTES / 1024} KiB): a compact JWE with alg ECDH-ES, enc A128GCM or A256GCM and the kid of the key in credential_request_encryption of the issuer metadata, whose payload is the JSON request. Only an encrypted request may carry credential_response_encryption ({jwk: a public EC key with alg ECDH-ES, enc: A128GCM or A256GCM}); the success answer (200 or 202) is then a JWE to that key (application/jwt), errors stay JSON. When the issuer setting credentialEncryptionRequired is on, plain requests and requests without credential_response_encryption are refused with invalid_encryption_parameters.`;

export const sendWalletAnswer = (reply: FastifyReply, answer: WalletAnswer) =>
  noStore(reply).code(answer.status).type(answer.contentType).send(answer.body);

export function credentialRoutes(app: App, publicUrl: string, credential: CredentialEndpoint) {
  // Its own plugin scope, so that application/jwt bodies are taken here (and at the deferred
  // credential endpoint) and nowhere else.
  app.register(async (plugin) => {
    acceptEncryptedBodies(plugin);
    plugin.withTypeProvider<ZodTypeProvider>().post(
      '/issuers/:tenantId/credential',
      {
        schema: {
          tags: WALLET_TAGS,
          summary: 'Credential endpoint (jwt or attestation proofs; several keys give a batch; optionally encrypted)',
          description: `JSON body with credential_configuration_id (or credential_identifier) and proofs, exactly one proof type: jwt, key proofs of type openid4vci-proof+jwt over a c_nonce from the nonce endpoint, one credential per proof key; or attestation, one key attestation (typ key-attestation+jwt, signed by a wallet provider of the issuer settings with x5c, nonce = a c_nonce) whose attested_keys each get a credential, up to batch_size. A jwt proof may carry a key attestation in its key_attestation header (required where the configuration has key_attestations_required): it must attest the proof key and carry the proof's c_nonce, and each attested key gets a credential. Key attestations are checked for their x5c chain to a trusted wallet provider, iat, exp, and the key_storage / user_authentication values the configuration accepts; any failure is invalid_proof. Needs the access token of the token endpoint, as a DPoP-bound token with a DPoP proof when it was issued so. Answers the credentials, or a transaction_id for deferred issuance (202). ${ENCRYPTION_DESCRIPTION}`,
          params: TenantParams,
          body: ProtocolBody,
          consumes: ['application/json', 'application/jwt'],
          produces: ['application/json', 'application/jwt'],
          security: WALLET_SECURITY,
        },
      },
      async (request, reply) =>
        sendWalletAnswer(reply, await credential.answer(resourceRequest(publicUrl, request), encryptedBodyOf(request))),
    );
  });
}
