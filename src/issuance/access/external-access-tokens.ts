// Access tokens of an external authorization server (issuer settings authorizationServers) at the
// credential endpoints. Such a server authorizes the wallet itself, so its token is the only thing
// the wallet brings here: a JWT access token (RFC 9068) that names this credential issuer as its
// audience, signed by a key of the server's jwks_uri (RFC 8414 metadata, else OpenID Connect
// Discovery). What it grants is read from it: the credential configurations of its
// authorization_details (openid_credential) and those whose `scope` is among its scope values.
// The first request with a token opens an issuance session for it (one per token: its iss and jti);
// the token's own claims about the user are the authorization's claims, and each credential takes
// the part its configuration declares (an attribute provider or webhook of the configuration may
// still supply them).
import { createHash } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, type JWTPayload, type JWTVerifyOptions, jwtVerify } from 'jose';
import { z } from 'zod';
import type { CredentialConfigService } from '../../credential-configs/service.js';
import { type Executor, inTransaction } from '../../platform/db/values.js';
import type { SessionState } from '../../sessions/model.js';
import type { SessionService } from '../../sessions/service.js';
import { FederationRefused } from '../../trust/federation/entity-statement.js';
import type { TrustService } from '../../trust/index.js';
import { invalidToken } from '../errors.js';
import { EXTERNAL_TOKEN_HANDLE } from '../handles.js';
import type { Issuer } from '../issuers.js';
import { type AuthorizationResult, type IssuancePrivate, type IssuancePublic, issuancePrivate } from '../session.js';
import { ASYMMETRIC_ALGORITHMS, jwtProblem, UpstreamFailure, type UpstreamProviders } from '../upstream-providers.js';

const CLOCK_TOLERANCE_SECONDS = 60;
/** A longer-lived token is still taken, but its session (and the token with it) ends after this. */
const MAX_SESSION_SECONDS = 24 * 3600;

/** Claims of RFC 9068 and of the JWT and OAuth registries that say nothing about the user. */
const PROTOCOL_CLAIMS = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'nbf',
  'iat',
  'jti',
  'client_id',
  'scope',
  'cnf',
  'authorization_details',
  'auth_time',
  'acr',
  'amr',
  'azp',
  'sid',
  'typ',
  'groups',
  'roles',
  'entitlements',
]);

const DetailsSchema = z.array(z.looseObject({ type: z.string(), credential_configuration_id: z.string().optional() })).max(100);

/** An external server's token, verified. */
export interface ExternalToken {
  server: string;
  subject: string;
  clientId: string;
  jti: string;
  expiresAt: number;
  /** Thumbprint of the DPoP key the token is bound to (cnf.jkt). */
  jkt?: string;
  claims: JWTPayload;
}

export class ExternalAccessTokens {
  constructor(
    private readonly db: Executor,
    private readonly providers: UpstreamProviders,
    private readonly configs: CredentialConfigService,
    private readonly sessions: SessionService,
    /** The keys of servers that are federation entities, as the issuer's federation settings decide (src/trust). */
    private readonly trust?: Pick<TrustService, 'authorizationServerKeys'>,
  ) {}

