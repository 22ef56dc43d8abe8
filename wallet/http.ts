// Every request the wallet makes goes through this fetch: it prints what is sent and what came back,
// and refuses plain HTTP except to this machine (a service under development on localhost).
import type { Fetch } from '@openid4vc/utils';
import { abbreviate, type Io } from './io.js';

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

export function isLoopbackUrl(url: URL): boolean {
  return LOOPBACK.test(url.hostname);
}

/** Refuses a URL the wallet must not call: anything but https, or http to this machine. */
export function checkUrl(url: URL) {
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackUrl(url))) return;
  throw new Error(`refusing ${url.href}: only https, or http to localhost`);
}

function describeBody(body: unknown, contentType: string | null): string[] {
  if (typeof body !== 'string' || body === '') return [];
  if (contentType?.includes('application/x-www-form-urlencoded')) {
    return [...new URLSearchParams(body)].map(([name, value]) => `    ${name}=${abbreviate(value)}`);
  }
  try {
    const parsed = JSON.parse(body) as unknown;
    return JSON.stringify(parsed, (_key, value) => (typeof value === 'string' ? abbreviate(value) : value), 2)
      .split('\n')
      .map((line) => `    ${line}`);
  } catch {
    return [`    ${abbreviate(body)}`];
  }
}

export function tracingFetch(io: Io): Fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input.toString());
    checkUrl(url);
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const headers = new Headers(init?.headers);
    const proofs = ['authorization', 'dpop']
      .filter((name) => headers.has(name))
      .map((name) => `${name}: ${abbreviate(headers.get(name) ?? '', 30)}`);
    io.print(`  → ${method} ${url.href}${proofs.length ? `  (${proofs.join(', ')})` : ''}`);
    for (const line of describeBody(init?.body, headers.get('content-type'))) io.print(line);
    const response = await fetch(input, init);
    io.print(`  ← ${response.status} ${response.headers.get('content-type')?.split(';')[0] ?? ''}`);
    return response;
  };
}
