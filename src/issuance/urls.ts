// Where the wallet-facing endpoints of a tenant's credential issuer and its authorization servers
// live. The built-in authorization server shares the issuer's identifier; the chained one is an
// authorization server of its own (RFC 8414), under the management API's prefix as the spec places
// its PAR endpoint, its metadata at the RFC 8414 well-known location of that identifier.
import type { CredentialConfiguration } from '../credential-configs/service.js';

export interface ChainedUrls {
  /** The authorization server identifier (iss of its metadata and of its authorization responses). */
  identifier: string;
  metadata: string;
  par: string;
  authorize: string;
  /** Where the upstream OpenID Provider sends the user back (the redirect_uri to register there). */
  callback: string;
  token: string;
}

export const CHAINED_PATH = 'chained-as-vp';

export function chainedIdentifier(publicUrl: string, tenantId: string): string {
  return `${publicUrl}/api/issuers/${encodeURIComponent(tenantId)}/${CHAINED_PATH}`;
}

export function chainedUrls(publicUrl: string, tenantId: string): ChainedUrls {
  const identifier = chainedIdentifier(publicUrl, tenantId);
  return {
    identifier,
    metadata: `${publicUrl}/.well-known/oauth-authorization-server/api/issuers/${encodeURIComponent(tenantId)}/${CHAINED_PATH}`,
    par: `${identifier}/par`,
    authorize: `${identifier}/authorize`,
    callback: `${identifier}/callback`,
    token: `${identifier}/token`,
  };
}

export interface IssuerUrls {
  issuer: string;
  token: string;
  par: string;
  authorize: string;
  /** Challenges for wallet attestation proofs (attestation-based client authentication). */
  challenge: string;
  /**
   * Interactive authorization (OpenID4VCI 1.1 draft): the Authorization Challenge Endpoint of the
   * current draft, the Interactive Authorization Endpoint of the drafts before, and where a web step's
   * signed result is posted.
   */
  authorizationChallenge: string;
  iae: string;
  iaeWebResult: string;
  nonce: string;
  credential: string;
  deferred: string;
  notification: string;
  jwks: string;
  types: string;
  /** Token Status List aggregation (draft-ietf-oauth-status-list section 9.1). */
  statusListAggregation: string;
  /** Identifier of the tenant's chained authorization server (chained-as/), when it has one. */
  chainedAuthorizationServer: string;
}

export function issuerUrls(publicUrl: string, tenantId: string): IssuerUrls {
  const issuer = `${publicUrl}/issuers/${encodeURIComponent(tenantId)}`;
  return {
    issuer,
    token: `${issuer}/token`,
    par: `${issuer}/par`,
    authorize: `${issuer}/authorize`,
    challenge: `${issuer}/challenge`,
    // The path of First-Party Apps' and OpenID4VCI's examples, beside /authorize.
    authorizationChallenge: `${issuer}/authorize-challenge`,
    iae: `${issuer}/iae`,
    iaeWebResult: `${issuer}/iae/web-result`,
    nonce: `${issuer}/nonce`,
    credential: `${issuer}/credential`,
    deferred: `${issuer}/deferred-credential`,
    notification: `${issuer}/notification`,
    jwks: `${issuer}/jwks.json`,
    types: `${issuer}/types`,
    statusListAggregation: `${issuer}/status-lists`,
    chainedAuthorizationServer: chainedIdentifier(publicUrl, tenantId),
  };
}

/** The vct of an SD-JWT VC configuration: the given URI, or the URL where the service hosts the type. */
export function vctOf(config: CredentialConfiguration, urls: IssuerUrls): string {
  if (typeof config.vct === 'string') return config.vct;
  return `${urls.types}/${encodeURIComponent(config.id)}`;
}
