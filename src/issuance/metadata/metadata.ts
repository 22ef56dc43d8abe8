// Credential issuer metadata (OpenID4VCI 1.0 section 12.2) and authorization server metadata
// (RFC 8414) of a tenant's authorization servers (the built-in and the chained one), derived from
// its credential configurations and issuer settings.
import type { JWK } from 'jose';
import type { CredentialConfiguration, FieldDefinition } from '../../credential-configs/service.js';
import { type CredentialFormat, formatOfConfiguration } from '../../formats/index.js';
import { ATTESTATION_ALGORITHMS, ATTESTATION_AUTH_METHOD } from '../authorization/wallet-attestation.js';
import { CONTENT_ENCRYPTION_ALGORITHMS, ENCRYPTION_ALGORITHM } from '../credential-request/encryption.js';
import { PROOF_ALGORITHMS } from '../credential-request/proofs.js';
import { AUTHORIZATION_CODE_GRANT, PRE_AUTHORIZED_GRANT, REFRESH_TOKEN_GRANT } from '../grants.js';
import type { Issuer } from '../issuers.js';
import type { IssuerSettings } from '../settings/service.js';
import { type ChainedUrls, type IssuerUrls, vctOf } from '../urls.js';

/**
 * Claim descriptions for credential_metadata.claims, flattened from nested field definitions. In a
 * namespaced format (claimsLayout.namespaced) a top-level field's namespace starts its claim path.
 */
export function claimsDescription(
  fields: FieldDefinition[],
  namespaced: boolean,
  parent: (string | number | null)[] = [],
  /** Where the fields' claims are in the credential (credentialSubject for jwt_vc_json). */
  prefix: string[] = [],
) {
  const claims: Record<string, unknown>[] = [];
  for (const field of fields) {
    const namespace = namespaced && parent.length === 0 ? field.namespace : undefined;
    const path = [...prefix, ...(namespace ? [namespace] : []), ...parent, ...field.path];
    claims.push({
      path,
      ...(field.mandatory !== undefined && { mandatory: field.mandatory }),
      ...(field.display?.length && { display: field.display }),
    });
    if (field.children?.length)
      claims.push(...claimsDescription(field.children, namespaced, path.slice(prefix.length + (namespace ? 1 : 0)), prefix));
  }
  return claims;
}

/** The type member's value: the type itself, or what the format makes of it (jwt_vc_json's credential_definition). */
const typeMember = (format: CredentialFormat, type: string | undefined) =>
  type !== undefined && format.type.metadataValue ? format.type.metadataValue(type) : type;

function configurationSupported(config: CredentialConfiguration, urls: IssuerUrls, algorithm: string) {
  const format = formatOfConfiguration(config);
  const binding = config.keyBinding !== false;
  return {
    format: config.config.format,
    ...(config.config.scope && { scope: config.config.scope }),
    [format.type.member]: typeMember(
      format,
      format.type.of(config, () => vctOf(config, urls)),
    ),
    credential_signing_alg_values_supported: [format.issuerMetadata.signingAlgorithm(algorithm)],
    ...(binding && {
      cryptographic_binding_methods_supported: format.issuerMetadata.bindingMethods,
      proof_types_supported: proofTypesSupported(config),
    }),
    credential_metadata: {
      ...(config.config.display?.length && { display: config.config.display }),
      claims: claimsDescription(config.fields, format.claimsLayout?.namespaced === true, [], format.claimsLayout?.pathPrefix),
    },
  };
}

/** jwt proofs always; where key attestations are required, jwt proofs carrying one, or the attestation proof type. */
function proofTypesSupported(config: CredentialConfiguration) {
  const required = config.config.keyAttestationsRequired;
  const jwt = { proof_signing_alg_values_supported: PROOF_ALGORITHMS, ...(required && { key_attestations_required: required }) };
  return required ? { jwt, attestation: jwt } : { jwt };
}

/**
 * Encrypted requests and responses (section 12.2.4): offered when the tenant has an encryption key,
 * required when the issuer settings say so.
 */
function encryptionMetadata(settings: IssuerSettings, encryptionKey: JWK | undefined) {
  if (!encryptionKey) return {};
  const required = settings.credentialEncryptionRequired;
  return {
    credential_request_encryption: {
      jwks: { keys: [encryptionKey] },
      enc_values_supported: CONTENT_ENCRYPTION_ALGORITHMS,
      encryption_required: required,
    },
    credential_response_encryption: {
      alg_values_supported: [ENCRYPTION_ALGORITHM],
      enc_values_supported: CONTENT_ENCRYPTION_ALGORITHMS,
      encryption_required: required,
    },
  };
}

export function credentialIssuerMetadata(
  urls: IssuerUrls,
  settings: IssuerSettings,
  configs: CredentialConfiguration[],
  algorithmOf: (config: CredentialConfiguration) => string,
  /** The tenant's public encryption key (with kid); absent: encryption is not offered. */
  encryptionKey?: JWK,
) {
  const servers = authorizationServers(urls, settings);
  return {
    credential_issuer: urls.issuer,
    // Listed only when there is a choice; otherwise the issuer is its own authorization server (also
    // when every one is disabled: its token endpoint still takes pre-authorized codes).
    ...(servers.length > 1 || (servers.length === 1 && servers[0] !== urls.issuer) ? { authorization_servers: servers } : {}),
    credential_endpoint: urls.credential,
    nonce_endpoint: urls.nonce,
    deferred_credential_endpoint: urls.deferred,
    notification_endpoint: urls.notification,
    ...encryptionMetadata(settings, encryptionKey),
    status_list_aggregation_endpoint: urls.statusListAggregation,
    batch_credential_issuance: settings.batchSize > 1 ? { batch_size: settings.batchSize } : undefined,
    ...(settings.display.length && { display: settings.display }),
    credential_configurations_supported: Object.fromEntries(configs.map((c) => [c.id, configurationSupported(c, urls, algorithmOf(c))])),
  };
}

