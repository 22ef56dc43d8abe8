// OpenTelemetry traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set: a server span per request (named by
// its route pattern, with the request id), a span per database query and per outbound call, sent
// over OTLP/HTTP. The service is bundled into one file, so there is no require-hook instrumentation:
// the spans are made here, by hand. With the endpoint unset NO_TRACING is used: the SDK is never
// loaded, no hook is installed, and a traced call is a plain call.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance } from 'fastify';

type Attributes = Record<string, string | number | boolean>;

export interface Tracing {
  readonly enabled: boolean;
  /** Server spans for every request, and the request's span as the parent of what it causes. */
  instrument(app: FastifyInstance): void;
  /** Runs an outbound call as a client span; `work` receives the headers that carry the trace. */
  outbound<T>(name: string, attributes: Attributes, work: (headers: Record<string, string>) => Promise<T>): Promise<T>;
  /** Records a finished database query (the driver reports it after the fact). */
  query(statement: string, durationMs: number, failed: boolean): void;
  /** Sends what is buffered. */
  shutdown(): Promise<void>;
}

export const NO_TRACING: Tracing = {
  enabled: false,
  instrument() {},
  outbound: (_name, _attributes, work) => work({}),
  query() {},
  shutdown: async () => {},
};

/**
 * A dynamically imported package's exports. Node puts a CommonJS package's names on the namespace
 * itself; the compiled service gets the four OpenTelemetry packages without an ES module entry for
 * Node as CommonJS in a chunk, whose namespace holds them as its default export only.
 */
function exportsOf<T extends object>(namespace: T): T {
  const keys = Object.keys(namespace);
  return keys.length === 1 && keys[0] === 'default' ? (namespace as { default: T }).default : namespace;
}

export async function startTracing(endpoint: string, serviceName: string): Promise<Tracing> {
  const [api, core, sdk, exporter, resources] = await Promise.all([
    import('@opentelemetry/api').then(exportsOf),
    import('@opentelemetry/core').then(exportsOf),
    import('@opentelemetry/sdk-trace-base').then(exportsOf),
    import('@opentelemetry/exporter-trace-otlp-http').then(exportsOf),
    import('@opentelemetry/resources').then(exportsOf),
  ]);
  const { SpanKind, SpanStatusCode, ROOT_CONTEXT, trace, defaultTextMapGetter, defaultTextMapSetter } = api;
  const provider = new sdk.BasicTracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [
      new sdk.BatchSpanProcessor(new exporter.OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` }), {
        scheduledDelayMillis: 1000,
      }),
    ],
  });
  const tracer = provider.getTracer('svc');
  const propagator = new core.W3CTraceContextPropagator();
  // The span of the request being served: the parent of its queries and outbound calls.
  const current = new AsyncLocalStorage<import('@opentelemetry/api').Span>();
  const childContext = () => {
    const parent = current.getStore();
    return parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
  };

  return {
    enabled: true,
    instrument(app) {
      const spans = new WeakMap<object, import('@opentelemetry/api').Span>();
      app.addHook('onRequest', (request, _reply, done) => {
        const route = request.routeOptions.url ?? 'unmatched';
        const parent = propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
        const span = tracer.startSpan(
          `${request.method} ${route}`,
          {
            kind: SpanKind.SERVER,
            attributes: { 'http.request.method': request.method, 'http.route': route, 'svc.request_id': request.id },
          },
          parent,
        );
        spans.set(request, span);
        current.run(span, done);
      });
      app.addHook('onResponse', async (request, reply) => {
        const span = spans.get(request);
        if (!span) return;
        span.setAttribute('http.response.status_code', reply.statusCode);
        if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      });
    },
    async outbound(name, attributes, work) {
      const context = childContext();
      const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, context);
      const headers: Record<string, string> = {};
      propagator.inject(trace.setSpan(context, span), headers, defaultTextMapSetter);
      try {
        return await work(headers);
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
        throw err;
      } finally {
        span.end();
      }
    },
    query(statement, durationMs, failed) {
      // Tracing measures elapsed time, not what time it is: the system clock, not the injected one.
      const end = Date.now();
      const span = tracer.startSpan(
        statement.split(/\s/, 1)[0]?.toLowerCase() ?? 'query',
        { kind: SpanKind.CLIENT, startTime: end - durationMs, attributes: { 'db.query.text': statement.slice(0, 2000) } },
        childContext(),
      );
      if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end(end);
    },
    shutdown: () => provider.shutdown(),
  };
}
