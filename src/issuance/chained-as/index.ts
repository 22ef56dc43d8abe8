// The chained authorization server: an authorization server of each tenant that logs the user in at
// an upstream OpenID Provider (issuer settings: chainedAuthorizationServer) and issues its own codes,
// redeemed for access tokens the credential endpoint accepts. PAR and the token endpoint are the
// built-in server's, with this server's handles and identifier (authorization/server-role.ts).
import type { CredentialConfigService } from '../../credential-configs/service.js';
import type { Sealer } from '../../platform/crypto/sealed.js';
import type { Executor } from '../../platform/db/values.js';
import type { App } from '../../platform/http/types.js';
import type { SessionService } from '../../sessions/service.js';
import type { DpopProofs } from '../access/dpop.js';
import { PushedAuthorizationEndpoint } from '../authorization/par.js';
import type { WalletAttestations } from '../authorization/wallet-attestation.js';
import type { WalletInitiatedLimit } from '../authorization/wallet-initiated-limit.js';
import { CHAINED_HANDLE } from '../handles.js';
import type { IssuerDirectory } from '../issuers.js';
import { AuthorizationCodeGrant } from '../token/authorization-code.js';
import { TokenEndpoint, type TokenGrants } from '../token/endpoint.js';
import type { SessionTokens } from '../token/session-tokens.js';
import type { UpstreamProviders } from '../upstream-providers.js';
import { ChainedLogin, noChainedServer } from './login.js';
import { chainedAuthorizationRoutes } from './routes.js';
import { chainedServerRole } from './server-role.js';

export interface ChainedAuthorizationNeeds {
  db: Executor;
  publicUrl: string;
  issuers: IssuerDirectory;
  sessions: SessionService;
  configs: CredentialConfigService;
  dpop: DpopProofs;
  attestations: WalletAttestations;
  sessionTokens: SessionTokens;
  /** The built-in server's grants; the authorization code grant is replaced by one for this server's codes. */
  grants: TokenGrants;
  /** Opens the client secret sealed in the issuer settings. */
  settingsSealer: Sealer;
  /** The upstream provider's metadata, keys and endpoints (through the outbound client). */
  upstream: UpstreamProviders;
  /** The bound on wallet-initiated requests, shared with the built-in server's PAR. */
  walletInitiated: WalletInitiatedLimit;
}

export function createChainedAuthorization(needs: ChainedAuthorizationNeeds) {
  const { db, publicUrl, issuers, sessions } = needs;
  const role = chainedServerRole(publicUrl);
  const par = new PushedAuthorizationEndpoint(
    db,
    issuers,
    sessions,
    needs.configs,
    needs.dpop,
    needs.attestations,
    needs.walletInitiated,
    role,
  );
  const login = new ChainedLogin(publicUrl, issuers, sessions, needs.upstream, needs.settingsSealer);
  const grants = { ...needs.grants, authorizationCode: new AuthorizationCodeGrant(sessions, needs.sessionTokens, CHAINED_HANDLE.code) };
  const token = new TokenEndpoint(issuers, needs.dpop, grants, needs.attestations, role);
  const requireEnabled = async (tenantId: string) => {
    const issuer = await issuers.get(tenantId);
    if (!issuer.settings.chainedAuthorizationServer?.enabled) throw noChainedServer();
  };
  return {
    routes(app: App) {
      chainedAuthorizationRoutes(app, publicUrl, { issuers, par, login, token, configs: needs.configs, requireEnabled });
    },
  };
}
