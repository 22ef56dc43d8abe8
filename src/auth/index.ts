// Management tokens: issued here by client credentials (integrated mode), or by the identity
// provider (external mode), whose tokens then count only while the service's record of their client
// exists when it manages clients there.
import type { AuditService } from '../audit/service.js';
import type { ClientService } from '../clients/service.js';
import type { IdentityProvider } from '../identity-provider/provider.js';
import { boundToClientRecords } from '../platform/auth/external-clients.js';
import { integratedTokens, type TokenVerifier } from '../platform/auth/tokens.js';
import type { Executor } from '../platform/db/values.js';
import type { App } from '../platform/http/types.js';
import { TokenExchange } from './exchange.js';
import { tokenRoutes } from './routes.js';
import { TokenService } from './service.js';

export interface AuthNeeds {
  db: Executor;
  clients: ClientService;
  identityProvider: IdentityProvider | undefined;
  masterSecret: string;
  /** JWT_ISSUER and JWT_EXPIRES_IN of the integrated token server. */
  issuer: string;
  expiresIn: number;
  /** TOKEN_FAILED_ATTEMPTS_LIMIT within TOKEN_FAILED_ATTEMPTS_WINDOW seconds. */
  failedAttempts: { failures: number; windowSeconds: number };
  /** OIDC_UI_CLIENT_ID: the console's public client, whose tokens have no client record. */
  consoleClientId: string;
  /** Records token exchanges, in the tenant's log. */
  audit: AuditService;
  /** Whether a tenant exists and is active: the audience of a token exchange. */
  tenantActive(tenantId: string): Promise<boolean>;
}

export function createAuth(needs: AuthNeeds): { verifier: TokenVerifier; routes(app: App): void } {
  const { signer, verifier: integrated } = integratedTokens({
    masterSecret: needs.masterSecret,
    issuer: needs.issuer,
    expiresIn: needs.expiresIn,
  });
  const provider = needs.identityProvider;
  if (provider) {
    const admin = provider.admin;
    const verifier = admin
      ? boundToClientRecords(
          provider.verifier,
          (clientId) => needs.clients.resolvePrincipal(clientId),
          needs.consoleClientId,
          (tenantId, userId) => admin.users.findUser(tenantId, userId),
        )
      : provider.verifier;
    return { verifier, routes: (app) => tokenRoutes(app, { external: provider.metadata }) };
  }
  const tokens = new TokenService(needs.db, needs.clients, signer, needs.failedAttempts);
  const exchange = new TokenExchange({
    verifier: integrated,
    clients: needs.clients,
    signer,
    audit: needs.audit,
    tenantActive: needs.tenantActive,
  });
  return { verifier: integrated, routes: (app) => tokenRoutes(app, { tokens, exchange }) };
}
