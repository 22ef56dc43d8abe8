// A typed client for the svc management API, generated from its OpenAPI document: every path, body,
// query and reply is typed by `schema.ts` (npm run client:generate). Works in Node 20+ and browsers.
//
//   const svc = createSvcClient({ baseUrl: 'http://localhost:3000', token: () => accessToken });
//   const { data, error } = await svc.POST('/api/tenant', { body: { id: 'acme', name: 'Acme' } });
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

export type SvcClient = Client<paths>;

export interface SvcClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Where the service runs, e.g. http://localhost:3000 (no trailing /api). */
  baseUrl: string;
  /** A management access token, or a function giving the current one (called per request). */
  token?: string | (() => string | undefined);
}

export function createSvcClient({ baseUrl, token, ...options }: SvcClientOptions): SvcClient {
  const client = createClient<paths>({ baseUrl: baseUrl.replace(/\/+$/, ''), ...options });
  if (token !== undefined) {
    client.use({
      onRequest({ request }) {
        const current = typeof token === 'function' ? token() : token;
        if (current && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${current}`);
        return request;
      },
    });
  }
  return client;
}
