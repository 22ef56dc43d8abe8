// The X.509 trust framework of DCQL trusted_authorities: type aki (HAIP 1.0 section 5 makes it
// mandatory) matches a certificate of the credential's chain by its AuthorityKeyIdentifier; type
// etsi_tl matches when the chain leads to a certificate of the ETSI trusted list the query names.
import { chainsToTrusted } from '../../platform/crypto/certificate-chains.js';
import { authorityKeyIdentifier } from '../../platform/crypto/der.js';
import type { TrustFramework } from '../framework.js';
import { TrustListUnreadable } from './etsi-trust-lists.js';

/** The raw AuthorityKeyIdentifiers of the chain's certificates; a certificate that cannot be read adds none. */
function authorityKeyIdentifiersOf(chain: string[]): Buffer[] {
  return chain.flatMap((certificate) => {
    try {
      const aki = authorityKeyIdentifier(Buffer.from(certificate, 'base64'));
      return aki ? [Buffer.from(aki)] : [];
    } catch {
      return [];
    }
  });
}

export const x509Framework: TrustFramework = {
  id: 'x509',
  label: 'X.509',
  authorityTypes: ['aki', 'etsi_tl'],
  async matchAuthority(sources, type, values, { chain, now }) {
    if (type === 'aki') {
      const identifiers = authorityKeyIdentifiersOf(chain);
      const value = values.find((v) => {
        const wanted = Buffer.from(v, 'base64url');
        return wanted.length > 0 && identifiers.some((aki) => aki.equals(wanted));
      });
      return { value, unread: [] };
    }
    const unread: string[] = [];
    for (const url of values) {
      try {
        if (chainsToTrusted(chain, await sources.listCertificates(url), now)) return { value: url, unread };
      } catch (err) {
        if (!(err instanceof TrustListUnreadable)) throw err;
        unread.push(`the trusted list ${url} was not read: ${err.message}`);
      }
    }
    return { unread };
  },
};
