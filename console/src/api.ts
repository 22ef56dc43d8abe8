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
  const token = (reply.data as { access_token: string; expires_in?: number }).access_token;
  const claims = JSON.parse(atob(token.split('.')[1]?.replace(/-/g, '+').replace(/_/g, '/') ?? 'e30=')) as Record<string, unknown>;
  setSession({
    token,
    clientId,
    tenantId: typeof claims.tenant_id === 'string' ? claims.tenant_id : null,
    roles: Array.isArray(claims.roles) ? (claims.roles as string[]) : [],
    expiresAt: typeof claims.exp === 'number' ? claims.exp * 1000 : Date.now() + 3_600_000,
  });
  return undefined;
}

export const logOut = () => setSession(undefined);

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
