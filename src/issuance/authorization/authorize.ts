// The authorization endpoint (RFC 6749 section 4.1; RFC 9126 section 4): it takes only a request_uri
// from PAR. Until the request_uri and client_id check out, the redirect_uri is not trusted and errors
// are answered here (400); after that, they go to the wallet's redirect_uri (RFC 6749 section
// 4.1.2.1), always with iss (RFC 9207).
import { randomBytes } from 'node:crypto';
import type { Executor } from '../../platform/db/values.js';
import type { SessionState } from '../../sessions/model.js';
import type { SessionService } from '../../sessions/service.js';
import { invalidRequest, invalidRequestUri } from '../errors.js';
import { AUTHORIZATION_HANDLE } from '../handles.js';
import type { Issuer, IssuerDirectory } from '../issuers.js';
import { parseOAuthParams } from '../oauth-params.js';
import { type AuthorizationRequest, issuancePrivate } from '../session.js';
import { offerRefusal } from './offer-session.js';
import { AuthorizationQuerySchema, CODE_LIFETIME_SECONDS, REQUEST_URI_PREFIX } from './schemas.js';
import { BUILTIN_SERVER } from './server-role.js';

export type AuthorizationDecision =
  | { granted: true }
  | { granted: false; error: string; description: string }
  /** Not yet: the user agent continues at `continueAt` (a web step of interactive authorization, an upstream provider). */
  | { granted: false; continueAt: string };

/**
 * Decides whether the user behind the offer authorizes this request. The interactive authorization
 * endpoint (a presentation during issuance) and a chained authorization server plug in here.
 */
export type AuthorizeUser = (session: SessionState, request: AuthorizationRequest) => Promise<AuthorizationDecision>;

/** The integrator identified the user when it made the offer, and issuer_state carries that: nothing is left to ask. */
export const userOfTheOffer: AuthorizeUser = async () => ({ granted: true });

export interface AuthorizeCall {
  tenantId: string;
  query: Record<string, unknown>;
}

export class AuthorizationEndpoint {
  constructor(
    private readonly issuers: IssuerDirectory,
    private readonly sessions: SessionService,
    private readonly authorizeUser: AuthorizeUser = userOfTheOffer,
  ) {}

  /** The URL to redirect the user agent to: the wallet's redirect_uri with a code, or with an error. */
  async authorize(call: AuthorizeCall): Promise<string> {
    const issuer = await this.issuers.get(call.tenantId);
    checkEnabled(issuer);
    checkPushed(call.query);
    const params = parseOAuthParams(AuthorizationQuerySchema, call.query);
    // The code is written in the statement that spends the request_uri (one round trip where the
    // offer alone authorizes the user), and withdrawn when the request is refused or continues
    // elsewhere. Its secret leaves this instance only in a granted answer: a withdrawn code was never usable.
    const code = newCode(this.sessions.clock.now());
    const taken = await this.takeRequestUri(issuer, params.request_uri, code);
    let granted = false;
    try {
      const session = taken.session;
      const request = pushedRequest(session);
      checkClientId(request, params.client_id);
      const respond = (answer: Record<string, string>) => redirectTo(request, issuer, answer);
      const refusal = offerRefusal(session);
      if (refusal) return respond({ error: 'invalid_request', error_description: refusal });
      const decision = await this.authorizeUser(session, request);
      if (!decision.granted && 'continueAt' in decision) return decision.continueAt;
      if (!decision.granted) return respond({ error: decision.error, error_description: decision.description });
      granted = true;
      return respond({ code: code.secret });
    } finally {
      if (!granted) await taken.withdraw();
    }
  }

  /** A request_uri works once, for the issuer it was pushed to, within its short life; `code` goes to the session that spent it. */
  private async takeRequestUri(
    issuer: Issuer,
    requestUri: string,
    code: NewCode,
  ): Promise<{ session: SessionState; withdraw(): Promise<void> }> {
    const secret = requestUri.startsWith(REQUEST_URI_PREFIX) ? requestUri.slice(REQUEST_URI_PREFIX.length) : '';
    // Spent and read in one statement: only the caller that spent it reads the session.
    const taken = secret
      ? await this.sessions.spendHandleIssuing(AUTHORIZATION_HANDLE.requestUri, secret, issuer.tenantId, code)
      : undefined;
    if (!taken?.session) throw invalidRequestUri('request_uri is unknown, expired or already used');
    return { session: taken.session, withdraw: taken.withdraw };
  }
}

/** An authorization code not yet written: its secret, purpose, expiry and log line. */
interface NewCode {
  purpose: string;
  secret: string;
  expiresAt: string;
  log: { level: 'info'; message: string };
}

function newCode(now: Date, purpose: string = AUTHORIZATION_HANDLE.code): NewCode {
  return {
    purpose,
    secret: randomBytes(32).toString('base64url'),
    expiresAt: new Date(now.getTime() + CODE_LIFETIME_SECONDS * 1000).toISOString(),
    log: CODE_ISSUED,
  };
}

const CODE_ISSUED = { level: 'info', message: 'authorization code issued' } as const;

/**
 * A single-use authorization code for the session's authorization request, which the token endpoint
 * redeems; `purpose` names whose token endpoint (the chained authorization server's has its own).
 */
export async function issueCode(
  sessions: SessionService,
  session: SessionState,
  options: { purpose?: string; db?: Executor } = {},
): Promise<string> {
  const code = newCode(sessions.clock.now(), options.purpose);
  await sessions.addHandleLogging(session.id, code.purpose, code.secret, code.expiresAt, code.log, options.db);
  return code.secret;
}

/** The wallet's redirect_uri with an authorization response (RFC 6749 section 4.1.2), its state and iss (RFC 9207). */
export function authorizationResponseUrl(request: AuthorizationRequest, issuer: Issuer, answer: Record<string, string>): string {
  return redirectTo(request, issuer, answer);
}

/**
 * While the built-in server is disabled nothing is authorized here, not even a request pushed before:
 * a 400, since the request_uri (and with it the redirect_uri) is not looked at, let alone spent.
 */
function checkEnabled(issuer: Issuer) {
  const disabled = BUILTIN_SERVER.disabled(issuer);
  if (disabled) throw invalidRequest(disabled);
}

function checkPushed(query: Record<string, unknown>) {
  if (query.request_uri === undefined)
    throw invalidRequest('request_uri is required: this server accepts only pushed authorization requests');
}

function pushedRequest(session: SessionState): AuthorizationRequest {
  const request = issuancePrivate(session)?.authorizationRequest;
  if (!request) throw invalidRequestUri('request_uri is unknown, expired or already used');
  return request;
}

/** The request_uri was pushed by one client; another one presenting it is refused before any redirect. */
function checkClientId(request: AuthorizationRequest, clientId: string) {
  if (request.clientId !== clientId) throw invalidRequest('client_id does not match the pushed authorization request');
}

function redirectTo(request: AuthorizationRequest, issuer: Issuer, answer: Record<string, string>): string {
  const url = new URL(request.redirectUri);
  for (const [name, value] of Object.entries(answer)) url.searchParams.set(name, value);
  if (request.state !== undefined) url.searchParams.set('state', request.state);
  url.searchParams.set('iss', issuer.urls.issuer);
  return url.toString();
}
