// The console's session with the service: the access token (kept in memory only: a reload logs out),
// the typed client built on it, and problems turned into something a page can show.
import { createSvcClient, type SvcClient } from '../../clients/typescript/index.js';

export interface Session {
  token: string;
  clientId: string;
  /** The tenant of the client, or null for the service's own clients (tenants:manage). */
  tenantId: string | null;
  roles: string[];
  expiresAt: number;
}

let current: Session | undefined;
const listeners = new Set<() => void>();

export const session = () => current;
export const onSessionChange = (listener: () => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};
function setSession(next: Session | undefined) {
  current = next;
  for (const listener of listeners) listener();
}

export const api: SvcClient = createSvcClient({ baseUrl: location.origin, token: () => current?.token });
// An expired or revoked token ends the session: the next screen is the login.
api.use({
  onResponse({ response }) {
    if (response.status === 401 && current) setSession(undefined);
    return response;
  },
});

export async function logIn(clientId: string, clientSecret: string): Promise<Problem | undefined> {
  const reply = await api.POST('/api/oauth2/token', {
    body: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret } as never,
  });
  if (!reply.data) return toProblem(reply.error, reply.response);
  acceptToken((reply.data as { access_token: string }).access_token, 'tenant_id');
  return undefined;
}

/** The session a token opens; what it says of tenant and roles only chooses the views (the API decides). */
function acceptToken(token: string, tenantClaim: string) {
  const part = token.split('.')[1] ?? '';
  const claims = JSON.parse(
    atob(
      part
        .replace(/-/g, '+')
        .replace(/_/g, '/')
        .padEnd(Math.ceil(part.length / 4) * 4, '='),
    ),
  ) as Record<string, unknown>;
  const realm = (claims.realm_access as { roles?: unknown } | undefined)?.roles;
  setSession({
    token,
    clientId: String(claims.preferred_username ?? claims.sub ?? claims.client_id ?? ''),
    tenantId: typeof claims[tenantClaim] === 'string' ? (claims[tenantClaim] as string) : null,
    roles: [claims.roles, realm].flatMap((r) => (Array.isArray(r) ? (r as string[]) : [])),
    expiresAt: typeof claims.exp === 'number' ? claims.exp * 1000 : Date.now() + 3_600_000,
  });
}

export const logOut = () => setSession(undefined);

/** How to log in, from GET /api/frontend-config (public). */
export type FrontendAuth =
  | { mode: 'integrated'; tokenUrl: string }
  | { mode: 'external'; issuer: string; authorizationEndpoint?: string; tokenEndpoint: string; clientId: string; tenantClaim?: string };

export async function frontendAuth(): Promise<FrontendAuth> {
  const reply = await fetch('/api/frontend-config');
  const body = (await reply.json()) as { auth?: FrontendAuth };
  return body.auth ?? { mode: 'integrated', tokenUrl: '/api/oauth2/token' };
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
  const body = (await reply.json().catch(() => ({}))) as { access_token?: string; error?: string; error_description?: string };
  if (!body.access_token) return refused(body.error_description ?? body.error ?? `the token endpoint answered ${reply.status}`);
  acceptToken(body.access_token, auth.tenantClaim ?? 'tenant_id');
  return undefined;
}

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

/** For endpoints the typed client cannot name statically (a page built from a path string). */
export async function call(method: string, path: string, body?: unknown): Promise<{ data?: any; problem?: Problem }> {
  const response = await fetch(path, {
    method,
    headers: { authorization: `Bearer ${current?.token ?? ''}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 401 && current) setSession(undefined);
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : undefined;
  return response.ok ? { data: parsed } : { problem: toProblem(parsed, response) };
}
