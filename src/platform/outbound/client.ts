// The one way the service makes HTTP requests to addresses it is given (webhooks, attribute
// providers, status lists of other issuers). Each request:
// - goes to http: or https: only;
// - goes only to addresses the policy allows (policy.ts): an IP in the URL is checked before
//   connecting; a name is resolved (every address), checked, and the connection is made to exactly the
//   addresses that were checked (they are what the socket's lookup answers), so a DNS answer that
//   changes between check and connect (rebinding) cannot slip through;
// - never follows a redirect to another origin, so headers that authenticate to one server (an API
//   key) never reach another; a GET follows same-origin redirects, at most MAX_REDIRECTS; a POST
//   follows none (its body would have to be sent again, and a webhook URL should be the final one);
// - ends within its time limit (connect, redirects and body together) and reads at most maxBytes.
import dns from 'node:dns';
import http from 'node:http';
import type { LookupFunction } from 'node:net';
import type { z } from 'zod';
import { isJsonObject, parseOutsideJson } from '../json.js';
import { requireOnFirstUse } from '../lazy.js';
import { NO_TRACING, type Tracing } from '../observability/tracing.js';
import { literalAddress, nonPublic } from './policy.js';

export const DEFAULT_TIMEOUT_MS = 5_000;
export const DEFAULT_MAX_BYTES = 1024 * 1024;
const MAX_REDIRECTS = 3;

/** HTTPS, with TLS seven of Node's modules to compile, is loaded by the first https: request, not at start. */
const https = requireOnFirstUse<typeof import('node:https')>('node:https');

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export interface OutboundPolicy {
  /** Loopback, private, link-local and other non-public destinations are allowed (cloud metadata never is). */
  allowPrivate: boolean;
  /**
   * The cloud metadata address is allowed too (with allowPrivate): only for a client made for the
   * one request that fetches this instance's own credentials there (admittingMetadata).
   */
  allowMetadata?: boolean;
}

/** A destination the policy does not allow: retrying does not help, so callers do not. */
export class OutboundRefused extends Error {
  override name = 'OutboundRefused';
}

export interface OutboundRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  maxBytes?: number;
  /** Ends the request early: a caller's own deadline over several requests (timeoutMs still bounds this one). */
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  ok: boolean;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * The answer's body as JSON; undefined when it is empty or not JSON, or names a member __proto__,
 * constructor or prototype anywhere (no answer the service reads has one; its members are copied
 * into claims, settings and proxied answers).
 */
