// What a wallet reads before it asks for anything: the credential issuer and authorization server
// metadata (at the RFC 8414 location and the draft-era one), the JWT VC issuer keys, the issuer's DID document, and hosted
// type metadata (SD-JWT VC's, for the formats that declare typeMetadata).

import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { CredentialConfigService } from '../../credential-configs/service.js';
import { formatOf } from '../../formats/index.js';
import type { KeyChainService } from '../../key-chains/service.js';
import type { SigningService } from '../../key-chains/signing.js';
import type { Clock } from '../../platform/clock.js';
import { preferredMediaType } from '../../platform/http/media-types.js';
import type { App } from '../../platform/http/types.js';
import { TtlCache } from '../../platform/ttl-cache.js';
import { signEntityConfiguration } from '../../trust/federation/entity-configuration.js';
import { ENTITY_STATEMENT_MEDIA_TYPE } from '../../trust/federation/entity-statement.js';
import type { CredentialEncryption } from '../credential-request/encryption.js';
import { noFederationSettings, notFoundIssuer } from '../errors.js';
import { ISSUER_CACHE_MS, type IssuerDirectory } from '../issuers.js';
import { TenantParams, WALLET_TAGS } from '../routes-support.js';
import type { IssuerSettingsService } from '../settings/service.js';
import { DID_DOCUMENT_MEDIA_TYPE, issuerDidDocument } from './did-document.js';
import { authorizationServerMetadata, configurationScopes, credentialIssuerMetadata } from './metadata.js';
import { SIGNED_METADATA_LIFETIME_SECONDS, SIGNED_METADATA_MEDIA_TYPE, signIssuerMetadata } from './signed-metadata.js';

export interface MetadataSources {
  issuers: IssuerDirectory;
  settings: IssuerSettingsService;
  configs: CredentialConfigService;
  keyChains: KeyChainService;
  signing: SigningService;
  /** The tenant's encryption key, for credential_request_encryption. */
  encryption: CredentialEncryption;
  /** The signed metadata's iat and exp. */
  clock: Clock;
  /** The verifier's openid_credential_verifier metadata for the entity configuration; undefined when the tenant does not verify. */
  verifierMetadata?: (tenantId: string) => Promise<Record<string, unknown> | undefined>;
  /** Whether the tenant issues OpenID Federation trust marks; absent: it issues none. */
  trustMarkIssuer?: (tenantId: string) => Promise<boolean>;
}

type TenantRequest = FastifyRequest<{ Params: { tenantId: string } }>;