  /**
   * The token, verified, when its iss is an enabled external authorization server of the issuer;
   * undefined when it names none (then it is no token of this issuer at all). A token of such a
   * server that does not verify is invalid_token, naming the check it failed.
   */
  async verify(issuer: Issuer, raw: string, scheme: string): Promise<ExternalToken | undefined> {
    const server = serverOf(issuer, raw);
    if (!server) return undefined;
    let claims: JWTPayload;
    try {
      claims = await this.verifyWithServerKeys(issuer, server, raw, {
        issuer: server,
        audience: issuer.urls.issuer,
        typ: 'at+jwt',
        algorithms: ASYMMETRIC_ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'client_id'],
      });
    } catch (err) {
      const why =
        err instanceof UpstreamFailure
          ? `its authorization server could not be read: ${err.reason}`
          : err instanceof FederationRefused
            ? `its authorization server is not trusted: OpenID Federation: ${err.message}`
            : jwtProblem(err);
      throw invalidToken(`the access token of ${server} is not valid: ${why}`, scheme);
    }
    const jkt = (claims.cnf as { jkt?: unknown } | undefined)?.jkt;
    return {
      server,
      subject: String(claims.sub),
      clientId: String(claims.client_id),
      jti: String(claims.jti),
      expiresAt: Number(claims.exp),
      ...(typeof jkt === 'string' && { jkt }),
      claims,
    };
  }

  /**
   * The token verified with the server's keys. Under the issuer's federation settings (mode
   * federation-only or hybrid, with trust anchors) they are the jwks (or jwks_uri) of the
   * oauth_authorization_server metadata the server's trust chain resolves to; hybrid falls back to its
   * RFC 8414 metadata when the server does not resolve; lote-only (or no federation) uses only that.
   */
  private async verifyWithServerKeys(issuer: Issuer, server: string, raw: string, options: JWTVerifyOptions): Promise<JWTPayload> {
    const decided = await this.trust?.authorizationServerKeys(issuer.tenantId, issuer.settings.federation, server);
    if (decided && 'jwks' in decided.value) return (await jwtVerify(raw, createLocalJWKSet(decided.value.jwks), options)).payload;
    if (decided && 'jwksUri' in decided.value) return await this.providers.verifyJwt(decided.value.jwksUri, raw, options);
    const metadata = await this.providers.authorizationServer(server);
    return this.providers.verifyJwt(metadata.jwks_uri, raw, options);
  }

  /** The session of the token: the one its first request opened, else a new one for what it grants. */
  async sessionOf(issuer: Issuer, token: ExternalToken, scheme: string): Promise<SessionState> {
    const handle = tokenHandle(token);
    const existing = await this.sessions.findByHandle(EXTERNAL_TOKEN_HANDLE, handle);
    if (existing) return checkOwner(existing, issuer, token, scheme);
    const granted = await this.granted(issuer, token.claims);
    if (!granted.ids.length) throw invalidToken('the access token grants no credential configuration of this issuer', scheme);
    try {
      return await this.open(issuer, token, handle, granted);
    } catch (err) {
      // Two first requests at once: the other one opened the session (the handle is unique).
      const raced = await this.sessions.findByHandle(EXTERNAL_TOKEN_HANDLE, handle);
      if (raced) return checkOwner(raced, issuer, token, scheme);
      throw err;
    }
  }

  private async open(issuer: Issuer, token: ExternalToken, handle: string, granted: { ids: string[]; byDetails: string[] }) {
    const lifetimeSeconds = Math.max(
      1,
      Math.min(MAX_SESSION_SECONDS, Math.ceil(token.expiresAt - this.sessions.clock.now().getTime() / 1000)),
    );
    const authorizationResult: AuthorizationResult = {
      claims: userClaims(token.claims),
      steps: [{ type: 'external-authorization-server', data: { issuer: token.server, sub: token.subject, client_id: token.clientId } }],
    };
    const metadata: IssuancePublic = {
      flow: 'authorization_code',
      responseType: 'external-authorization-server',
      credentialConfigurationIds: granted.ids,
      authorized: granted.ids,
      authorizedByDetails: granted.byDetails,
      externalIssuer: token.server,
    };
    const personal: Partial<IssuancePrivate> = {
      offer: {},
      credentialPayload: { credentialClaims: {} },
      authorizationResult,
      externalSubject: token.subject,
      externalClientId: token.clientId,
    };
    return inTransaction(this.db, async (trx) => {
      const created = await this.sessions.create(
        { tenantId: issuer.tenantId, kind: 'issuance', clientId: null, lifetimeSeconds, public: metadata, private: personal },
        trx,
      );
      await this.sessions.addHandle(created.id, EXTERNAL_TOKEN_HANDLE, handle, created.expiresAt, trx);
      await this.sessions.update(issuer.tenantId, created.id, { consumed: true, status: 'fetched' }, { db: trx });
      await this.sessions.log(
        created.id,
        'info',
        'opened by an access token of an external authorization server',
        {
          issuer: token.server,
          client_id: token.clientId,
          credentialConfigurationIds: granted.ids,
        },
        trx,
      );
      return (await this.sessions.get(issuer.tenantId, created.id, trx)) as SessionState;
    });
  }

  /** authorization_details of type openid_credential name configurations; scope values name them through their `scope`. */
  private async granted(issuer: Issuer, claims: JWTPayload): Promise<{ ids: string[]; byDetails: string[] }> {
    const configurations = await this.configs.list(issuer.tenantId);
    const known = new Set(configurations.map((c) => c.id));
    const details = DetailsSchema.safeParse(claims.authorization_details ?? []);
    const byDetails = (details.success ? details.data : [])
      .filter((d) => d.type === 'openid_credential' && d.credential_configuration_id !== undefined)
      .map((d) => d.credential_configuration_id as string)
      .filter((id) => known.has(id));
    const scopes = new Set(typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : []);
    const byScope = configurations.filter((c) => c.config.scope !== undefined && scopes.has(c.config.scope)).map((c) => c.id);
    const unique = [...new Set(byDetails)];
    return { ids: [...new Set([...unique, ...byScope])], byDetails: unique };
  }
}

/** The enabled external server the token's (unverified) iss names, if any. */
function serverOf(issuer: Issuer, raw: string): string | undefined {
  let iss: unknown;
  try {
    iss = decodeJwt(raw).iss;
  } catch {
    return undefined;
  }
  return issuer.settings.authorizationServers.find((server) => server.enabled && server.issuer === iss)?.issuer;
}

/** One session per token: the server and its jti name it (only the hash is stored). */
const tokenHandle = (token: ExternalToken) => createHash('sha256').update(`${token.server}\n${token.jti}`).digest('base64url');

/**
 * The session a token's (server, jti) names is the token's only if it was opened for the same user and
 * client: a token of the same server that reuses a jti (a server's fault, or a forged one it signed for
 * someone else) reaches nobody else's claims. A token names its audience, so another tenant's session
 * can only be reached by a token made for both.
 */
function checkOwner(session: SessionState, issuer: Issuer, token: ExternalToken, scheme: string): SessionState {
  if (session.tenantId !== issuer.tenantId) throw invalidToken('the access token belongs to another credential issuer', scheme);
  const opener = issuancePrivate(session);
  if (opener?.externalSubject !== token.subject || (opener.externalClientId ?? token.clientId) !== token.clientId) {
    throw invalidToken('the jti of this access token was used by another token of its server', scheme);
  }
  return session;
}

/** The token's claims about the user: everything but the protocol's own. */
function userClaims(claims: JWTPayload): Record<string, unknown> {
  return Object.fromEntries(Object.entries(claims).filter(([name]) => !PROTOCOL_CLAIMS.has(name)));
}
