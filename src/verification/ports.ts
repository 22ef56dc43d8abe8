// What verification needs from other features, as narrow interfaces that app.ts wires.

import type { PresentationConfiguration } from '../presentation-configs/service.js';
import type { TrustService } from '../trust/index.js';

export type { PresentationConfiguration };

export interface PresentationConfigurations {
  /** Throws a 404 problem for an unknown id. */
  get(tenantId: string, id: string): Promise<PresentationConfiguration>;
  /** Every configuration of the tenant. */
  list(tenantId: string): Promise<PresentationConfiguration[]>;
  /** Undefined for an unknown id. */
  find(tenantId: string, id: string): Promise<PresentationConfiguration | undefined>;
  /** Where the claims of a completed presentation go, if anywhere. */
  resolveWebhook(
    tenantId: string,
    config: PresentationConfiguration,
  ): Promise<{ url: string; headers: Record<string, string>; signingSecrets?: string[] } | null>;
}

/** Where a configuration's registration certificate comes from (the registrar feature). */
export interface RegistrationCertificateSource {
  /** The compact JWT a request made from `config` sends in verifier_info; undefined when it asks for none. */
  forRequest(tenantId: string, config: PresentationConfiguration): Promise<string | undefined>;
}

/** The trust service (src/trust), as verification asks it: what a tenant trusts, and which trusted_authorities a credential matches. */
export type TrustAnchors = Pick<TrustService, 'tenantTrust' | 'matchAuthority'>;

/** The trust anchors a DCQL credential query names (trusted_authorities of type openid_federation); undefined when it names none. */
export function federationAnchorsOf(query: { trusted_authorities?: unknown }): string[] | undefined {
  if (!Array.isArray(query.trusted_authorities)) return undefined;
  const anchors = query.trusted_authorities
    .filter((authority) => authority?.type === 'openid_federation' && Array.isArray(authority.values))
    .flatMap((authority) => authority.values as string[]);
  return anchors.length ? anchors : undefined;
}
