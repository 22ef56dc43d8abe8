// A trust framework answers the questions every part of svc asks before it relies on a key: whose
// key verifies a credential's issuer signature, which certificates an X.509 issuer chain (mdoc) must
// lead to, whether a status list signer is trusted, which certificates anchor wallet providers
// (client and key attestations), and with which keys an external authorization server's tokens are
// verified. Each answer names the framework (and the anchor) that decided; a refusal is a
// TrustRefused whose message is the reason given to the caller. A framework that has nothing to say
// on a question leaves its method out.

import type { KeyObject } from 'node:crypto';
import type { JSONWebKeySet, JWSHeaderParameters } from 'jose';
import type { DidKeyResolver } from '../dids/web.js';
import type { FederationTrust } from './federation/trust.js';

/** Why a framework does not trust what it was asked about; the message is shown as it is. */
export class TrustRefused extends Error {
  override name = 'TrustRefused';
}

export interface TrustDecision<T> {
  /** The registry id of the framework that decided. */
  framework: string;
  /** The anchor the decision rests on, when the framework names one (an OpenID Federation trust anchor). */
  anchor?: string;
  value: T;
}

/** What one tenant trusts, gathered once for a presentation (the frameworks read it, they keep no tenant state). */
export interface TenantTrust {
  /** LoTE: the PEM certificates of the tenant's trust lists trusted for credentials (issuers, status list signers). */
  trustedCertificates: string[];
  /** OpenID Federation: the tenant's trust; absent when it takes part in none. */
  federation?: FederationTrust;
  /** Resolves did:web keys of credential issuers (W3C VCs); absent: the service resolves none. */
  dids?: DidKeyResolver;
}

export interface IssuerKeyQuestion {
  /** The protected header of the credential's issuer signature (x5c, kid, alg). */
  header: JWSHeaderParameters;
  /** The credential's iss claim, as it came. */
  iss: unknown;
  /** The anchors the credential query names (trusted_authorities of type openid_federation); absent when it names none. */
  queryAnchors?: string[];
  /** The anchors asked: the query's, else those of the tenant's settings. */
  anchorIds: string[];
  now: Date;
}

export interface StatusListSignerQuestion {
  /** The status list token's x5c chain, leaf first (base64 DER). */
  x5c: string[];
  /** The credential whose status is read (an SD-JWT VC): its issuer, and the federation anchor it was accepted through; absent for others. */
  credential?: { issuer: string; authority?: { type: 'openid_federation'; values: [string] } };
  now: Date;
}

/** Where an external authorization server's keys are: a key set, or the URL that serves it. */
export type AuthorizationServerKeys = { jwks: JSONWebKeySet } | { jwksUri: string };

/** What the frameworks read beyond a TenantTrust; the frameworks themselves keep no state (the registry holds them as they are). */
export interface TrustSources {
  /** The PEM certificates of the tenant's trust lists trusted for a purpose. */
  listedCertificates(tenantId: string, purpose: 'credentials' | 'walletAttestations'): Promise<string[]>;
  /** The PEM certificates of the trusted list at a URL a query names; TrustListUnreadable says why there are none. */
  listCertificates(url: string): Promise<string[]>;
}

/** What matching a DCQL trusted_authorities entry reads of a verified credential. */
export interface AuthorityQuestion {
  /** The issuer's certificate chain as the credential carries it (base64 DER, leaf first); empty when it carries none. */
  chain: string[];
  /** The federation anchor the credential was accepted through, if it was. */
  anchor?: string;
  now: Date;
}

/** The value of a trusted_authorities entry the credential matched, if any, and why lists it named could not be read. */
export interface AuthorityMatch {
  value?: string;
  unread: string[];
}

export interface TrustFramework {
  /** The registry id (src/trust/index.ts). */
  readonly id: string;
  /** How refusals of this framework are labelled when another framework was asked first (hybrid mode). */
  readonly label: string;
  /** The key that verifies a credential's issuer signature. Throws TrustRefused. */
  issuerKey?(trust: TenantTrust, question: IssuerKeyQuestion): Promise<TrustDecision<KeyObject>>;
  /** Whether the signer of a status list token is trusted for the credential; undefined when this framework does not vouch for it. */
  statusListSigner?(trust: TenantTrust, question: StatusListSignerQuestion): Promise<TrustDecision<true> | undefined>;
  /**
   * The PEM certificates an X.509 issuer chain must lead to (an mso_mdoc document signer chain): the
   * mdoc library judges the chain against them, with the signatures it checks, so its checks name why.
   */
  issuerChainAnchors?(trust: TenantTrust): Promise<TrustDecision<string[]>>;
  /** The PEM certificates that anchor wallet providers (client attestations and key attestations). */
  walletProviders?(sources: TrustSources, tenantId: string): Promise<TrustDecision<string[]>>;
  /** The keys of an external authorization server. Throws this framework's refusal (FederationRefused). */
  authorizationServerKeys?(trust: Pick<TenantTrust, 'federation'>, server: string): Promise<TrustDecision<AuthorizationServerKeys>>;
  /** The DCQL trusted_authorities types (OpenID4VP 1.0 section 6.1.1) this framework matches. */
  readonly authorityTypes?: readonly string[];
  /** Which of `values` (of one of authorityTypes) the credential matches. */
  matchAuthority?(sources: TrustSources, type: string, values: string[], question: AuthorityQuestion): Promise<AuthorityMatch>;
}
