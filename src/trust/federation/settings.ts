// How a tenant takes part in an OpenID Federation (OpenID Federation 1.0), kept in its issuer
// settings: as a leaf entity that publishes an entity configuration, and as a verifier that resolves
// issuers' trust chains to its trust anchors. Field names follow EUDIPLO's where it has them
// (role, mode, entityId, trustAnchors, cacheTtlSeconds) so that its configurations carry over.
import { z } from 'zod';
import { decodeJws } from '../../platform/crypto/ec-jws.js';
import { webUrl } from '../../platform/http/web-urls.js';

/** hybrid: federation first, LoTE trust lists when federation does not decide; the others use one only. */
export const FEDERATION_MODES = ['hybrid', 'federation-only', 'lote-only'] as const;
export type FederationMode = (typeof FEDERATION_MODES)[number];

/** leaf: the default; intermediate and trust_anchor also vouch for subordinates (OpenID Federation 1.0 section 1.2). */
export const FEDERATION_ROLES = ['leaf', 'intermediate', 'trust_anchor'] as const;

const EntityId = () => webUrl({ max: 500 }).describe('an entity identifier: https URL (http outside production)');

const TrustAnchor = z.strictObject({
  entityId: EntityId(),
  entityConfigurationUri: webUrl()
    .optional()
    .describe("where the anchor's entity configuration is read; default {entityId}/.well-known/openid-federation"),
  requiredTrustMarks: z
    .array(z.string().min(1).max(500))
    .max(10)
    .optional()
    .describe(
      "trust mark types an entity resolved to this anchor must hold (OpenID Federation 1.0 section 7): each in the trust_marks of its entity configuration, with sub the entity, not expired, signed by an issuer this anchor's trust_mark_issuers lists for the type (its key from the issuer's own trust chain to this anchor), and active at the issuer's federation_trust_mark_status_endpoint when it publishes one; otherwise the chain is refused",
    ),
});

/** The trust_mark_type of a trust mark JWT (id in drafts before 1.0 final); undefined when it is none. */
export function trustMarkTypeOf(jwt: string): string | undefined {
  const payload = decodeJws(jwt)?.payload;
  const type = payload?.trust_mark_type ?? payload?.id;
  return typeof type === 'string' && typeof payload?.sub === 'string' ? type : undefined;
}

const TrustMarkJwt = z
  .string()
  .max(16_384)
  .refine((jwt) => trustMarkTypeOf(jwt) !== undefined, 'not a trust mark: a compact JWS with trust_mark_type and sub');

export const FederationSettingsSchema = z
  .strictObject({
    role: z
      .enum(FEDERATION_ROLES)
      .default('leaf')
      .describe(
        'the part this tenant plays: leaf (it issues credentials, it has no subordinates), intermediate or trust_anchor (it also issues subordinate statements about the entities registered at /api/federation/subordinates, published through the federation_fetch_endpoint ({credential_issuer}/federation/fetch) and federation_list_endpoint ({credential_issuer}/federation/list) of its entity configuration; a trust anchor normally has no authorityHints)',
      ),
    mode: z
      .enum(FEDERATION_MODES)
      .default('hybrid')
      .describe(
        'which trust decides, for the verifier (credential issuers) and for external authorization servers (authorizationServers): federation-only (OpenID Federation trust chains to trustAnchors), lote-only (for credentials the X.509 chains of the LoTE trust lists; for authorization servers their RFC 8414 metadata), hybrid (federation first, the other when the entity does not resolve)',
      ),
    entityId: EntityId()
      .optional()
      .describe(
        'the entity identifier of this issuer (iss and sub of its entity configuration, and iss of its credentials with sdJwtTrustFormat federation); default the credential issuer identifier. The entity configuration is served at {credential_issuer}/.well-known/openid-federation: another entityId needs {entityId}/.well-known/openid-federation routed there (a reverse proxy)',
      ),
    authorityHints: z
      .array(EntityId())
      .max(10)
      .default([])
      .describe('the immediate superiors (intermediates or trust anchors) that issue subordinate statements about this issuer'),
    trustAnchors: z
      .array(TrustAnchor)
      .max(20)
      .default([])
      .describe(
        'the trust anchors the verifier accepts when a DCQL query names none (trusted_authorities of type openid_federation name them per query)',
      ),
    trustMarks: z
      .array(TrustMarkJwt)
      .max(20)
      .optional()
      .describe(
        'trust marks other issuers granted this entity (signed JWTs, typ trust-mark+jwt): published in the trust_marks claim of its entity configuration as {trust_mark_type, trust_mark}',
      ),
    trustMarkIssuers: z
      .record(z.string().min(1).max(500), z.array(EntityId()).max(20))
      .optional()
      .describe(
        'for a trust_anchor: trust mark type -> the entity identifiers of the issuers it accepts for it, published as trust_mark_issuers in its entity configuration',
      ),
    cacheTtlSeconds: z
      .number()
      .int()
      .min(0)
      .max(86_400)
      .default(300)
      .describe(
        'how long a trust decision is kept per instance: a resolved chain (never beyond the expiry of its statements), a refusal at most 30 seconds; 0: resolved each time',
      ),
  })
  .meta({
    id: 'FederationSettings',
    examples: [
      {
        role: 'leaf',
        mode: 'hybrid',
        authorityHints: ['https://federation.example.eu'],
        trustAnchors: [{ entityId: 'https://federation.example.eu' }],
        cacheTtlSeconds: 300,
      },
    ],
  });

export type FederationSettings = z.output<typeof FederationSettingsSchema>;
