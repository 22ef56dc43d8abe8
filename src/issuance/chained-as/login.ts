// The chained authorization server's front channel. Its authorization endpoint takes the wallet's
// pushed request (request_uri, as the built-in one does) and sends the user to the upstream OpenID
// Provider with a state, nonce and PKCE of its own; the callback takes the user back, exchanges the
// code, validates the ID token, lays the mapped upstream claims into the session's
// authorizationResult and sends the user to the wallet with a code of this server. Before the
// session and its pushed request are known, errors are answered here (400: the wallet's redirect_uri
// is not trusted yet); after that they go to the wallet (RFC 6749 section 4.1.2.1), always with iss
// (RFC 9207). Why an upstream login failed goes to the session log, not to the wallet.
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Sealer } from '../../platform/crypto/sealed.js';
import { OAuthError } from '../../platform/http/problem.js';
import { isJsonObject } from '../../platform/json.js';
import type { SessionState } from '../../sessions/model.js';
import type { SessionService } from '../../sessions/service.js';
import { issueCode } from '../authorization/authorize.js';
import { offerRefusal } from '../authorization/offer-session.js';
import { AuthorizationQuerySchema, REQUEST_URI_PREFIX } from '../authorization/schemas.js';
import { invalidRequest, invalidRequestUri } from '../errors.js';
import { CHAINED_HANDLE } from '../handles.js';
import type { Issuer, IssuerDirectory } from '../issuers.js';
import { parseOAuthParams } from '../oauth-params.js';
import { type AuthorizationRequest, type AuthorizationResult, AuthorizationResultSchema, issuancePrivate } from '../session.js';
import { type ChainedAuthorizationServerSettings, openClientSecret } from '../settings/chained-as.js';
import { type UpstreamClaims, UpstreamFailure, type UpstreamProviders } from '../upstream-providers.js';
import { chainedUrls } from '../urls.js';

/** How long the user has to log in at the upstream provider. */
export const LOGIN_LIFETIME_SECONDS = 600;
export const STEP_TYPE = 'chained-authorization-server';

/** What the login at the upstream provider must come back with; kept with the session's personal data. */
const UpstreamLoginSchema = z.object({
  nonce: z.string(),
  codeVerifier: z.string(),
  /** The pushed request the login is for: a request pushed since replaces it, and the login no longer counts. */
  codeChallenge: z.string(),
});
type UpstreamLogin = z.infer<typeof UpstreamLoginSchema>;

/** Read from the personal data directly: the issuance session schema does not know this server's record. */
const LoginRecordSchema = z.object({ chainedLogin: UpstreamLoginSchema.optional() });

const CallbackQuerySchema = z.object({
  state: z.string().min(1).max(512),
  code: z.string().min(1).max(4096).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(1000).optional(),
  iss: z.string().max(2048).optional(),
});

/** Claims of the ID token that describe the token, not the user. */
const PROTOCOL_CLAIMS = new Set([
  'iss',
  'aud',
  'exp',
  'iat',
  'nbf',
  'nonce',
  'azp',
  'at_hash',
  'c_hash',
  'auth_time',
  'acr',
  'amr',
  'sid',
  'jti',
]);

/**
 * What the wallet learns of a failed upstream login (RFC 6749 section 4.1.2.1): the provider could not
 * be used, or the user was not authenticated (the provider's error, a refused code, an invalid ID
 * token alike: the session log tells them apart).
 */
const UNAVAILABLE = { error: 'temporarily_unavailable', error_description: 'the upstream identity provider is not available' };
const NOT_AUTHENTICATED = {
  error: 'access_denied',
  error_description: 'the user could not be authenticated at the upstream identity provider',
};

/** A tenant without an enabled chained authorization server has none to talk to: 404, as for an unknown issuer. */
export const noChainedServer = () => new OAuthError(404, 'invalid_request', 'this credential issuer has no chained authorization server');

export interface FrontChannelCall {
  tenantId: string;
  query: Record<string, unknown>;
}

export class ChainedLogin {
  constructor(
    private readonly publicUrl: string,
    private readonly issuers: IssuerDirectory,
    private readonly sessions: SessionService,
    private readonly upstream: UpstreamProviders,
    /** Opens the client secret of the issuer settings. */
    private readonly settingsSealer: Sealer,
  ) {}

  /** The authorization endpoint: where to send the user agent (the upstream provider, or the wallet with an error). */
  async authorize(call: FrontChannelCall): Promise<string> {
    const { issuer, chained } = await this.chainedOf(call.tenantId);
    checkPushed(call.query);
    const params = parseOAuthParams(AuthorizationQuerySchema, call.query);
    const session = await this.takeRequestUri(issuer, params.request_uri);
    const request = pushedRequest(session);
    checkClientId(request, params.client_id);
    const respond = (answer: Record<string, string>) => this.toWallet(issuer, request, answer);
    const refusal = offerRefusal(session);
    if (refusal) return respond({ error: 'invalid_request', error_description: refusal });
    try {
      return await this.startLogin(issuer, chained, session, request);
    } catch (err) {
      if (!(err instanceof UpstreamFailure)) throw err;
      await this.sessions.log(session.id, 'error', 'upstream login could not start', { reason: err.reason });
      return respond(UNAVAILABLE);
    }
  }

