// The chained authorization server in the role the shared endpoints (PAR, token) give it: its
// identifier, when it is disabled, and its own session handles (handles.ts says why they are its own).
import type { AuthorizationServerRole } from '../authorization/server-role.js';
import { CHAINED_HANDLE } from '../handles.js';
import type { Issuer } from '../issuers.js';
import { chainedIdentifier } from '../urls.js';

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
