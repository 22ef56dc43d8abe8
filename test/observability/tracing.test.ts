// OpenTelemetry traces reach an OTLP/HTTP receiver run by the test: the server span of a request
// (route pattern, request id), its database queries and the outbound call it causes, in one trace,
// with the trace context passed on to the called server. Without an endpoint nothing is traced.

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, stop } from '../support/process.js';
import { startService, type TestService } from '../support/service.js';

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}

function listen(handler: (body: string, headers: IncomingHttpHeaders) => void): Promise<{ server: Server; url: string }> {
  return new Promise((resolve) => {
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        handler(body, request.headers);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` }));
  });
}

/** An OTLP/HTTP (JSON) export handler that keeps the spans it receives. */
const collectSpans = (into: Span[]) => (body: string) => {
  for (const resource of JSON.parse(body).resourceSpans ?? [])
    for (const scope of resource.scopeSpans ?? []) into.push(...(scope.spans as Span[]));
};

const spans: Span[] = [];
const webhookHeaders: IncomingHttpHeaders[] = [];
let receiver: { server: Server; url: string };
let webhookTarget: { server: Server; url: string };
let svc: TestService;
beforeAll(async () => {
  receiver = await listen(collectSpans(spans));
  webhookTarget = await listen((_body, headers) => webhookHeaders.push(headers));
  svc = await startService({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
});
afterAll(async () => {
  await svc.stop();
  receiver.server.close();
  webhookTarget.server.close();
});

const attribute = (span: Span, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
};

describe('traces', () => {
  it('sends a request, its queries and its outbound call as one trace, and passes the trace on', async () => {
    const admin = (await svc.tenant('acme')).token;
    const config = {
      id: 'pid',
      config: { format: 'dc+sd-jwt' },
      vct: 'urn:x',
      fields: [{ path: ['given_name'], type: 'string' }],
    };
    expect((await svc.raw('POST', '/api/issuer/credentials', { token: admin, body: config })).status).toBe(201);
    const endpoint = { id: 'hook', name: 'Hook', url: `${webhookTarget.url}/events`, auth: { type: 'none' } };
    expect((await svc.raw('POST', '/api/issuer/webhook-endpoints', { token: admin, body: endpoint })).status).toBe(201);
    const offer = await svc.call('POST', '/api/issuer/offer', {
      token: admin,
      body: {
        response_type: 'uri',
        flow: 'pre_authorized_code',
        credentialConfigurationIds: ['pid'],
        credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika' } } },
        webhookEndpointId: 'hook',
      },
    });
    expect(offer.status, offer.text).toBe(201);
    // Fetching the offer changes the session's status, which the webhook hears of.
    const fetched = await fetch(offer.body.credentialOfferUri, { headers: { 'x-request-id': 'trace-me-1' } });
    expect(fetched.status).toBe(200);

    await expect.poll(() => webhookHeaders.length, { timeout: 10_000 }).toBeGreaterThan(0);
    const server = await expect
      .poll(() => spans.find((s) => attribute(s, 'svc.request_id') === 'trace-me-1'), { timeout: 10_000 })
      .toBeDefined()
      .then(() => spans.find((s) => attribute(s, 'svc.request_id') === 'trace-me-1') as Span);
    expect(server.name).toBe('GET /issuers/:tenantId/credential-offer/:handle');
    expect(attribute(server, 'http.route')).toBe('/issuers/:tenantId/credential-offer/:handle');
    expect(attribute(server, 'http.response.status_code')).toBe(200);

    const inTrace = () => spans.filter((s) => s.traceId === server.traceId && s !== server);
    await expect.poll(() => inTrace().some((s) => s.name === 'POST'), { timeout: 10_000 }).toBe(true);
    const queries = inTrace().filter((s) => attribute(s, 'db.query.text') !== undefined);
    expect(queries.length).toBeGreaterThan(0);
    expect(queries.every((q) => q.parentSpanId === server.spanId)).toBe(true);
    const call = inTrace().find((s) => s.name === 'POST') as Span;
    expect(attribute(call, 'server.address')).toBe(new URL(webhookTarget.url).host);
    // The called server can continue the trace.
    expect(webhookHeaders[0]?.traceparent).toMatch(new RegExp(`^00-${server.traceId}-${call.spanId}-0[01]$`));
    // Route patterns only: neither the offer's handle nor the tenant id names a span.
    const handle = new URL(offer.body.credentialOfferUri).pathname.split('/').pop() as string;
    expect(spans.some((s) => s.name.includes(handle))).toBe(false);
  });

  it('are sent by the compiled service too (its chunks load OpenTelemetry as CommonJS)', async () => {
    const received: Span[] = [];
    const compiledReceiver = await listen(collectSpans(received));
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-tracing-'));
    const started = await run(
      { DATA_DIR: dataDir, PORT: '0', OTEL_EXPORTER_OTLP_ENDPOINT: compiledReceiver.url },
      { command: [process.execPath, 'dist/main.js'] },
    );
    try {
      expect((await fetch(`http://127.0.0.1:${started.port}/health`)).status).toBe(200);
      await expect.poll(() => received.map((span) => span.name), { timeout: 5_000 }).toContain('GET /health');
    } finally {
      await stop(started);
      compiledReceiver.server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('costs nothing without an endpoint: no tracing is set up', async () => {
    const plain = await startService();
    try {
      expect(plain.running.services.tracing.enabled).toBe(false);
    } finally {
      await plain.stop();
    }
  });
});
