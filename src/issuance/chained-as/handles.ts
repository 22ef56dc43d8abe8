// The session handles of the chained authorization server: its own purposes, so that the built-in
// server never accepts an offer bound to the chained one (that would skip the upstream login), nor a
// request_uri or code the chained one handed out.
import type { AuthorizationServerRole } from '../authorization/server-role.js';
import type { Issuer } from '../issuers.js';
import { chainedIdentifier } from './urls.js';

export const CHAINED_HANDLE = {
  issuerState: 'chained_as:issuer_state',
  requestUri: 'chained_as:request_uri',
  code: 'chained_as:authorization_code',
  /** The state of the login at the upstream provider: single use, it finds the session at the callback. */
  upstreamState: 'chained_as:upstream_state',
} as const;

export const chainedServerRole = (publicUrl: string): AuthorizationServerRole => ({
  identifier: (issuer: Issuer) => chainedIdentifier(publicUrl, issuer.tenantId),
  // Its routes answer 404 before (requireEnabled); this covers a change of the settings meanwhile.
  disabled: (issuer: Issuer) =>
    issuer.settings.chainedAuthorizationServer?.enabled ? undefined : 'this issuer has no enabled chained authorization server',
  handles: { issuerState: CHAINED_HANDLE.issuerState, requestUri: CHAINED_HANDLE.requestUri, code: CHAINED_HANDLE.code },
  // The login at the upstream provider identifies the person; it runs no interactive authorization steps.
  walletInitiatedRefusal: (config) =>
    config.iaeActions?.length
      ? `'${config.id}' has interactive authorization steps, which the chained authorization server does not run: use the issuer's own authorization server`
      : undefined,
});
