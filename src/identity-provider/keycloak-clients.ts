// Machine clients as Keycloak confidential clients: client credentials only (a service account),
// the secret the service hands out once, realm roles on the service account, and two protocol
// mappers on every client: an audience mapper adding svc-service, and a hardcoded-claim mapper
// putting the client's tenant into its tokens under the claim OIDC_SUB.
import { TOKEN_AUDIENCE } from '../platform/auth/tokens.js';
import { Problem } from '../platform/http/problem.js';
import type { ClientAdmin, EnsuredClient, ProviderClient } from './admin.js';
import type { KeycloakApi } from './keycloak-api.js';

/** Keycloak's ProtocolMapperRepresentation. */
interface ProtocolMapper {
  name: string;
  protocol: 'openid-connect';
  protocolMapper: string;
  config: Record<string, string>;
}

const clientPath = (uuid: string) => `/clients/${encodeURIComponent(uuid)}`;
const AUDIENCE_MAPPER = 'svc-service audience';
const TENANT_MAPPER = 'svc tenant';

export class KeycloakClients implements ClientAdmin {
  constructor(
    private readonly api: KeycloakApi,
    /** The claim that carries the tenant (OIDC_SUB). */
    private readonly tenantClaim: string,
  ) {}

  async createClient(client: ProviderClient, secret: string): Promise<void> {
    const action = `creating client '${client.clientId}'`;
    const created = await this.api.call(action, 'POST', '/clients', {
      clientId: client.clientId,
      description: client.description ?? '',
      enabled: true,
      protocol: 'openid-connect',
      publicClient: false,
      bearerOnly: false,
      clientAuthenticatorType: 'client-secret',
      secret,
      serviceAccountsEnabled: true,
      standardFlowEnabled: false,
      implicitFlowEnabled: false,
      directAccessGrantsEnabled: false,
      protocolMappers: this.mappersOf(client),
    });
    const uuid = created.createdId || (await this.uuidOf(client.clientId));
    if (!uuid) throw new Problem(502, 'Bad Gateway', `${action}: the identity provider did not say where the client is`);
    // A client without its roles would be a client that looks made but cannot work: take it back.
    try {
      await this.api.setRealmRoles(await this.serviceAccountOf(uuid), client.roles);
    } catch (err) {
      await this.api.call(`removing client '${client.clientId}' again`, 'DELETE', clientPath(uuid)).catch(() => {});
      throw err;
    }
  }

  async updateClient(client: ProviderClient): Promise<void> {
    const uuid = await this.existing(client.clientId);
    const path = clientPath(uuid);
    const current = (await this.api.call(`reading client '${client.clientId}'`, 'GET', path)).body as Record<string, unknown>;
    if ((current.description ?? '') !== (client.description ?? '')) {
      await this.api.call(`updating client '${client.clientId}'`, 'PUT', path, { ...current, description: client.description ?? '' });
    }
    await this.api.setRealmRoles(await this.serviceAccountOf(uuid), client.roles);
  }

  async deleteClient(clientId: string): Promise<void> {
    const uuid = await this.uuidOf(clientId);
    if (uuid) await this.api.call(`deleting client '${clientId}'`, 'DELETE', clientPath(uuid), undefined, true);
  }

  async rotateSecret(clientId: string): Promise<string> {
    const uuid = await this.existing(clientId);
    const reply = await this.api.call(`rotating the secret of '${clientId}'`, 'POST', `${clientPath(uuid)}/client-secret`);
    const value = (reply.body as { value?: unknown } | undefined)?.value;
    if (typeof value !== 'string' || !value)
      throw new Problem(502, 'Bad Gateway', `the identity provider returned no new secret for '${clientId}'`);
    return value;
  }

  async ensureClient(client: ProviderClient, secret: string): Promise<EnsuredClient> {
    const uuid = await this.uuidOf(client.clientId);
    if (!uuid) {
      await this.createClient(client, secret);
      return 'created';
    }
    const path = clientPath(uuid);
    const current = (await this.api.call(`reading client '${client.clientId}'`, 'GET', path)).body as Record<string, unknown>;
    const stored = (await this.api.call(`reading the secret of '${client.clientId}'`, 'GET', `${path}/client-secret`)).body as
      | { value?: unknown }
      | undefined;
    const secretChanged = stored?.value !== secret;
    if (secretChanged) await this.api.call(`setting the secret of '${client.clientId}'`, 'PUT', path, { ...current, secret });
    const mappersAdded = await this.addMissingMappers(client, uuid, current.protocolMappers);
    const rolesChanged = await this.api.setRealmRoles(await this.serviceAccountOf(uuid), client.roles);
    if (secretChanged) return 'secret replaced';
    return mappersAdded || rolesChanged ? 'updated' : 'unchanged';
  }

  /** Adds the service's mappers a client lacks (made by hand, or before the tenant claim changed). */
  private async addMissingMappers(client: ProviderClient, uuid: string, present: unknown): Promise<boolean> {
    const has = (wanted: ProtocolMapper) =>
      Array.isArray(present) &&
      present.some(
        (m: ProtocolMapper) =>
          m.protocolMapper === wanted.protocolMapper && Object.entries(wanted.config).every(([key, value]) => m.config?.[key] === value),
      );
    const missing = this.mappersOf(client).filter((mapper) => !has(mapper));
    for (const mapper of missing) {
      await this.api.call(
        `adding mapper '${mapper.name}' to '${client.clientId}'`,
        'POST',
        `${clientPath(uuid)}/protocol-mappers/models`,
        mapper,
      );
    }
    return missing.length > 0;
  }

  private mappersOf(client: ProviderClient): ProtocolMapper[] {
    const inAccessToken = { 'access.token.claim': 'true', 'id.token.claim': 'false' };
    const audience: ProtocolMapper = {
      name: AUDIENCE_MAPPER,
      protocol: 'openid-connect',
      protocolMapper: 'oidc-audience-mapper',
      config: { 'included.custom.audience': TOKEN_AUDIENCE, ...inAccessToken },
    };
    if (!client.tenantId) return [audience];
    const tenant: ProtocolMapper = {
      name: TENANT_MAPPER,
      protocol: 'openid-connect',
      protocolMapper: 'oidc-hardcoded-claim-mapper',
      config: { 'claim.name': this.tenantClaim, 'claim.value': client.tenantId, 'jsonType.label': 'String', ...inAccessToken },
    };
    return [audience, tenant];
  }

  /** Keycloak's own id of the client (a UUID), found by its clientId; undefined when there is none. */
  private async uuidOf(clientId: string): Promise<string | undefined> {
    const reply = await this.api.call(`looking up client '${clientId}'`, 'GET', `/clients?clientId=${encodeURIComponent(clientId)}`);
    const found = Array.isArray(reply.body) ? reply.body.find((c: { clientId?: unknown }) => c.clientId === clientId) : undefined;
    return typeof found?.id === 'string' ? found.id : undefined;
  }

  private async existing(clientId: string): Promise<string> {
    const uuid = await this.uuidOf(clientId);
    if (!uuid) throw new Problem(502, 'Bad Gateway', `client '${clientId}' is known here but missing at the identity provider`);
    return uuid;
  }

  private async serviceAccountOf(uuid: string): Promise<string> {
    const reply = await this.api.call('reading the service account', 'GET', `${clientPath(uuid)}/service-account-user`);
    const id = (reply.body as { id?: unknown } | undefined)?.id;
    if (typeof id !== 'string') throw new Problem(502, 'Bad Gateway', 'the identity provider named no service account for the client');
    return id;
  }
}