export function metadataRoutes(
  app: App,
  { issuers, settings, configs, keyChains, signing, encryption, clock, verifierMetadata, trustMarkIssuer }: MetadataSources,
) {
  // Every wallet reads it before anything else: built once per tenant and kept ISSUER_CACHE_MS, and
  // forgotten at once when the issuer settings or a credential configuration change on this instance.
  const built = new TtlCache<ReturnType<typeof credentialIssuerMetadata>>(ISSUER_CACHE_MS);
  // The signed form is kept alike (a signature may cost a KMS call), and forgotten with the document.
  const signed = new TtlCache<string>(ISSUER_CACHE_MS);
  const forget = (tenantId: string) => {
    built.forget(tenantId);
    signed.forget(tenantId);
  };
  settings.onChange(forget);
  configs.onChange(forget);
  const issuerMetadata = (tenantId: string) => built.get(tenantId, () => buildIssuerMetadata(tenantId));
  const signedIssuerMetadata = (tenantId: string) =>
    signed.get(tenantId, async () =>
      signIssuerMetadata(
        await signing.signer(tenantId, { usageType: 'attestation' }),
        await issuerMetadata(tenantId),
        clock.now().getTime(),
      ),
    );

  async function buildIssuerMetadata(tenantId: string) {
    const issuer = await issuers.get(tenantId);
    const list = await configs.list(tenantId);
    const algorithms = new Map<string, string>();
    for (const config of list) {
      algorithms.set(config.id, (await keyChains.resolve(tenantId, { keyChainId: config.keyChainId, usageType: 'attestation' })).algorithm);
    }
    const encryptionKey = await encryption.issuerKey(tenantId);
    return credentialIssuerMetadata(issuer.urls, issuer.settings, list, (c) => algorithms.get(c.id) ?? 'ES256', encryptionKey);
  }

  /**
   * JSON unless the Accept header prefers application/jwt (OpenID4VCI 1.0 section 12.2.2): then the
   * signed metadata. Either way Vary: Accept, so that no cache hands one form to a client asking for the other.
   */
  async function servedIssuerMetadata(request: TenantRequest, reply: FastifyReply) {
    const { tenantId } = request.params;
    reply.header('vary', 'accept');
    if (preferredMediaType(request.headers.accept, ['application/json', SIGNED_METADATA_MEDIA_TYPE]) === 'application/json') {
      return issuerMetadata(tenantId);
    }
    return reply.type(SIGNED_METADATA_MEDIA_TYPE).send(await signedIssuerMetadata(tenantId));
  }

  const servedMetadata = {
    'openid-credential-issuer': {
      summary: 'Credential issuer metadata',
      description:
        'JSON (application/json) by default. With an Accept header that prefers application/jwt, the signed metadata ' +
        '(OpenID4VCI 1.0 section 12.2.3) as application/jwt: a JWS with typ openidvci-issuer-metadata+jwt, signed by the ' +
        "tenant's default attestation key chain (the key that signs its credentials) with its certificate chain in x5c " +
        '(without the trust anchor); every metadata parameter a top-level claim, iss and sub the credential issuer identifier, ' +
        `iat, and exp ${SIGNED_METADATA_LIFETIME_SECONDS / 3600} hours later. 409 when the tenant has no default attestation key chain.`,
      handler: servedIssuerMetadata,
    },
    'oauth-authorization-server': {
      summary: 'Authorization server metadata of the built-in authorization server',
      description: 'RFC 8414 metadata, JSON',
      handler: async (request: TenantRequest) => {
        const issuer = await issuers.get(request.params.tenantId);
        return authorizationServerMetadata(issuer.urls, issuer.settings, configurationScopes(await configs.list(issuer.tenantId)));
      },
    },
  };
  // The well-known suffix goes between host and path (RFC 8414 section 3.1, as OpenID4VCI 1.0
  // requires). Draft-era clients still in wallets (Sphereon's oid4vci-client 0.20) append it to the
  // issuer identifier instead; that location serves the same document through the same handler, so
  // both can never differ. openid-configuration stays unserved: it would claim an OpenID Provider.
  for (const [suffix, { summary, description, handler }] of Object.entries(servedMetadata)) {
    app.get(
      `/.well-known/${suffix}/issuers/:tenantId`,
      { schema: { tags: WALLET_TAGS, summary, description, params: TenantParams } },
      handler,
    );
    app.get(
      `/issuers/:tenantId/.well-known/${suffix}`,
      {
        schema: {
          tags: WALLET_TAGS,
          summary: `${summary} (compatibility location for draft-era clients)`,
          description,
          params: TenantParams,
        },
      },
      handler,
    );
  }

  // OpenID Federation 1.0 section 9: the entity configuration at the entity identifier (the credential
  // issuer identifier unless the settings name another) with the well-known suffix appended.
  app.get(
    '/issuers/:tenantId/.well-known/openid-federation',
    {
      schema: {
        tags: WALLET_TAGS,
        summary:
          "The issuer's OpenID Federation entity configuration (application/entity-statement+jwt), when the issuer settings set federation",
        description:
          'Signed by the default federation key chain. Its metadata: openid_credential_issuer (with the keys credentials are signed with), oauth_authorization_server when the built-in authorization server is on, and openid_credential_verifier when the tenant has a presentation configuration (OpenID4VP 1.0 section 11: client_name, vp_formats_supported, and in jwks the access keys request objects with the client identifier prefix openid_federation are signed with).',
        params: TenantParams,
      },
    },
    async (request, reply) => {
      const issuer = await issuers.get(request.params.tenantId);
      const { federation } = issuer.settings;
      if (!federation) throw noFederationSettings(issuer.tenantId);
      const signer = await signing.signer(issuer.tenantId, { usageType: 'federation' });
      const verifier = await verifierMetadata?.(issuer.tenantId);
      const statement = await signEntityConfiguration(
        signer,
        {
          credentialIssuer: issuer.urls.issuer,
          federation,
          federationJwks: await signing.jwks(issuer.tenantId, ['federation']),
          issuerMetadata: await issuerMetadata(issuer.tenantId),
          // The keys its credentials and their status lists are signed with: a verifier trusts both through the chain.
          credentialJwks: await signing.jwks(issuer.tenantId, ['attestation', 'statusList']),
          ...(issuer.settings.builtinAuthorizationServerEnabled && {
            authorizationServerMetadata: authorizationServerMetadata(
              issuer.urls,
              issuer.settings,
              configurationScopes(await configs.list(issuer.tenantId)),
            ),
          }),
          ...(verifier && { verifierMetadata: verifier }),
          trustMarkIssuer: (await trustMarkIssuer?.(issuer.tenantId)) ?? false,
        },
        clock.now(),
      );
      return reply.type(ENTITY_STATEMENT_MEDIA_TYPE).send(statement);
    },
  );

  app.get(
    '/issuers/:tenantId/did.json',
    {
      schema: {
        tags: WALLET_TAGS,
        summary: "The issuer's DID document (did:web:{host}:issuers:{tenantId}), for jwt_vc_json credentials with config.vcIssuer did:web",
        description:
          'did:web resolves here (the port of the host percent-encoded in the DID). Each attestation key (current, and previous while valid) is a JsonWebKey verification method {did}#{kid}, listed in assertionMethod; its publicKeyJwk carries the certificate chain as x5c (without the root), through which verifiers trust it.',
        params: TenantParams,
      },
    },
    async (request, reply) => {
      const issuer = await issuers.get(request.params.tenantId);
      const document = await issuerDidDocument(keyChains, issuer.urls.issuer, issuer.tenantId);
      return reply.type(DID_DOCUMENT_MEDIA_TYPE).header('cache-control', 'public, max-age=300').send(JSON.stringify(document));
    },
  );

  app.get(
    '/.well-known/jwt-vc-issuer/issuers/:tenantId',
    {
      schema: { tags: WALLET_TAGS, summary: 'JWT VC issuer metadata (SD-JWT VC): the keys that sign credentials', params: TenantParams },
    },
    async (request) => {
      const issuer = await issuers.get(request.params.tenantId);
      return { issuer: issuer.urls.issuer, jwks: await signing.jwks(issuer.tenantId, ['attestation']) };
    },
  );

  app.get(
    '/issuers/:tenantId/types/:configurationId',
    {
      schema: {
        tags: WALLET_TAGS,
        summary: 'SD-JWT VC type metadata hosted for a configuration whose vct is an object',
        params: TenantParams.extend({ configurationId: z.string() }),
      },
    },
    async (request) => {
      const { tenantId, configurationId } = request.params;
      const config = await configs.find(tenantId, configurationId);
      if (!config || !formatOf(config.config.format)?.typeMetadata) throw notFoundIssuer(`${tenantId}/${configurationId}`);
      const urls = issuers.urls(tenantId);
      const described = typeof config.vct === 'object' && config.vct ? config.vct : {};
      return {
        ...described,
        vct: `${urls.types}/${encodeURIComponent(config.id)}`,
        ...(config.config.display && { display: config.config.display }),
      };
    },
  );
}
