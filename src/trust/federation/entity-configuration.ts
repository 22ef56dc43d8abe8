// The issuer's entity configuration (OpenID Federation 1.0 section 3.1 and 5): what a verifier reads
// first when it resolves a trust chain from a credential's iss. Its jwks are the tenant's federation
// keys, which sign it; the credential issuer metadata inside carries the keys credentials are signed
// with, so that a credential's kid is found in the metadata the chain vouches for.
import type { JWK } from 'jose';
import { type Signer, signJwtWith } from '../../key-chains/signing.js';
import { ENTITY_STATEMENT_TYP } from './entity-statement.js';
import { type FederationSettings, trustMarkTypeOf } from './settings.js';
import { trustMarkEndpoints } from './trust-marks.js';

/** How long a served entity configuration is valid: verifiers read it again after this at the latest. */
export const ENTITY_CONFIGURATION_LIFETIME_SECONDS = 86_400;

export interface EntityConfigurationInput {
  credentialIssuer: string;
  federation: FederationSettings;
  /** The federation keys: the jwks of the statement, one of which signs it. */
  federationJwks: { keys: JWK[] };
  /** The credential issuer metadata, without jwks. */
  issuerMetadata: Record<string, unknown>;
  /** The keys credentials (and their status lists) are signed with. */
  credentialJwks: { keys: JWK[] };
  /** The built-in authorization server's metadata, when it authorizes. */
  authorizationServerMetadata?: Record<string, unknown>;
  /** The verifier's metadata (openid_credential_verifier), when the tenant verifies presentations. */
  verifierMetadata?: Record<string, unknown>;
  /** Whether the tenant issues trust marks (it defines a type): its federation_entity then names the trust mark endpoints. */
  trustMarkIssuer?: boolean;
}

/** Where an intermediate or trust anchor answers fetch, list and resolve (sections 8.1 to 8.3): beside its entity configuration. */
export const federationEndpoints = (credentialIssuer: string) => ({
  federation_fetch_endpoint: `${credentialIssuer}/federation/fetch`,
  federation_list_endpoint: `${credentialIssuer}/federation/list`,
  federation_resolve_endpoint: `${credentialIssuer}/federation/resolve`,
});

/**
 * client_registration_types_supported, in the entity configuration's openid_credential_issuer
 * metadata only. OpenID Federation 1.0 defines it for openid_provider metadata (section 5.1.3,
 * RECOMMENDED there), not for a credential issuer; but @openid-federation/core (0.2.1), which outside
 * checks may resolve svc with, refuses an openid_credential_issuer without it, and a parameter unknown
 * to OpenID4VCI is ignored by those who do not know it. Its values name the federation registration
 * methods of section 12: "automatic" (a client's entity identifier as client_id, its metadata resolved
 * from its trust chain) and "explicit" (a client posting its entity configuration to a
 * federation_registration_endpoint, which must then be published). svc's authorization server does
 * neither (its clients are registered through the management API), so the list is empty.
 */
export const CLIENT_REGISTRATION_TYPES_SUPPORTED: ('automatic' | 'explicit')[] = [];

/** The federation_entity metadata: the endpoints of a superior and of a trust mark issuer; undefined when it is neither. */
function federationEntityMetadata(input: EntityConfigurationInput) {
  const superior = input.federation.role !== 'leaf';
  if (!superior && !input.trustMarkIssuer) return undefined;
  return {
    ...(superior && federationEndpoints(input.credentialIssuer)),
    ...(input.trustMarkIssuer && trustMarkEndpoints(input.credentialIssuer)),
  };
}

/** trust_marks (section 3.1): the marks others granted this entity, each with the type its JWT names. */
function trustMarksClaim(trustMarks: string[]) {
  return trustMarks.map((jwt) => ({ trust_mark_type: trustMarkTypeOf(jwt), trust_mark: jwt }));
}

export const entityIdOf = (credentialIssuer: string, federation: FederationSettings) => federation.entityId ?? credentialIssuer;

/** `now`: the issue time, in seconds since the epoch. */
export function entityConfigurationClaims(input: EntityConfigurationInput, now: number) {
  const entityId = entityIdOf(input.credentialIssuer, input.federation);
  const federationEntity = federationEntityMetadata(input);
  return {
    iss: entityId,
    sub: entityId,
    iat: now,
    exp: now + ENTITY_CONFIGURATION_LIFETIME_SECONDS,
    jwks: input.federationJwks,
    // Section 3.1: a leaf names its superiors; an empty list is not allowed, so none is left out.
    ...(input.federation.authorityHints.length > 0 && { authority_hints: input.federation.authorityHints }),
    ...(input.federation.trustMarks?.length && { trust_marks: trustMarksClaim(input.federation.trustMarks) }),
    // Section 3.1: only a trust anchor says whose marks of a type count.
    ...(input.federation.role === 'trust_anchor' &&
      input.federation.trustMarkIssuers && { trust_mark_issuers: input.federation.trustMarkIssuers }),
    metadata: {
      openid_credential_issuer: {
        ...input.issuerMetadata,
        client_registration_types_supported: CLIENT_REGISTRATION_TYPES_SUPPORTED,
        jwks: input.credentialJwks,
      },
      ...(input.authorizationServerMetadata && { oauth_authorization_server: input.authorizationServerMetadata }),
      // OpenID4VP 1.0 section 5.9.3: a wallet reads the verifier's metadata from this entity type.
      ...(input.verifierMetadata && { openid_credential_verifier: input.verifierMetadata }),
      // A superior publishes where its subordinate statements are read, a trust mark issuer where marks are checked (section 5.1.1).
      ...(federationEntity && { federation_entity: federationEntity }),
    },
  };
}

/** The signed entity configuration; `signer` must hold a key of `federationJwks`. */
export function signEntityConfiguration(signer: Signer, input: EntityConfigurationInput, now: Date) {
  return signJwtWith(signer, { typ: ENTITY_STATEMENT_TYP }, entityConfigurationClaims(input, Math.floor(now.getTime() / 1000)), {
    x5c: false,
  });
}
