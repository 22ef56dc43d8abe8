// The conformance profile a tenant is held to: an issuer setting, read by the conformance feature
// (src/conformance), which enforces and reports it.
import { z } from 'zod';

export const HAIP_PROFILE = 'haip-1.0';
export const PROFILES = ['none', HAIP_PROFILE] as const;
export type Profile = (typeof PROFILES)[number];

export const ProfileSchema = z
  .enum(PROFILES)
  .describe(
    'none (default): the choices the specifications leave open stay with the settings. haip-1.0: the tenant is held to OpenID4VC HAIP 1.0: ' +
      'wallet attestation and DPoP are required (walletAttestationRequired and dpopRequired must be true), presentation requests are signed ' +
      'with x509_hash and answered with direct_post.jwt, key-bound credential configurations require key attestations, every SD-JWT VC has a ' +
      'status list entry or an expiry (lifeTime), and no credential, status list or request is signed with a self-signed certificate. ' +
      'Anything that would break one of these is refused with 400 naming the rule and its HAIP section. GET /api/conformance?profile=haip-1.0 ' +
      'reports where the tenant stands',
  )
  .meta({ examples: [HAIP_PROFILE] });