  /** The callback from the upstream provider: where to send the user agent (the wallet, with a code or an error). */
  async callback(call: FrontChannelCall): Promise<string> {
    const { issuer, chained } = await this.chainedOf(call.tenantId);
    const query = parseOAuthParams(CallbackQuerySchema, call.query);
    const session = await this.takeUpstreamState(issuer, query.state);
    const request = pushedRequest(session);
    const login = checkLoginCurrent(session, request);
    const respond = (answer: Record<string, string>) => this.toWallet(issuer, request, answer);
    const refusal = offerRefusal(session);
    if (refusal) return respond({ error: 'invalid_request', error_description: refusal });
    try {
      const claims = await this.finishLogin(issuer, chained, login, query);
      await this.record(session, chained, claims);
      return respond({ code: await issueCode(this.sessions, session, { purpose: CHAINED_HANDLE.code }) });
    } catch (err) {
      if (!(err instanceof UpstreamFailure)) throw err;
      await this.sessions.log(session.id, 'warn', 'upstream login failed', { reason: err.reason });
      return respond(err.unavailable ? UNAVAILABLE : NOT_AUTHENTICATED);
    }
  }

  /** The issuer and its chained server, which must be configured and enabled. */
  private async chainedOf(tenantId: string): Promise<{ issuer: Issuer; chained: ChainedAuthorizationServerSettings }> {
    const issuer = await this.issuers.get(tenantId);
    const chained = issuer.settings.chainedAuthorizationServer;
    if (!chained?.enabled) throw noChainedServer();
    return { issuer, chained };
  }

  /** A request_uri of this server works once, for the issuer it was pushed to, within its short life. */
  private async takeRequestUri(issuer: Issuer, requestUri: string): Promise<SessionState> {
    const secret = requestUri.startsWith(REQUEST_URI_PREFIX) ? requestUri.slice(REQUEST_URI_PREFIX.length) : '';
    const session = secret ? await this.sessions.findByHandle(CHAINED_HANDLE.requestUri, secret) : undefined;
    const taken = session?.tenantId === issuer.tenantId && (await this.sessions.spendHandle(CHAINED_HANDLE.requestUri, secret));
    if (!session || !taken) throw invalidRequestUri('request_uri is unknown, expired or already used');
    return session;
  }

  /** The state names the login; it works once (a replayed callback finds it spent). */
  private async takeUpstreamState(issuer: Issuer, state: string): Promise<SessionState> {
    const session = await this.sessions.findByHandle(CHAINED_HANDLE.upstreamState, state);
    const taken = session?.tenantId === issuer.tenantId && (await this.sessions.spendHandle(CHAINED_HANDLE.upstreamState, state));
    if (!session || !taken) throw invalidRequest('state is unknown, expired or already used');
    return session;
  }

  /** Fresh state, nonce and PKCE verifier for this login; the URL of the provider's authorization endpoint. */
  private async startLogin(
    issuer: Issuer,
    chained: ChainedAuthorizationServerSettings,
    session: SessionState,
    request: AuthorizationRequest,
  ): Promise<string> {
    const provider = await this.upstream.configuration(chained.issuer);
    const state = randomBytes(32).toString('base64url');
    const login: UpstreamLogin = {
      nonce: randomBytes(32).toString('base64url'),
      codeVerifier: randomBytes(32).toString('base64url'),
      codeChallenge: request.codeChallenge,
    };
    await this.sessions.update(session.tenantId, session.id, { private: { chainedLogin: login } });
    await this.sessions.dropHandles(session.id, CHAINED_HANDLE.upstreamState);
    const expiresAt = new Date(
      Math.min(this.sessions.clock.now().getTime() + LOGIN_LIFETIME_SECONDS * 1000, Date.parse(session.expiresAt)),
    ).toISOString();
    await this.sessions.addHandle(session.id, CHAINED_HANDLE.upstreamState, state, expiresAt);
    await this.sessions.log(session.id, 'info', 'upstream login started', { provider: chained.issuer });
    const url = new URL(provider.authorization_endpoint);
    const params = {
      response_type: 'code',
      client_id: chained.clientId,
      redirect_uri: chainedUrls(this.publicUrl, issuer.tenantId).callback,
      scope: chained.scopes.join(' '),
      state,
      nonce: login.nonce,
      code_challenge: createHash('sha256').update(login.codeVerifier).digest('base64url'),
      code_challenge_method: 'S256',
    };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return url.toString();
  }

