// The management request that creates an offer.
import { z } from 'zod';
import { ClaimSourceSchema } from '../claim-sources.js';

/** The W3C Digital Credentials API protocol identifier of OpenID4VCI 1.0 issuance. */
export const DC_API_PROTOCOL = 'openid4vci-v1';

export const OfferBody = z
  .strictObject({
    response_type: z
      .enum(['uri', 'dc-api', 'iso-18013-7'])
      .describe(
        "`uri`: an openid-credential-offer:// URI (QR code, link); `dc-api`: also the request the integrator's page passes to navigator.credentials.create (W3C Digital Credentials API, protocol openid4vci-v1); `iso-18013-7` is for presentations, not offers",
      ),
    flow: z
      .enum(['authorization_code', 'pre_authorized_code'])
      .describe(
        '`pre_authorized_code`: the wallet redeems the offer at once (optionally with tx_code); `authorization_code`: the wallet runs PAR, authorization and token requests, the offer binding the user through issuer_state',
      ),
    // Each id is looked up in turn: an offer names a few configurations, never thousands.
    credentialConfigurationIds: z.array(z.string().min(1)).min(1).max(100),
    authorization_server: z
      .string()
      .optional()
      .describe(
        "which of the issuer's authorization servers (authorization_servers of the issuer metadata) serves the offer; default: the first enabled one (pre_authorized_code: the built-in one). The built-in server ({PUBLIC_URL}/issuers/{tenantId}) serves both flows, and while the issuer settings disable it (builtinAuthorizationServerEnabled false) only pre_authorized_code: an authorization_code offer for it is refused; the chained authorization server ({PUBLIC_URL}/api/issuers/{tenantId}/chained-as-vp: the user logs in at the upstream OpenID Provider of the issuer settings) and an external authorization server listed in the issuer settings only authorization_code. With an external one the offer carries issuer_state for it, and the authorization is that server's business: this service does not serve it",
      ),
    credentialClaims: z
      .record(z.string(), ClaimSourceSchema)
      .optional()
      .describe(
        "per configuration id: where its claims come from (default: the attribute provider of the configuration, else the fields' default values)",
      ),
    tx_code: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('pre-authorized code flow: a transaction code the wallet user must enter; deliver it out of band'),
    tx_code_description: z.string().max(300).optional(),
    webhookEndpointId: z.string().optional(),
  })
  .meta({
    examples: [
      {
        response_type: 'uri',
        flow: 'pre_authorized_code',
        credentialConfigurationIds: ['pid'],
        credentialClaims: {
          pid: { type: 'inline', claims: { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12', age_over_18: true } },
        },
        tx_code: '493817',
      },
    ],
  });
export type OfferRequest = z.infer<typeof OfferBody>;

export const OfferResponse = z.object({
  uri: z.string().describe('openid-credential-offer:// URI with credential_offer_uri: show as QR code or link'),
  session: z.string().describe('the session id'),
  credentialOffer: z.record(z.string(), z.unknown()).describe('the offer object the URI refers to'),
  credentialOfferUri: z.string(),
  expiresAt: z.string(),
  dcApiRequest: z
    .object({ protocol: z.literal(DC_API_PROTOCOL), data: z.record(z.string(), z.unknown()) })
    .optional()
    .describe(
      'response_type dc-api: pass as navigator.credentials.create({ digital: { requests: [dcApiRequest] } }); data is the credential offer by value',
    ),
});
export type CreatedOffer = z.infer<typeof OfferResponse>;
