// The console's session with the service: the access token, who it speaks for (GET /api/whoami: the
// roles the client or person holds now, which choose the sections and actions shown), the typed
// client built on it, and problems turned into something a page can show.
//
// The token is kept in sessionStorage, so that a reload of the tab keeps the person logged in until
// the token expires: sessionStorage belongs to this tab alone (another tab, or the tab reopened after
// closing, starts at the login) and is never sent to the server, unlike a cookie. It is not
// localStorage, which every tab shares and which outlives the browser session. Script on this origin
// could read the token from memory as well as from sessionStorage; the strict Content-Security-Policy
// (script-src 'self', no inline script) is what keeps other script out.
import { createSvcClient, type paths, type SvcClient } from '../../clients/typescript/index.js';

type WhoAmI = paths['/api/whoami']['get']['responses'][200]['content']['application/json'];
export type Role = WhoAmI['roles'][number];

/**
 * Whether `who` may give `role` to a client or user: a tenant's client only roles it holds itself
 * (the API refuses the rest with 403), the service's own clients any.
 */
export const mayGrant = (who: Session | undefined, role: string) =>
  who !== undefined && (!who.tenantId || (who.roles as string[]).includes(role));

export interface Session {
  token: string;
  clientId: string;
  /** The tenant of the client, or null for the service's own clients (tenants:manage). */
  tenantId: string | null;
  roles: Role[];
  expiresAt: number;
  /** A service administrator's stay in a tenant (an exchanged token): the administrator's client id. */
  actingAdminId?: string;
}

const STORAGE_KEY = 'svc-console-session';
/**
 * The administrator's own token while it acts in a tenant, kept as the session is (this tab only),
 * so that "Back to service" returns to it without logging in again; dropped when the session ends.
 */
const ADMIN_KEY = 'svc-console-admin-session';
interface StoredToken {
  token: string;
  expiresAt: number;
}
let adminSession: StoredToken | undefined;
function keepAdminSession(next: StoredToken | undefined) {
  adminSession = next;
  if (next) sessionStorage.setItem(ADMIN_KEY, JSON.stringify(next));
  else sessionStorage.removeItem(ADMIN_KEY);
}
let current: Session | undefined;
let expiryTimer: ReturnType<typeof setTimeout> | undefined;
const listeners = new Set<() => void>();

export const session = () => current;
export const onSessionChange = (listener: () => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};
function setSession(next: Session | undefined) {
  current = next;
  clearTimeout(expiryTimer);
  if (next) {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ token: next.token, expiresAt: next.expiresAt }));
    // The login comes back when the token expires, not at the first refused call after it.
    expiryTimer = setTimeout(() => setSession(undefined), Math.min(next.expiresAt - Date.now(), 2 ** 31 - 1));
  } else {
    sessionStorage.removeItem(STORAGE_KEY);
    keepAdminSession(undefined);
  }
  for (const listener of listeners) listener();
}

/** True when the session holds any of `roles` (an empty list: any session). */
export const holds = (who: Session | undefined, roles: readonly Role[]) =>
  !!who && (roles.length === 0 || roles.some((role) => who.roles.includes(role)));

export const api: SvcClient = createSvcClient({ baseUrl: location.origin, token: () => current?.token });
// An expired or revoked token ends the session: the next screen is the login.
api.use({
  onResponse({ response }) {
    if (response.status === 401 && current) setSession(undefined);
    return response;
  },
});

/** An RFC 9457 problem (or an OAuth error) as the console shows it. */
export interface Problem {
  status: number;
  title: string;
  detail?: string;
  fields: { field: string; message: string }[];
}

export function toProblem(body: unknown, response: Response): Problem {
  const b = (body ?? {}) as Record<string, unknown>;
  const errors = Array.isArray(b.errors) ? (b.errors as { field: string; message: string }[]) : [];
  return {
    status: response.status,
    title: String(b.title ?? b.error ?? response.statusText ?? 'Error'),
    detail: typeof b.detail === 'string' ? b.detail : typeof b.error_description === 'string' ? b.error_description : undefined,
    fields: errors,
  };
}

