// DCQL trusted_authorities (OpenID4VP 1.0 section 6.1.1): which authority a verified credential
// matches among those its credential query names. HAIP 1.0 section 5 makes type `aki` mandatory.
// The issuer's trust itself is decided before (issuer-trust.ts, mdoc.ts: the tenant's trust lists
// or federation); a query's authorities narrow what it accepts, each type matched by its trust
// framework (src/trust: x509 for aki and etsi_tl, federation for openid_federation). A credential that matches none is
// rejected with a reason that names the query; one that matches carries the authority it matched,
// which the dcql library checks again against the query with the claims.

import { isJsonObject } from '../../platform/json.js';
import type { TrustService } from '../../trust/index.js';
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

export class TrustedAuthorities {
  constructor(private readonly trust: Pick<TrustService, 'matchAuthority'>) {}

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

  /** The value of `authority` the credential matches, if any, as the trust framework of its type decides. */
  private async matching(
    authority: AuthorityQuery,
    credential: IssuedCredential,
    chain: string[],
    now: Date,
    unread: string[],
  ): Promise<string | undefined> {
    const anchor = credential.authority?.values[0];
    const match = await this.trust.matchAuthority(authority.type, authority.values, {
      chain,
      now,
      ...(anchor !== undefined && { anchor }),
    });
    unread.push(...match.unread);
    return match.value;
  }
}
