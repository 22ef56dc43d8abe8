// The verifier as an OpenID Federation entity (OpenID4VP 1.0 section 5.9.3, client identifier prefix
// openid_federation): the tenant's entity configuration carries openid_credential_verifier metadata
// whose jwks hold the keys request objects are signed with, and a request object names the tenant's
// entity identifier as client_id and carries its trust chain (OpenID Federation 1.0 section 4.3) in the
// trust_chain header, so that a wallet needs no fetch to find the verifier's keys.
//
// The chain is built by the trust service's resolver, which reads every statement through the
// outbound client within FEDERATION_RESOLUTION_DEADLINE_MS and keeps it cacheTtlSeconds, never past
// the expiry of its statements.
import type { JWK } from 'jose';
import { allFormats } from '../formats/index.js';
import type { FieldError } from '../platform/http/problem.js';
import { FederationRefused } from '../trust/federation/entity-statement.js';
import type { FederationSettings } from '../trust/federation/settings.js';
import type { TrustAnchors } from './ports.js';

export const OPENID_FEDERATION_PREFIX = 'openid_federation';

const FIELD = 'body.clientIdPrefix';

export interface VerifierFederationNeeds {
  /** The tenant's federation settings and entity identifier; undefined when it takes part in none. */
  federationOf: (tenantId: string) => Promise<{ settings: FederationSettings; entityId: string } | undefined>;
  trust: Pick<TrustAnchors, 'tenantTrust'>;
}

/**
 * The openid_credential_verifier metadata (OpenID4VP 1.0 section 11). jwks: the keys request
 * objects are signed with (every access key chain of the tenant, which a presentation configuration
 * may pick). No response encryption key: svc encrypts responses with a key made per session, which
 * cannot stand in metadata, so requests with this prefix use response_mode direct_post.
 * client_registration_types: automatic registration (OpenID Federation 1.0 section 12.1), the only
 * kind a wallet does for this prefix.
 */
export function verifierMetadata(clientName: string, requestSigningJwks: { keys: JWK[] }) {
  const signingAlgs = [...new Set(requestSigningJwks.keys.map((key) => key.alg).filter((alg) => typeof alg === 'string'))];
  return {
    client_name: clientName,
    jwks: requestSigningJwks,
    vp_formats_supported: Object.fromEntries(allFormats().map((format) => [format.id, format.vpFormatSupported])),
    request_object_signing_alg: signingAlgs[0] ?? 'ES256',
    response_types: ['vp_token'],
    client_registration_types: ['automatic'],
  };
}

export class VerifierFederation {
  constructor(private readonly needs: VerifierFederationNeeds) {}

  /** Why the tenant cannot make a request with prefix openid_federation (an empty list when it can). */
  async refusal(tenantId: string): Promise<FieldError[]> {
    const federation = await this.needs.federationOf(tenantId);
    const refuse = (message: string) => [{ field: FIELD, message }];
    if (!federation) return refuse('openid_federation needs federation settings (federation in PUT /api/trust-config)');
    if (federation.settings.trustAnchors.length === 0) return refuse('openid_federation needs a trust anchor in the federation settings');
    if (federation.settings.authorityHints.length === 0)
      return refuse('openid_federation needs authorityHints in the federation settings (a superior that vouches for the verifier)');
    try {
      await this.chainOf(tenantId, federation.entityId);
    } catch (err) {
      if (err instanceof FederationRefused) return refuse(`no trust chain to a trust anchor: ${err.message}`);
      throw err;
    }
    return [];
  }

  /** The client_id of a request with this prefix: openid_federation:<entity identifier>. */
  async clientId(tenantId: string): Promise<string> {
    return `${OPENID_FEDERATION_PREFIX}:${(await this.settingsOf(tenantId)).entityId}`;
  }

  /** The trust_chain header: the tenant's entity configuration, the subordinate statements upward, the anchor's configuration. */
  async trustChain(tenantId: string): Promise<string[]> {
    return this.chainOf(tenantId, (await this.settingsOf(tenantId)).entityId);
  }

  private async chainOf(tenantId: string, entityId: string): Promise<string[]> {
    const trust = (await this.needs.trust.tenantTrust(tenantId)).federation;
    if (!trust) throw new FederationRefused('trust anchors', 'the tenant has no federation settings');
    return (await trust.resolve(entityId)).chain;
  }

  private async settingsOf(tenantId: string) {
    const federation = await this.needs.federationOf(tenantId);
    if (!federation) throw new FederationRefused('trust anchors', 'the tenant has no federation settings');
    return federation;
  }
}