/** A typed client's answer as a page uses it: the data, or the problem. */
export interface Result<T> {
  data?: T;
  problem?: Problem;
}

export async function result<T>(reply: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<Result<T>> {
  const { data, error, response } = await reply;
  return response.ok ? { data } : { problem: toProblem(error, response) };
}

type Method = 'post' | 'put' | 'patch';
/** The JSON body `method` on `path` takes, as the OpenAPI document types it. */
export type RequestBody<P extends keyof paths, M extends Method> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

/**
 * What a person typed (in a form or as JSON) given the type of the body it is sent as. The console
 * does not check it against the schema itself: the service does, and answers with the fields it
 * refuses, which the page shows on those fields.
 */
export const asBody = <P extends keyof paths, M extends Method>(_path: P, _method: M, typed: unknown) => typed as RequestBody<P, M>;

/** Opens a session for `token`: who it speaks for, from GET /api/whoami. */
async function acceptToken(token: string, expiresAt: number): Promise<Problem | undefined> {
  const reply = await fetch('/api/whoami', { headers: { authorization: `Bearer ${token}` } });
  const body = (await reply.json().catch(() => ({}))) as WhoAmI;
  if (!reply.ok) return toProblem(body, reply);
  setSession({
    token,
    clientId: body.clientId,
    tenantId: body.tenantId,
    roles: body.roles,
    expiresAt: Math.min(expiresAt, Date.parse(body.expiresAt)),
    ...(body.actingAdminId ? { actingAdminId: body.actingAdminId } : {}),
  });
  return undefined;
}

export async function logIn(clientId: string, clientSecret: string): Promise<Problem | undefined> {
  const reply = await result(
    api.POST('/api/oauth2/token', { body: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret } }),
  );
  if (!reply.data) return reply.problem;
  return acceptToken(reply.data.access_token, Date.now() + reply.data.expires_in * 1000);
}

/**
 * A service administrator steps into a tenant: its token is exchanged (RFC 8693) for one of the
 * tenant, with every tenant role, which becomes the session. The administrator's own token is kept
 * aside for backToService; the login comes back when the tenant token ends (15 minutes at most).
 */
export async function openTenant(tenantId: string): Promise<Problem | undefined> {
  const admin = current;
  const reply = await result(
    api.POST('/api/oauth2/token', {
      body: {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: current?.token ?? '',
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        audience: tenantId,
      },
    }),
  );
  if (!reply.data) return reply.problem;
  // Kept before the tenant's session starts, so the header that session renders offers the way back.
  if (admin) keepAdminSession({ token: admin.token, expiresAt: admin.expiresAt });
  const refused = await acceptToken(reply.data.access_token, Date.now() + reply.data.expires_in * 1000);
  if (refused) keepAdminSession(undefined);
  return refused;
}

/** Whether the session is an administrator's in a tenant with its own session to go back to. */
export const canGoBackToService = () => adminSession !== undefined && adminSession.expiresAt > Date.now();

/** The administrator leaves the tenant: its own session again, without logging in (else the login). */
export async function backToService(): Promise<Problem | undefined> {
  const admin = adminSession;
  keepAdminSession(undefined);
  if (!admin || admin.expiresAt <= Date.now()) {
    setSession(undefined);
    return undefined;
  }
  const refused = await acceptToken(admin.token, admin.expiresAt);
  if (refused) setSession(undefined);
  return refused;
}

/** The session of an earlier load of this tab, while its token is valid (a reload keeps the person logged in). */
export async function resumeSession(): Promise<void> {
  const stored = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as Partial<StoredToken> | null;
  const admin = JSON.parse(sessionStorage.getItem(ADMIN_KEY) ?? 'null') as StoredToken | null;
  if (admin?.token && admin.expiresAt > Date.now()) adminSession = admin;
  if (!stored?.token || !stored.expiresAt || stored.expiresAt <= Date.now() || (await acceptToken(stored.token, stored.expiresAt))) {
    sessionStorage.removeItem(STORAGE_KEY);
    keepAdminSession(undefined);
  }
}

