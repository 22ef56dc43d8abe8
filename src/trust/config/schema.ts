// A tenant's trust settings as one resource (/api/trust-config). The federation block is stored where
// it always was, in the issuer settings (their federation field stays an alias of this one).
import { z } from 'zod';
import type { RequestContext } from '../../platform/auth/principal.js';
import { EtsiTrustedListsSchema } from '../etsi-tsl/settings.js';
import { FederationSettingsSchema } from '../federation/settings.js';

export const TrustConfigSchema = z
  .strictObject({
    federation: FederationSettingsSchema.nullable()
      .default(null)
      .describe(
        'OpenID Federation: the issuer publishes its entity configuration at {credential_issuer}/.well-known/openid-federation (signed by the default federation key chain, made when this is first set), credentials with sdJwtTrustFormat federation name a key of it, and the verifier resolves trust chains to the trust anchors; null: the tenant takes no part. Its mode also decides how the LoTE trust lists apply. Stored as the federation field of the issuer settings (PUT /api/issuer/config): writing either is read through both',
      ),
    etsiTrustedLists: EtsiTrustedListsSchema.nullable()
      .default(null)
      .describe(
        'EU trusted lists (ETSI TS 119 612): a LOTL whose signature is verified against pinned certificates, and the national lists it points to; the certificates of their granted services count beside the LoTE trust lists (issuers, status list signers, wallet providers). A list that fails to refresh keeps its last good copy; one 24 hours past its NextUpdate counts no more. null: none. Stored as the etsiTrustedLists field of the issuer settings',
      ),
  })
  .meta({ id: 'TrustConfig' });

export type TrustConfig = z.output<typeof TrustConfigSchema>;

/** Where the trust settings are kept (app.ts wires the issuer settings); `put` saves, audits and announces as they do. */
export interface TrustConfigStore {
  get(tenantId: string): Promise<TrustConfig>;
  put(ctx: RequestContext, tenantId: string, config: TrustConfig): Promise<TrustConfig>;
}