  /** The provider's answer checked, its code exchanged, the ID token validated, userinfo added: the user's claims. */
  private async finishLogin(
    issuer: Issuer,
    chained: ChainedAuthorizationServerSettings,
    login: UpstreamLogin,
    query: z.infer<typeof CallbackQuerySchema>,
  ): Promise<UpstreamClaims> {
    const provider = await this.upstream.configuration(chained.issuer);
    // RFC 9207: an iss sent (or promised) must be the provider's, or the answer comes from another one (mix-up).
    if ((query.iss !== undefined || provider.authorization_response_iss_parameter_supported) && query.iss !== provider.issuer) {
      throw new UpstreamFailure('the authorization response iss is not the provider');
    }
    if (query.error !== undefined)
      throw new UpstreamFailure(`the provider answered ${query.error}${query.error_description ? `: ${query.error_description}` : ''}`);
    if (query.code === undefined) throw new UpstreamFailure('the provider answered neither code nor error');
    const client = {
      issuer: chained.issuer,
      clientId: chained.clientId,
      clientSecret: openClientSecret(this.settingsSealer, issuer.tenantId, chained),
    };
    const redirectUri = chainedUrls(this.publicUrl, issuer.tenantId).callback;
    const tokens = await this.upstream.exchangeCode(provider, client, { code: query.code, redirectUri, codeVerifier: login.codeVerifier });
    const idClaims = await this.upstream.verifyIdToken(provider, tokens.id_token, { clientId: chained.clientId, nonce: login.nonce });
    if (!chained.userinfo || tokens.access_token === undefined) return idClaims;
    const userinfo = await this.upstream.userinfo(provider, tokens.access_token, idClaims.sub);
    return { ...userinfo, ...idClaims };
  }

  /** The mapped claims over what earlier steps left, and this step's record for the attribute provider or webhook. */
  private async record(session: SessionState, chained: ChainedAuthorizationServerSettings, upstream: UpstreamClaims) {
    const before: AuthorizationResult = issuancePrivate(session)?.authorizationResult ?? AuthorizationResultSchema.parse({});
    const claims = structuredClone(before.claims);
    const mapped: string[][] = [];
    for (const { upstreamClaim, credentialClaim } of chained.claimMapping) {
      const value = valueAt(upstream, upstreamClaim);
      if (value === undefined) continue;
      placeAt(claims, credentialClaim, value);
      mapped.push(credentialClaim);
    }
    const userClaims = Object.fromEntries(Object.entries(upstream).filter(([name]) => !PROTOCOL_CLAIMS.has(name)));
    const step = { type: STEP_TYPE, data: { provider: chained.issuer, subject: upstream.sub, claims: userClaims } };
    const authorizationResult: AuthorizationResult = { claims, steps: [...before.steps, step] };
    await this.sessions.update(session.tenantId, session.id, { private: { authorizationResult, chainedLogin: undefined } });
    await this.sessions.log(session.id, 'info', 'upstream login succeeded', {
      provider: chained.issuer,
      mappedClaims: mapped.map((p) => p.join('.')),
    });
  }

  private toWallet({ tenantId }: Issuer, request: AuthorizationRequest, answer: Record<string, string>): string {
    const url = new URL(request.redirectUri);
    for (const [name, value] of Object.entries(answer)) url.searchParams.set(name, value);
    if (request.state !== undefined) url.searchParams.set('state', request.state);
    url.searchParams.set('iss', chainedUrls(this.publicUrl, tenantId).identifier);
    return url.toString();
  }
}

function checkPushed(query: Record<string, unknown>) {
  if (query.request_uri === undefined)
    throw invalidRequest('request_uri is required: this server accepts only pushed authorization requests');
}

/** The request_uri was pushed by one client; another one presenting it is refused before any redirect. */
function checkClientId(request: AuthorizationRequest, clientId: string) {
  if (request.clientId !== clientId) throw invalidRequest('client_id does not match the pushed authorization request');
}

/** The login of the state, still for the pushed request: one pushed since (for the same offer) replaced it. */
function checkLoginCurrent(session: SessionState, request: AuthorizationRequest): UpstreamLogin {
  const login = loginOf(session);
  if (login?.codeChallenge !== request.codeChallenge) throw invalidRequest('state belongs to a login that was replaced or is unknown');
  return login;
}

function pushedRequest(session: SessionState): AuthorizationRequest {
  const request = issuancePrivate(session)?.authorizationRequest;
  if (!request) throw invalidRequestUri('request_uri is unknown, expired or already used');
  return request;
}

function loginOf(session: SessionState): UpstreamLogin | undefined {
  const parsed = LoginRecordSchema.safeParse(session.private ?? {});
  return parsed.success ? parsed.data.chainedLogin : undefined;
}

function valueAt(claims: Record<string, unknown>, path: string[]): unknown {
  let value: unknown = claims;
  for (const name of path) {
    if (!isJsonObject(value) || !Object.hasOwn(value, name)) return undefined;
    value = value[name];
  }
  return value;
}

/** Sets the value at the path, making objects on the way (and replacing a non-object in the way). */
function placeAt(claims: Record<string, unknown>, path: string[], value: unknown) {
  let target = claims;
  for (const name of path.slice(0, -1)) {
    const next = target[name];
    if (!isJsonObject(next)) target[name] = {};
    target = target[name] as Record<string, unknown>;
  }
  target[path[path.length - 1] as string] = value;
}
