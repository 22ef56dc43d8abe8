// RFC 8693 token exchange at the management token endpoint: a service administrator (a client
// without a tenant, holding tenants:manage) trades its own access token for a short-lived one that
// acts inside one tenant with the roles it chooses. The subject token alone authenticates the
// caller: it is the administrator's proof of possession, as its client credentials were when the
// token was issued, and asking for the secret again would only spread it further.
import type { AuditService } from '../audit/service.js';
import type { ClientService } from '../clients/service.js';
import type { RequestContext } from '../platform/auth/principal.js';
import { ROLES, type Role } from '../platform/auth/roles.js';
import { InvalidTokenError, type TokenSigner, type TokenVerifier } from '../platform/auth/tokens.js';
import { OAuthError } from '../platform/http/problem.js';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/** An administrator's stay in a tenant is short: 15 minutes at most, then it exchanges again. */
export const EXCHANGED_TOKEN_MAX_SECONDS = 15 * 60;
/** What a tenant's client may hold: every role but the service's own. */
export const TENANT_ROLES: readonly Role[] = ROLES.filter((role) => role !== 'tenants:manage');

export interface ExchangeRequest {
  subjectToken: string | undefined;
  subjectTokenType: string | undefined;
  requestedTokenType: string | undefined;
  audience: string | undefined;
  scope: string | undefined;
  actorToken: string | undefined;
  requestId: string;
}

export interface ExchangeResponse {
  access_token: string;
  issued_token_type: typeof ACCESS_TOKEN_TYPE;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

export interface ExchangeNeeds {
  verifier: TokenVerifier;
  clients: ClientService;
  signer: TokenSigner;
  audit: AuditService;
  tenantActive(tenantId: string): Promise<boolean>;
}

/**
 * Refusals of the subject token use invalid_request, as RFC 8693 section 2.2.2 requires for a
 * subject token "invalid for any reason, or unacceptable based on policy" (not invalid_grant,
 * which RFC 6749 keeps for grants such as codes and refresh tokens).
 */
const refused = (description: string) => new OAuthError(400, 'invalid_request', description);

export class TokenExchange {
  constructor(private readonly needs: ExchangeNeeds) {}

  async exchange(request: ExchangeRequest): Promise<ExchangeResponse> {
    checkRequestShape(request);
    const admin = await this.administratorOf(request.subjectToken as string);
    const tenantId = await this.tenantFor(request.audience);
    const roles = rolesFor(request.scope);
    const nowSeconds = Math.floor(Date.now() / 1000);
    // Never past the subject token's own expiry (so never past JWT_EXPIRES_IN either), nor 15 minutes.
    const expiresAt = Math.min(nowSeconds + EXCHANGED_TOKEN_MAX_SECONDS, Math.floor(admin.expiresAt / 1000));
    if (expiresAt <= nowSeconds) throw refused('subject_token: the access token has expired');
    const token = await this.needs.signer.sign({
      clientId: admin.clientId,
      tenantId,
      roles,
      tokenGeneration: admin.tokenGeneration,
      actor: admin.clientId,
      expiresAt,
    });
    await this.needs.audit.record(actingContext(admin.clientId, tenantId, roles, request.requestId), {
      tenantId,
      actionType: 'token.exchanged',
      after: { adminClientId: admin.clientId, roles, expiresAt: new Date(expiresAt * 1000).toISOString() },
    });
    return {
      access_token: token,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: 'Bearer',
      expires_in: expiresAt - nowSeconds,
      scope: roles.join(' '),
    };
  }

  /** The subject token's client, when it is a service administrator's own, current token. */
  private async administratorOf(subjectToken: string) {
    let verified: Awaited<ReturnType<TokenVerifier['verify']>>;
    try {
      verified = await this.needs.verifier.verify(subjectToken);
    } catch (err) {
      if (err instanceof InvalidTokenError) throw refused(`subject_token: ${err.message}`);
      throw err;
    }
    if (verified.actingIn) throw refused('subject_token: an exchanged token cannot be exchanged again');
    const current = await this.needs.clients.resolvePrincipal(verified.clientId, verified.tokenGeneration);
    if (!current || current.tokenGeneration !== verified.tokenGeneration) {
      throw refused('subject_token: its client no longer exists, or was re-created or given a new secret since');
    }
    const { principal } = current;
    if (principal.tenantId !== null) {
      throw refused(`subject_token: the client '${principal.clientId}' belongs to a tenant; only a service administrator exchanges tokens`);
    }
    if (!principal.roles.includes('tenants:manage')) {
      throw refused(`subject_token: the client '${principal.clientId}' lacks the role tenants:manage`);
    }
    return { clientId: principal.clientId, tokenGeneration: verified.tokenGeneration, expiresAt: verified.expiresAt };
  }

  private async tenantFor(audience: string | undefined): Promise<string> {
    if (!audience) throw new OAuthError(400, 'invalid_request', 'audience: name the tenant id to act in');
    if (!(await this.needs.tenantActive(audience))) {
      throw new OAuthError(400, 'invalid_target', `audience: no active tenant '${audience}'`);
    }
    return audience;
  }
}

function checkRequestShape(request: ExchangeRequest) {
  if (!request.subjectToken) throw new OAuthError(400, 'invalid_request', 'missing subject_token');
  if (request.subjectTokenType !== ACCESS_TOKEN_TYPE) {
    throw new OAuthError(
      400,
      'invalid_request',
      `subject_token_type: '${request.subjectTokenType ?? ''}' is not supported; use ${ACCESS_TOKEN_TYPE}`,
    );
  }
  if (request.requestedTokenType !== undefined && request.requestedTokenType !== ACCESS_TOKEN_TYPE) {
    throw new OAuthError(400, 'invalid_request', `requested_token_type: only ${ACCESS_TOKEN_TYPE} is issued`);
  }
  if (request.actorToken !== undefined) {
    throw new OAuthError(400, 'invalid_request', 'actor_token: not supported; the subject token is the administrator acting');
  }
}

/** The roles asked for in `scope`, all of the tenant's roles when it names none. */
function rolesFor(scope: string | undefined): Role[] {
  const asked = [...new Set((scope ?? '').split(' ').filter(Boolean))];
  if (!asked.length) return [...TENANT_ROLES];
  const unknown = asked.filter((role) => !TENANT_ROLES.includes(role as Role));
  if (unknown.length) {
    throw new OAuthError(400, 'invalid_scope', `scope: ${unknown.join(', ')} is not a role a tenant's client can hold`);
  }
  return TENANT_ROLES.filter((role) => asked.includes(role));
}

/** Who the exchange is recorded as: the administrator in the tenant, as its token will be. */
function actingContext(adminId: string, tenantId: string, roles: Role[], requestId: string): RequestContext {
  return { principal: { clientId: adminId, tenantId, roles, actingAdmin: adminId }, requestId };
}
