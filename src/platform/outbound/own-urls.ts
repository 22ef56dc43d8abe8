// The service reading its own public documents (the status list tokens of the credentials it issued,
// presented to its verifier): a GET of a URL under PUBLIC_URL that names one of those routes is
// answered in-process, by the same code that serves the route, with the status, content type and
// bytes an HTTP request would get; any other URL goes to the outbound client unchanged, under its
// address policy.
//
// Why not over the network: where PUBLIC_URL leads from inside the deployment is not this service's
// to choose. It may be a loopback or private address, which the outbound policy refuses in production
// (OUTBOUND_ALLOW_PRIVATE false), a name only the clients' DNS knows, or a load balancer the pod cannot
// reach back through. A URL under PUBLIC_URL with such a route is this service's by construction, so
// no policy is bypassed: nothing leaves the process.
//
// The route's own code rather than app.inject: inject would send each read through the whole request
// pipeline (access log, metrics and tracing of a request nobody made, input guards), needs the app,
// which is built after the features that read, and costs a serialization round trip per read.
import { oauthErrorBody } from '../http/errors.js';
import { Problem } from '../http/problem.js';
import { DEFAULT_MAX_BYTES, type OutboundClient, type OutboundRequest, type OutboundResponse } from './client.js';

/** What reads a URL: the outbound client, or OwnUrlsFirst in front of it (which also tells which URLs it answers itself). */
export type UrlReader = Pick<OutboundClient, 'request'> & { owns?(target: URL): boolean };

/** What a route answers with a 200. */
export interface ServedDocument {
  contentType: string;
  body: string | Uint8Array;
  headers: Record<string, string>;
}

export interface OwnRoute {
  /** The route's path as the server declares it, parameters as :name (/issuers/:tenantId/status-lists/:listId). */
  path: string;
  /** What the route answers a GET with these parameters and (lower-case) headers; throws a Problem where the route does. */
  serve(params: Record<string, string>, headers: Record<string, string>): Promise<ServedDocument>;
}

interface Matched {
  route: OwnRoute;
  params: Record<string, string>;
}

export class OwnUrlsFirst implements UrlReader {
  private readonly origin: string;
  /** PUBLIC_URL's path ('' at the root): a reverse proxy takes it off before the request reaches the routes. */
  private readonly prefix: string;
  private readonly routes: { route: OwnRoute; segments: string[] }[];

  constructor(
    publicUrl: string,
    private readonly outbound: UrlReader,
    routes: OwnRoute[],
  ) {
    const base = new URL(publicUrl);
    this.origin = base.origin;
    this.prefix = base.pathname.replace(/\/+$/, '');
    this.routes = routes.map((route) => ({ route, segments: route.path.split('/').slice(1) }));
  }

  async request(target: string | URL, init: OutboundRequest = {}): Promise<OutboundResponse> {
    const own = (init.method ?? 'GET') === 'GET' ? this.match(new URL(target)) : undefined;
    if (!own) return this.outbound.request(target, init);
    const headers = Object.fromEntries(Object.entries(init.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
    let served: ServedDocument;
    try {
      served = await own.route.serve(own.params, headers);
    } catch (err) {
      // A Problem is the answer the route would send (a list not found is a 404 here as over HTTP);
      // anything else is a failure of the read, reported by the reader as one of the network would be.
      if (!(err instanceof Problem)) throw err;
      const body = Buffer.from(JSON.stringify(oauthErrorBody(err)));
      return { status: err.status, ok: false, headers: { ...err.headers, 'content-type': 'application/json; charset=utf-8' }, body };
    }
    const body = Buffer.from(served.body);
    const maxBytes = init.maxBytes ?? DEFAULT_MAX_BYTES;
    if (body.length > maxBytes) throw new Error(`the answer is larger than ${maxBytes} bytes`);
    return { status: 200, ok: true, headers: { ...served.headers, 'content-type': served.contentType }, body };
  }

  /** Whether a GET of `target` is answered in-process: a URL of one of this service's own documents. */
  owns(target: URL): boolean {
    return this.match(target) !== undefined;
  }

  /** The route a URL of this service names, with its decoded parameters; undefined for any other URL. */
  private match(url: URL): Matched | undefined {
    if (url.origin !== this.origin || !url.pathname.startsWith(`${this.prefix}/`)) return undefined;
    const segments = url.pathname.slice(this.prefix.length).split('/').slice(1);
    // As the server routes (ignoreTrailingSlash).
    if (segments.length > 1 && segments.at(-1) === '') segments.pop();
    for (const { route, segments: pattern } of this.routes) {
      const params = paramsOf(pattern, segments);
      if (params) return { route, params };
    }
    return undefined;
  }
}

function paramsOf(pattern: string[], segments: string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, expected] of pattern.entries()) {
    const actual = segments[i] as string;
    if (!expected.startsWith(':')) {
      if (actual !== expected) return undefined;
      continue;
    }
    if (actual === '') return undefined;
    try {
      params[expected.slice(1)] = decodeURIComponent(actual);
    } catch {
      return undefined;
    }
  }
  return params;
}
