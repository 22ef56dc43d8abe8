// The tenant's DID document (did:web:{host}:issuers:{tenant}, served at /issuers/{tenant}/did.json):
// the public keys of its attestation key chains (current, and previous while still valid), each a
// JsonWebKey verification method named by its kid and listed for assertions, the key's certificate
// chain in its x5c (without the trust anchor), so that a verifier can trust a credential whose issuer
// is this DID through the same X.509 trust lists as one that carries x5c in its header.
import type { JWK } from 'jose';
import { didDocument, didWebOf } from '../../dids/web.js';
import type { KeyChainService } from '../../key-chains/service.js';
import { x5cWithoutAnchor } from '../../key-chains/signing.js';
import { parsePemChain } from '../../platform/crypto/x509.js';
import type { OwnRoute } from '../../platform/outbound/own-urls.js';
import { issuerUrls } from '../urls.js';

export const DID_DOCUMENT_MEDIA_TYPE = 'application/did+json';

const withChain = (jwk: JWK, pem: string): JWK => ({ ...jwk, x5c: x5cWithoutAnchor(parsePemChain(pem)).x5c });

export async function issuerDidDocument(keyChains: Pick<KeyChainService, 'list'>, issuer: string, tenantId: string) {
  const keys: JWK[] = [];
  for (const chain of await keyChains.list(tenantId)) {
    if (chain.usageType !== 'attestation') continue;
    keys.push(withChain(chain.activeJwk, chain.activeCertificate));
    if (chain.previousJwk && chain.previousCertificate) keys.push(withChain(chain.previousJwk, chain.previousCertificate));
  }
  return didDocument(didWebOf(issuer), keys);
}

/** The DID documents as the service's own URLs (OwnUrlsFirst): its verifier resolves its own did:web in-process. */
export function ownDidDocuments(keyChains: Pick<KeyChainService, 'list'>, publicUrl: string): OwnRoute {
  return {
    path: '/issuers/:tenantId/did.json',
    async serve({ tenantId = '' }) {
      const document = await issuerDidDocument(keyChains, issuerUrls(publicUrl, tenantId).issuer, tenantId);
      return { contentType: DID_DOCUMENT_MEDIA_TYPE, body: JSON.stringify(document), headers: {} };
    },
  };
}
