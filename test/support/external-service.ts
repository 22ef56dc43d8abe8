// The service in external mode against a fake Keycloak realm (oidc-provider.ts with `realm`): the
// root client (AUTH_CLIENT_ID) is made at the provider at start-up, and every token comes from the
// provider's token endpoint. Offers the same steps as TestService (tenant, client), so tests can run
// unchanged in both modes.
import type { Role } from '../../src/platform/auth/roles.js';
import { ADMIN_CLIENT, clientCredentialsToken, startOpenIdProvider, type TestProvider } from './oidc-provider.js';
import { ALL_TENANT_ROLES, ROOT_ID, startService, type TestService } from './service.js';

export const REALM = 'svc';

export interface ExternalService {
  svc: TestService;
  op: TestProvider;
  /** A token of `clientId` from the provider; fails the test when the provider refuses. */
  token(clientId: string, secret: string): Promise<string>;
  rootToken(): Promise<string>;
  tenant(id: string, roles?: Role[]): Promise<{ token: string; clientId: string; secret: string }>;
  client(adminToken: string, clientId: string, roles: Role[]): Promise<string>;
  stop(): Promise<void>;
}

export async function startExternalService(env: Record<string, string> = {}): Promise<ExternalService> {
  const op = await startOpenIdProvider({ realm: REALM, clients: [] });
  const svc = await startService({
    OIDC: op.issuer,
    OIDC_CLIENT_ID: ADMIN_CLIENT.clientId,
    OIDC_CLIENT_SECRET: ADMIN_CLIENT.secret,
    ...env,
  });
  const token = async (clientId: string, secret: string) => {
    const { status, token } = await clientCredentialsToken(op.issuer, clientId, secret);
    if (!token) throw new Error(`the provider gave ${clientId} no token (${status})`);
    return token;
  };
  return {
    svc,
    op,
    token,
    rootToken: () => token(ROOT_ID, svc.rootSecret),
    async tenant(id, roles = ALL_TENANT_ROLES) {
      const reply = await svc.raw('POST', '/api/tenant', {
        token: await token(ROOT_ID, svc.rootSecret),
        body: { id, name: `Tenant ${id}`, roles },
      });
      if (reply.status !== 201) throw new Error(`tenant ${id}: ${reply.status} ${reply.text}`);
      const { clientId, secret } = reply.body.client;
      return { token: await token(clientId, secret), clientId, secret };
    },
    async client(adminToken, clientId, roles) {
      const reply = await svc.call('POST', '/api/client', { token: adminToken, body: { clientId, roles } });
      if (reply.status !== 201) throw new Error(`client ${clientId}: ${reply.status} ${reply.text}`);
      return token(clientId, reply.body.secret);
    },
    async stop() {
      await svc.stop();
      await op.stop();
    },
  };
}
