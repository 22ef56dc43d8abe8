// Where the chained authorization server of a tenant lives. It is an authorization server of its
// own (RFC 8414), under the management API's prefix as the spec places its PAR endpoint; its
// metadata is at the RFC 8414 well-known location of that identifier.

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
