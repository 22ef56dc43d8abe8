// Signed credential issuer metadata (OpenID4VCI 1.0 section 12.2.3): the metadata parameters as the
// top-level claims of a JWT the issuer signs, for wallets whose ecosystem asks for more than TLS to
// authenticate the issuer (HAIP 1.0 section 4.1). The key is found through x5c (as HAIP requires):
// the issuer's attestation key chain, whose certificates a wallet already checks on its credentials.
import { type Signer, signJwtWith } from '../../key-chains/signing.js';

export const SIGNED_METADATA_MEDIA_TYPE = 'application/jwt';
export const SIGNED_METADATA_TYP = 'openidvci-issuer-metadata+jwt';
/**
 * How long a wallet may rely on a signed copy. A day: long enough for wallets that keep the copy, and
 * what changes in between (a configuration, a display) wallets only see on their next fetch anyway.
 */
export const SIGNED_METADATA_LIFETIME_SECONDS = 86_400;

/**
 * The metadata as a JWS: typ openidvci-issuer-metadata+jwt, alg and x5c of the signer (its chain
 * without the trust anchor); iss and sub the credential issuer identifier, iat and exp. The
 * registered claims come last, so no metadata parameter can stand in for them.
 */
export function signIssuerMetadata(signer: Signer, metadata: { credential_issuer: string }, now: number): Promise<string> {
  const iat = Math.floor(now / 1000);
  const issuer = metadata.credential_issuer;
  return signJwtWith(
    signer,
    { typ: SIGNED_METADATA_TYP },
    { ...metadata, iss: issuer, sub: issuer, iat, exp: iat + SIGNED_METADATA_LIFETIME_SECONDS },
  );
}