/** Asks again who the session speaks for (after a change of the roles of the signed-in client, say). */
export async function refreshSession(): Promise<void> {
  if (current) await acceptToken(current.token, current.expiresAt);
}

export const logOut = () => setSession(undefined);

/** How to log in, from GET /api/frontend-config (public). */
export type FrontendAuth = paths['/api/frontend-config']['get']['responses'][200]['content']['application/json']['auth'];

let frontendConfig: ReturnType<typeof readFrontendConfig> | undefined;
const readFrontendConfig = () => result(api.GET('/api/frontend-config')).then((reply) => reply.data);

export async function frontendAuth(): Promise<FrontendAuth> {
  frontendConfig ??= readFrontendConfig();
  return (await frontendConfig)?.auth ?? { mode: 'integrated', tokenUrl: '/api/oauth2/token' };
}

/**
 * The address wallets and relying parties reach a tenant's published document at (a trust list,
 * say): under the service's PUBLIC_URL, which need not be where the console was opened.
 */
export async function publishedUrl(tenantId: string, ...path: string[]): Promise<string> {
  frontendConfig ??= readFrontendConfig();
  const base = (await frontendConfig)?.publicUrl ?? location.origin;
  return [base, 'issuers', tenantId, ...path].map((part, i) => (i === 0 ? part : encodeURIComponent(part))).join('/');
}

// External mode: the authorization code flow with PKCE of the console's public client. Only the
// verifier and state wait in sessionStorage across the redirect, and are removed on return.
const PKCE_KEY = 'svc-console-pkce';
const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
const redirectUri = () => `${location.origin}/console`;

export async function startProviderLogin(auth: Extract<FrontendAuth, { mode: 'external' }>) {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const state = base64url(crypto.getRandomValues(new Uint8Array(16)));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  sessionStorage.setItem(PKCE_KEY, JSON.stringify({ verifier, state }));
  const url = new URL(auth.authorizationEndpoint ?? `${auth.issuer}/protocol/openid-connect/auth`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: auth.clientId,
    redirect_uri: redirectUri(),
    scope: 'openid',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url.toString());
}

/** On return from the provider (?code&state): the code exchanged for a token; undefined when this is no such return. */
export async function finishProviderLogin(auth: FrontendAuth): Promise<Problem | undefined> {
  const params = new URLSearchParams(location.search);
  const code = params.get('code');
  if (auth.mode !== 'external' || (!code && !params.get('error'))) return undefined;
  const pending = JSON.parse(sessionStorage.getItem(PKCE_KEY) ?? 'null') as { verifier: string; state: string } | null;
  sessionStorage.removeItem(PKCE_KEY);
  history.replaceState(null, '', '/console');
  const refused = (detail: string): Problem => ({ status: 401, title: 'Login failed', detail, fields: [] });
  if (!code) return refused(params.get('error_description') ?? params.get('error') ?? 'the provider refused the login');
  if (!pending || pending.state !== params.get('state')) return refused('the login answer does not belong to this page (state)');
  // The provider's token endpoint is not part of the management API: the typed client does not name it.
  const reply = await fetch(auth.tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri(),
      client_id: auth.clientId,
      code_verifier: pending.verifier,
    }),
  });
  const body = (await reply.json().catch(() => ({}))) as {
    access_token?: string;
    expires_in?: number;
    error?: string;
    error_description?: string;
  };
  if (!body.access_token) return refused(body.error_description ?? body.error ?? `the token endpoint answered ${reply.status}`);
  return acceptToken(body.access_token, Date.now() + (body.expires_in ?? 300) * 1000);
}

/** One item of the list `GET path` answers, as the OpenAPI document types it. */
export type ListItem<P extends keyof paths> = paths[P] extends {
  get: { responses: { 200: { content: { 'application/json': (infer T)[] } } } };
}
  ? T
  : never;
