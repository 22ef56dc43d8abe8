// Which authorization server of an issuer an endpoint serves: the built-in one, or the chained one
// (chained-as/). Each hands out its own session handles, so that neither redeems what the other
// issued: an offer bound to the chained server cannot be authorized at the built-in one (which would
// skip the upstream login), and a request_uri or code of one is unknown at the other.
import type { CredentialConfiguration } from '../../credential-configs/service.js';
import { AUTHORIZATION_HANDLE, OFFER_HANDLE } from '../handles.js';
import type { Issuer } from '../issuers.js';

export interface AuthorizationServerRole {
  /** The server's identifier: the audience of client attestation proofs sent to it. */
  identifier(issuer: Issuer): string;
  /**
   * Why the issuer settings keep this server from authorizing now (PAR, the authorization and
   * interactive authorization endpoints, the authorization_code grant), or undefined while it may.
   */
  disabled(issuer: Issuer): string | undefined;
  /** Purposes of the session handles it keeps: the offer's issuer_state, its request_uri and its codes. */
  handles: { issuerState: string; requestUri: string; code: string };
  /**
   * Why this server cannot identify, without an offer (issuer_state), the person a configuration is
   * issued to (a wallet-initiated request, OpenID4VCI 1.0 section 3); undefined when it can.
   */
  walletInitiatedRefusal(config: CredentialConfiguration): string | undefined;
}

/** The built-in server while the issuer setting builtinAuthorizationServerEnabled is false. */
const BUILTIN_SERVER_DISABLED = "this issuer's built-in authorization server is disabled";

export const BUILTIN_SERVER: AuthorizationServerRole = {
  identifier: (issuer) => issuer.urls.issuer,
  disabled: (issuer) => (issuer.settings.builtinAuthorizationServerEnabled ? undefined : BUILTIN_SERVER_DISABLED),
  handles: { issuerState: OFFER_HANDLE.issuerState, requestUri: AUTHORIZATION_HANDLE.requestUri, code: AUTHORIZATION_HANDLE.code },
  // Interactive authorization steps (a PID presentation, the integrator's web page) identify the person.
  walletInitiatedRefusal: (config) =>
    config.iaeActions?.length
      ? undefined
      : `issuer_state is required for '${config.id}': it has no interactive authorization steps, so without a credential offer nothing identifies the person it is for`,
};
