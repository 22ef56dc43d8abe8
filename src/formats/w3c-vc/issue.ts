// W3C Verifiable Credentials (VCDM 2.0) secured with JOSE (VC-JOSE-COSE section 3.1.1): the JWT
// payload is the credential itself (`typ: vc+jwt`), the configuration's claims in credentialSubject
// with the holder's DID as its id, and the JWT claims iss, iat, exp and sub repeating issuer,
// validFrom, validUntil and the subject for JWT libraries. VCDM 1.1's `vc` claim is not issued.
import type { JWK } from 'jose';
import { didJwkOf, didKeyOf, keyOfLocalDid, publicEcJwk } from '../../dids/encoding.js';
import { didWebOf } from '../../dids/web.js';
import type { Signer } from '../../key-chains/signing.js';

export const VC_CONTEXT = 'https://www.w3.org/ns/credentials/v2';
export const VC_TYPE = 'VerifiableCredential';
export const VC_JWT_TYP = 'vc+jwt';

/** How a credential names its issuer: the credential issuer URL with x5c in the header, or its did:web with kid. */
export type VcIssuerIdentifier = 'x5c' | 'did:web';

export interface VcInput {
  issuedAt: Date;
  /** The credential issuer identifier (an https URL). */
  issuer: string;
  issuerIdentifier: VcIssuerIdentifier;
  /** The credential type after VerifiableCredential. */
  type: string;
  claims: Record<string, unknown>;
  holderJwk?: JWK;
  lifetimeSeconds?: number | null;
}

const b64url = (value: string | Uint8Array) => Buffer.from(value).toString('base64url');
const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

/**
 * The holder's DID: the did:key the proof named as its kid (kept as the key's kid, see
 * issuance/credential-request/proofs.ts) when it names this very key, else the did:jwk of the key.
 */
export function holderDid(jwk: JWK): string {
  const named = typeof jwk.kid === 'string' && jwk.kid.startsWith('did:key:') ? jwk.kid.split('#')[0] : undefined;
  const same = named && keyOfLocalDid(named);
  return named && same && didKeyOf(same) === didKeyOf(publicEcJwk(jwk)) ? named : didJwkOf(jwk);
}

export async function issueVcJwt(input: VcInput, signer: Signer): Promise<string> {
  const iat = Math.floor(input.issuedAt.getTime() / 1000);
  const exp = input.lifetimeSeconds ? iat + input.lifetimeSeconds : undefined;
  const issuer = input.issuerIdentifier === 'did:web' ? didWebOf(input.issuer) : input.issuer;
  const subject = input.holderJwk && holderDid(input.holderJwk);
  const payload = {
    '@context': [VC_CONTEXT],
    type: [VC_TYPE, input.type],
    issuer,
    validFrom: iso(iat),
    ...(exp && { validUntil: iso(exp) }),
    // The service's own members come after the claims: a claim cannot replace the subject's id.
    credentialSubject: { ...input.claims, ...(subject && { id: subject }) },
    iss: issuer,
    iat,
    ...(exp && { exp }),
    ...(subject && { sub: subject }),
  };
  const header = {
    alg: signer.algorithm,
    typ: VC_JWT_TYP,
    ...(input.issuerIdentifier === 'did:web' ? { kid: `${issuer}#${signer.kid}` } : { x5c: signer.x5c }),
  };
  const signingInput = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  return `${signingInput}.${b64url(await signer.sign(Buffer.from(signingInput)))}`;
}
