// Whose key verifies a W3C VC JWT's issuer signature, and why the verifier trusts it. An issuer URL
// with x5c in the header is judged by the tenant's trust frameworks as an SD-JWT VC issuer is. A DID
// issuer names its key by kid (a DID URL of the issuer): did:web resolved through the service's
// outbound client, did:jwk and did:key read from the identifier; the key is then trusted when the
// certificate chain its DID document gives it (publicKeyJwk.x5c) leads to the tenant's trust lists,
// or when it is the key of a certificate those lists name.
import { createPublicKey, type JsonWebKey, type KeyObject, X509Certificate } from 'node:crypto';
import type { JWK } from 'jose';
import { didOfUrl, keyOfLocalDid } from '../../dids/encoding.js';
import { DidResolutionFailed } from '../../dids/web.js';
import { certificateKey, chainsToTrusted } from '../../platform/crypto/certificate-chains.js';
import { issuerKey, TrustRefused } from '../../trust/index.js';
import type { PresentationContext } from '../presentation-context.js';
import { PresentationRejected } from '../presentation-rejected.js';

const reject = (reason: string) => new PresentationRejected(reason);

export interface TrustedVcIssuer {
  key: KeyObject;
  /** The certificate chain the issuer was trusted through (base64 DER, leaf first), for trusted_authorities; empty without one. */
  chain: string[];
}

/** The issuer's identifier: `issuer` is a URL or an object whose id is one (VCDM 2.0 section 4.7). */
export function issuerIdOf(credential: Record<string, unknown>): string | undefined {
  const { issuer } = credential;
  if (typeof issuer === 'string') return issuer;
  if (issuer && typeof issuer === 'object' && typeof (issuer as { id?: unknown }).id === 'string') return (issuer as { id: string }).id;
  return undefined;
}

export async function trustedVcIssuerKey(
  header: Record<string, unknown>,
  issuer: string,
  context: PresentationContext,
): Promise<TrustedVcIssuer> {
  if (issuer.startsWith('did:')) return didIssuerKey(header, issuer, context);
  try {
    const decision = await issuerKey(context, { header, iss: issuer, now: context.now });
    const x5c = Array.isArray(header.x5c) ? header.x5c.filter((c): c is string => typeof c === 'string') : [];
    return { key: decision.value, chain: x5c };
  } catch (err) {
    if (err instanceof TrustRefused) throw reject(err.message);
    throw err;
  }
}

async function didIssuerKey(header: Record<string, unknown>, issuer: string, context: PresentationContext): Promise<TrustedVcIssuer> {
  const kid = header.kid;
  if (typeof kid !== 'string' || didOfUrl(kid) !== issuer) throw reject('issuer signature: kid must be a DID URL of the issuer');
  const jwk = await didKey(kid, context);
  let key: KeyObject;
  try {
    key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } as JsonWebKey, format: 'jwk' });
  } catch {
    throw reject(`issuer signature: ${kid} is not a usable public key`);
  }
  const chain = Array.isArray(jwk.x5c) ? jwk.x5c : [];
  if (chain.length) {
    const leaf = chain[0] as string;
    let leafKey: KeyObject | undefined;
    try {
      leafKey = certificateKey(leaf);
    } catch {
      leafKey = undefined;
    }
    if (!leafKey?.equals(key)) throw reject(`untrusted issuer: the x5c of ${kid} is not the certificate of its key`);
    if (chainsToTrusted(chain, context.trustedCertificates, context.now)) return { key, chain };
  }
  if (context.trustedCertificates.some((pem) => certificateHasKey(pem, key))) return { key, chain };
  throw reject(`untrusted issuer: the key of ${kid} leads to no trusted certificate`);
}

async function didKey(kid: string, context: PresentationContext): Promise<JWK> {
  if (kid.startsWith('did:web:')) {
    if (!context.dids) throw reject('issuer signature: did:web issuers are not resolved here');
    try {
      return await context.dids.assertionKey(kid);
    } catch (err) {
      if (err instanceof DidResolutionFailed) throw reject(`issuer signature: ${err.message}`);
      throw err;
    }
  }
  const local = keyOfLocalDid(kid);
  if (!local) throw reject('issuer signature: the issuer DID is not did:web, did:jwk or did:key, or does not decode');
  return local;
}

function certificateHasKey(pem: string, key: KeyObject): boolean {
  try {
    return new X509Certificate(pem).publicKey.equals(key);
  } catch {
    return false;
  }
}
