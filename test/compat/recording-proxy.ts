// A loopback reverse proxy in front of the test service that records what a wallet library sends.
// The service runs with PUBLIC_URL set to the proxy, so every wallet-facing URL it hands out (offer,
// metadata, request_uri, response_uri) leads the wallet through the proxy, and tests can assert on
// the wire: which well-known locations were tried, which parameters a library really sends.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

export interface RecordingProxy {
  url: string;
  /** Where requests go; set once the service behind the proxy has started. */
  target: string;
  requests: RecordedRequest[];
  /** The recorded requests to paths matching `pattern`, each as 'METHOD path status'. */
  seen(pattern: RegExp): string[];
  close(): Promise<void>;
}

const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding', 'host'];

export async function recordingProxy(): Promise<RecordingProxy> {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (incoming, outgoing) => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const headers = Object.fromEntries(
      Object.entries(incoming.headers).filter(([name, value]) => !HOP_BY_HOP.includes(name) && typeof value === 'string'),
    ) as Record<string, string>;
    try {
      const answer = await fetch(new URL(incoming.url ?? '/', proxy.target), {
        method: incoming.method,
        headers,
        ...(body.length && { body }),
        redirect: 'manual',
      });
      const payload = Buffer.from(await answer.arrayBuffer());
      requests.push({
        method: incoming.method ?? 'GET',
        path: incoming.url ?? '/',
        headers: incoming.headers,
        body: body.toString(),
        status: answer.status,
      });
      const passed: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (!HOP_BY_HOP.includes(name)) passed[name] = value;
      });
      outgoing.writeHead(answer.status, passed).end(payload);
    } catch (err) {
      outgoing.writeHead(502).end(String(err));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy: RecordingProxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    target: '',
    requests,
    seen: (pattern) => requests.filter((r) => pattern.test(r.path)).map((r) => `${r.method} ${r.path} ${r.status}`),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return proxy;
}
