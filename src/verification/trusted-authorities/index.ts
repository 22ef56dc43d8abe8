// DCQL trusted_authorities (OpenID4VP 1.0 section 6.1.1): which authority a verified credential
// matches among those its credential query names. HAIP 1.0 section 5 makes type `aki` mandatory.
// The issuer's trust itself is decided before (issuer-trust.ts, mdoc.ts: the tenant's trust lists
// or federation); a query's authorities narrow what it accepts. A credential that matches none is
// rejected with a reason that names the query; one that matches carries the authority it matched,
// which the dcql library checks again against the query with the claims.

import { chainsToTrusted } from '../../platform/crypto/certificate-chains.js';
import { authorityKeyIdentifier } from '../../platform/crypto/der.js';
import { isJsonObject } from '../../platform/json.js';
import { type EtsiTrustLists, TrustListUnreadable } from '../../trust/x509/etsi-trust-lists.js';
import { PresentationRejected } from '../errors.js';

export type TrustedAuthorityType = 'aki' | 'etsi_tl' | 'openid_federation';
/** The authority a credential matched, as the dcql library reads it: the type and the one value matched. */
export interface MatchedAuthority {
  type: TrustedAuthorityType;
  values: [string];
}

/** What the matching needs of a verified credential. */
export interface IssuedCredential {
  /** The issuer's certificate chain as the credential carries it (base64 DER, leaf first); empty when it carries none. */
  issuerChain?: string[];
  /** Set when the issuer was trusted through OpenID Federation: the trust anchor it resolved to. */
  authority?: { type: 'openid_federation'; values: [string] };
}

/** A credential as kept once accepted: without its chain, with the authority it matched. */
export type AcceptedBy<C> = C extends IssuedCredential ? Omit<C, 'issuerChain' | 'authority'> & { authority?: MatchedAuthority } : never;

interface AuthorityQuery {
  type: string;
  values: string[];
}

/** The query's trusted_authorities as saved (validated by the dcql library); entries of other shapes are skipped. */
function authoritiesOf(query: { trusted_authorities?: unknown }): AuthorityQuery[] | undefined {
  if (!Array.isArray(query.trusted_authorities)) return undefined;
  return query.trusted_authorities.filter(
    (entry): entry is AuthorityQuery =>
      isJsonObject(entry) &&
      typeof entry.type === 'string' &&
      Array.isArray(entry.values) &&
      entry.values.every((v) => typeof v === 'string'),
  );
}

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

export class TrustedAuthorities {
  constructor(private readonly etsiLists: EtsiTrustLists) {}

  /**
   * The credential as it is kept (without its chain), with the authority it matched when its query
   * names trusted_authorities; rejected when it matches none of them.
   */
  async accept<C extends IssuedCredential>(
    query: { id: string; trusted_authorities?: unknown },
    credential: C,
    now: Date,
  ): Promise<AcceptedBy<C>> {
    // The federation anchor a credential was trusted through stays with it; a matched authority replaces it.
    const { issuerChain = [], ...rest } = credential;
    const kept = rest as AcceptedBy<C>;
    const authorities = authoritiesOf(query);
    if (!authorities) return kept;
    const unread: string[] = [];
    for (const authority of authorities) {
      const value = await this.matching(authority, credential, issuerChain, now, unread);
      if (value !== undefined) return { ...kept, authority: { type: authority.type as TrustedAuthorityType, values: [value] } };
    }
    const types = [...new Set(authorities.map((a) => a.type))].join(', ');
    const why = unread.length ? `; ${unread.join('; ')}` : '';
    throw new PresentationRejected(
      `trusted_authorities: the credential presented for '${query.id}' matches none of the authorities its query names (${types})${why}`,
    );
  }

  /** The value of `authority` the credential matches, if any. */
  private async matching(
    authority: AuthorityQuery,
    credential: IssuedCredential,
    chain: string[],
    now: Date,
    unread: string[],
  ): Promise<string | undefined> {
    if (authority.type === 'aki') {
      const identifiers = authorityKeyIdentifiersOf(chain);
      return authority.values.find((value) => {
        const wanted = Buffer.from(value, 'base64url');
        return wanted.length > 0 && identifiers.some((aki) => aki.equals(wanted));
      });
    }
    if (authority.type === 'openid_federation') {
      const anchor = credential.authority?.values[0];
      return authority.values.find((value) => value === anchor);
    }
    if (authority.type === 'etsi_tl') {
      for (const url of authority.values) {
        try {
          if (chainsToTrusted(chain, await this.etsiLists.certificates(url), now)) return url;
        } catch (err) {
          if (!(err instanceof TrustListUnreadable)) throw err;
          unread.push(`the trusted list ${url} was not read: ${err.message}`);
        }
      }
    }
    return undefined;
  }
}
