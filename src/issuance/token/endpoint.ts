// The token endpoint of the built-in authorization server (OpenID4VCI 1.0 section 6): the grant the
// body names, each in its own file, redeemed with the wallet's DPoP key when it sent a proof. The
// client attestation, when sent (or required), is verified first, for every grant (HAIP).

import type { DpopProofs } from '../access/dpop.js';
import { type AuthorizationServerRole, BUILTIN_SERVER } from '../authorization/server-role.js';
import type { WalletAttestations } from '../authorization/wallet-attestation.js';
import { unsupportedGrantType } from '../errors.js';
import { AUTHORIZATION_CODE_GRANT, PRE_AUTHORIZED_GRANT, REFRESH_TOKEN_GRANT } from '../grants.js';
import type { IssuerDirectory } from '../issuers.js';
import type { AuthorizationCodeGrant } from './authorization-code.js';
import type { TokenRequest } from './grant.js';
import type { PreAuthorizedCodeGrant } from './pre-authorized-code.js';
import type { RefreshTokenGrant } from './refresh-token.js';
import { parseTokenRequest } from './schemas.js';
import type { TokenResponse } from './session-tokens.js';

export interface TokenGrants {
  preAuthorizedCode: PreAuthorizedCodeGrant;
  authorizationCode: AuthorizationCodeGrant;
  refreshToken: RefreshTokenGrant;
}

export class TokenEndpoint {
  constructor(
    private readonly issuers: IssuerDirectory,
    private readonly dpop: DpopProofs,
    private readonly grants: TokenGrants,
    private readonly attestations: WalletAttestations,
    /** The built-in server, or the chained one (the audience of client attestation proofs). */
    private readonly server: AuthorizationServerRole = BUILTIN_SERVER,
  ) {}

  async exchange(request: TokenRequest): Promise<TokenResponse> {
    const issuer = await this.issuers.get(request.tenantId);
    const grant = parseTokenRequest(request.body);
    // A disabled server grants nothing by authorization code (RFC 6749 section 5.2: unsupported_grant_type);
    // pre-authorized codes and the refresh tokens of sessions it authorized before are still redeemed.
    const disabled = grant.grant_type === AUTHORIZATION_CODE_GRANT && this.server.disabled(issuer);
    if (disabled) throw unsupportedGrantType(disabled);
    const clientId = 'client_id' in grant ? grant.client_id : undefined;
    const audience = this.server.identifier(issuer);
    // The authorization code grant remembers the attestation proof's jti in the statement that spends the code.
    const verified =
      grant.grant_type === AUTHORIZATION_CODE_GRANT
        ? await this.attestations.verify(issuer, clientId, request.attestation, audience)
        : undefined;
    const attested = verified ? verified.attested : await this.attestations.check(issuer, clientId, request.attestation, audience);
    const call = {
      issuer,
      request,
      attested,
      attestationReplay: verified?.replay,
      dpopKey: () => this.dpop.keyOf(request, issuer.settings),
      dpopProof: () => this.dpop.proofOf(request, issuer.settings),
    };
    switch (grant.grant_type) {
      case PRE_AUTHORIZED_GRANT:
        return this.grants.preAuthorizedCode.redeem({ ...call, grant });
      case AUTHORIZATION_CODE_GRANT:
        return this.grants.authorizationCode.redeem({ ...call, grant });
      case REFRESH_TOKEN_GRANT:
        return this.grants.refreshToken.redeem({ ...call, grant });
    }
  }
}