/**
 * The scope values of the configurations, for scopes_supported (RFC 8414 section 2): a wallet may
 * take them from the authorization server's metadata as well as the issuer's (OpenID4VCI 1.0 section 5.1.2).
 */
export const configurationScopes = (configs: CredentialConfiguration[]): string[] =>
  configs.flatMap((config) => (config.config.scope ? [config.config.scope] : []));

export function authorizationServers(urls: IssuerUrls, settings: IssuerSettings): string[] {
  return [
    ...(settings.builtinAuthorizationServerEnabled ? [urls.issuer] : []),
    ...(settings.chainedAuthorizationServer?.enabled ? [urls.chainedAuthorizationServer] : []),
    ...settings.authorizationServers.filter((s) => s.enabled).map((s) => s.issuer),
  ];
}

/**
 * What every authorization server of an issuer publishes alike (RFC 8414): PKCE S256, the iss
 * parameter, the client attestation (required or not, as the issuer settings say), DPoP, and the
 * issuer's challenge endpoint (challenges belong to the issuer: either server takes them). `own` is
 * what sets the server apart: its identifier, endpoints, grant types (refresh tokens come with them
 * while the issuer issues refresh tokens) and any field of its own.
 */
function authorizationServerBody(
  urls: IssuerUrls,
  settings: IssuerSettings,
  own: { issuer: string; endpoints: Record<string, unknown>; grantTypes: string[]; fields?: Record<string, unknown> },
) {
  return {
    issuer: own.issuer,
    ...own.endpoints,
    response_types_supported: ['code'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    grant_types_supported: [...own.grantTypes, ...(settings.refreshTokenLifetimeSeconds > 0 ? [REFRESH_TOKEN_GRANT] : [])],
    ...own.fields,
    // A public client (none) only while the issuer does not require wallet attestation.
    token_endpoint_auth_methods_supported: settings.walletAttestationRequired
      ? [ATTESTATION_AUTH_METHOD]
      : ['none', ATTESTATION_AUTH_METHOD],
    challenge_endpoint: urls.challenge,
    client_attestation_signing_alg_values_supported: ATTESTATION_ALGORITHMS,
    client_attestation_pop_signing_alg_values_supported: ATTESTATION_ALGORITHMS,
    dpop_signing_alg_values_supported: PROOF_ALGORITHMS,
    ...(settings.dpopRequired && { dpop_bound_access_tokens_required: true }),
  };
}

/** The endpoints of the authorization code flow, where pushed authorization requests are required. */
const pushedAuthorization = (authorize: string, par: string) => ({
  authorization_endpoint: authorize,
  pushed_authorization_request_endpoint: par,
  require_pushed_authorization_requests: true,
});

/**
 * The built-in server's metadata (RFC 8414). While the issuer settings disable it, it serves only its
 * token endpoint (pre-authorized codes, refresh tokens of sessions it authorized before): the
 * authorization, PAR, authorization challenge and interactive authorization endpoints, the authorization_code grant and
 * scopes_supported (the configurations' scope values) are left out.
 */
export function authorizationServerMetadata(urls: IssuerUrls, settings: IssuerSettings, scopes: string[]) {
  const authorizing = settings.builtinAuthorizationServerEnabled;
  return authorizationServerBody(urls, settings, {
    issuer: urls.issuer,
    endpoints: {
      token_endpoint: urls.token,
      ...(authorizing && {
        ...pushedAuthorization(urls.authorize, urls.par),
        // Interactive authorization: the current draft's endpoint (OpenID4VCI 1.1 draft of June 2026,
        // section 13.3, from OAuth 2.0 for First-Party Applications) and the earlier drafts' one.
        authorization_challenge_endpoint: urls.authorizationChallenge,
        interactive_authorization_endpoint: urls.iae,
      }),
    },
    grantTypes: [PRE_AUTHORIZED_GRANT, ...(authorizing ? [AUTHORIZATION_CODE_GRANT] : [])],
    fields: {
      ...(authorizing && scopes.length && { scopes_supported: scopes }),
      'pre-authorized_grant_anonymous_access_supported': true,
      status_list_aggregation_endpoint: urls.statusListAggregation,
    },
  });
}

/**
 * The chained authorization server's metadata (RFC 8414): PAR required, the authorization code grant
 * (and refresh tokens), the query response mode, the configurations' scope values; DPoP and wallet
 * attestation as the built-in server has them.
 */
export function chainedServerMetadata({ urls, settings }: Issuer, chained: ChainedUrls, scopes: string[]) {
  return authorizationServerBody(urls, settings, {
    issuer: chained.identifier,
    endpoints: { token_endpoint: chained.token, ...pushedAuthorization(chained.authorize, chained.par) },
    grantTypes: [AUTHORIZATION_CODE_GRANT],
    fields: { response_modes_supported: ['query'], ...(scopes.length && { scopes_supported: scopes }) },
  });
}