export function jsonOf(reply: Pick<OutboundResponse, 'body'>): unknown {
  if (reply.body.length === 0) return undefined;
  try {
    return parseOutsideJson(reply.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The answer's body when it is a JSON object (not an array); undefined otherwise. */
export function jsonObjectOf(reply: Pick<OutboundResponse, 'body'>): Record<string, unknown> | undefined {
  const value = jsonOf(reply);
  return isJsonObject(value) ? value : undefined;
}

/**
 * What an upstream server's JSON answer holds, read by `schema`: the value, or what is wrong with it
 * (the first field at fault, and why) for an error message that names it.
 */
export function readAnswer<T>(schema: z.ZodType<T>, body: unknown): { value: T } | { wrong: string } {
  const parsed = schema.safeParse(body);
  if (parsed.success) return { value: parsed.data };
  const issue = parsed.error.issues[0];
  return { wrong: issue ? `${issue.path.join('.') || 'the body'}: ${issue.message}` : 'unreadable' };
}

export class OutboundClient {
  constructor(
    private readonly policy: OutboundPolicy,
    private readonly tracing: Pick<Tracing, 'outbound'> = NO_TRACING,
  ) {}

  /**
   * Why a URL may not be called, judged without DNS (so fit for checking a URL when it is stored):
   * its scheme, and its host when that is an IP address. Undefined when nothing is wrong yet; a
   * name is judged by what it resolves to when it is called.
   */
  urlRefusal(url: string | URL): string | undefined {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return 'is not a URL';
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be an http or https URL';
    const address = literalAddress(parsed);
    const refused = address === undefined ? undefined : this.refusedKind(address);
    return refused && `refused: ${address} is ${refused}`;
  }

  /** 'a loopback address (OUTBOUND_ALLOW_PRIVATE is false)' when the policy refuses `address`. */
  private refusedKind(address: string): string | undefined {
    const found = nonPublic(address);
    if (!found || (this.policy.allowPrivate && (!found.metadata || this.policy.allowMetadata))) return undefined;
    return `${found.kind} (${found.metadata ? 'always refused' : 'OUTBOUND_ALLOW_PRIVATE is false'})`;
  }

  /**
   * A client like this one that may also call the cloud metadata address: for an operator's key
   * provider fetching the instance's managed identity or workload token from the address the operator
   * configured (Azure IMDS, the Google metadata server), and for nothing else.
   */
  admittingMetadata(): OutboundClient {
    return new OutboundClient({ ...this.policy, allowMetadata: true }, this.tracing);
  }

  /** Resolves like the system does, then refuses the name when any of its addresses is refused. */
  private readonly lookup: LookupFunction = (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      const done = callback as (err: Error | null, address?: string | dns.LookupAddress[], family?: number) => void;
      if (err) return done(err);
      for (const { address } of addresses) {
        const refused = this.refusedKind(address);
        if (refused) return done(new OutboundRefused(`refused: ${hostname} resolves to ${address}, ${refused}`));
      }
      if (options.all) return done(null, addresses);
      // Without `all` the socket wants one address; a successful lookup always has at least one.
      const [first] = addresses as [dns.LookupAddress];
      return done(null, first.address, first.family);
    });
  };

  async request(target: string | URL, init: OutboundRequest = {}): Promise<OutboundResponse> {
    const timeoutMs = init.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init.signal ? AbortSignal.any([timeout, init.signal]) : timeout;
    let url = new URL(target);
    try {
      for (let redirects = 0; ; redirects++) {
        const refusal = this.urlRefusal(url);
        if (refusal) throw new OutboundRefused(refusal);
        const method = init.method ?? 'GET';
        const response = await this.tracing.outbound(`${method}`, { 'http.request.method': method, 'server.address': url.host }, (trace) =>
          this.exchange(url, { ...init, headers: { ...init.headers, ...trace } }, signal),
        );
        const location = REDIRECTS.has(response.status) ? response.headers.location : undefined;
        if (location === undefined) return response;
        const next = new URL(location, url);
        if (next.origin !== url.origin) throw new OutboundRefused(`refused: a redirect to another origin (${next.origin}) is not followed`);
        if ((init.method ?? 'GET') !== 'GET' || redirects === MAX_REDIRECTS) return response;
        url = next;
      }
    } catch (err) {
      if (init.signal?.aborted) throw new Error('stopped by the caller');
      if (timeout.aborted) throw new Error(`no complete answer within ${timeoutMs} ms`);
      throw err;
    }
  }

  private exchange(url: URL, init: OutboundRequest, signal: AbortSignal): Promise<OutboundResponse> {
    const maxBytes = init.maxBytes ?? DEFAULT_MAX_BYTES;
    const headers = { ...init.headers, ...(init.body !== undefined && { 'content-length': String(Buffer.byteLength(init.body)) }) };
    return new Promise((resolve, reject) => {
      const send = url.protocol === 'https:' ? https().request : http.request;
      // agent false: a pooled keep-alive connection would skip the lookup, and could have been opened under another policy.
      const request = send(url, { method: init.method ?? 'GET', headers, agent: false, lookup: this.lookup, signal }, (response) => {
        readCapped(response, maxBytes).then((body) => {
          const status = response.statusCode ?? 0;
          resolve({ status, ok: status >= 200 && status < 300, headers: response.headers, body });
        }, reject);
      });
      request.on('error', reject);
      request.end(init.body);
    });
  }
}

async function readCapped(response: http.IncomingMessage, maxBytes: number): Promise<Buffer> {
  const tooLarge = () => new Error(`the answer is larger than ${maxBytes} bytes`);
  if (Number(response.headers['content-length'] ?? 0) > maxBytes) {
    response.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
