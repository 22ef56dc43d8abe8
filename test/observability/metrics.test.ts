// Prometheus metrics: behind METRICS_TOKEN on the main port, open on METRICS_PORT, and moved by real
// flows: an issuance, a verified and a refused presentation, HTTP requests by route pattern.
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine } from '../support/database.js';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import { startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

const METRICS_TOKEN = 'metrics-token-for-tests-0123';
const PID = {
  id: 'pid',
  config: { format: 'dc+sd-jwt' },
  vct: 'urn:eudi:pid:1',
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true },
    { path: ['age_over_18'], type: 'boolean' },
  ],
};
const QUERY = {
  credentials: [
    { id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] }, claims: [{ path: ['age_over_18'], values: [true] }] },
  ],
};

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

let svc: TestService;
let metricsPort: number;
let admin: string;
beforeAll(async () => {
  metricsPort = await freePort();
  // The webhook worker's look for due deliveries (once a second by default) would count among the
  // statements the round-trip test expects from its requests alone.
  svc = await startService({ METRICS_TOKEN, METRICS_PORT: String(metricsPort), WEBHOOK_POLL_INTERVAL_MS: '60000' });
  admin = (await svc.tenant('acme')).token;
  expect((await svc.raw('POST', '/api/issuer/credentials', { token: admin, body: PID })).status).toBe(201);
  await svc.call('POST', '/api/trust-list', {
    token: admin,
    body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
  });
  expect((await svc.call('POST', '/api/verifier/config', { token: admin, body: { id: 'adult', dcql_query: QUERY } })).status).toBe(201);
});
afterAll(() => svc.stop());

const scrape = async () => {
  const reply = await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(reply.status).toBe(200);
  return reply.text();
};
/** The value of one series, 0 when it is absent. */
const value = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
};

describe('metrics', () => {
  it('answers only with the metrics token on the main port', async () => {
    expect((await fetch(`${svc.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${svc.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const text = await scrape();
    for (const name of [
      'svc_http_requests_total',
      'svc_http_request_duration_seconds',
      'svc_credentials_issued_total',
      'svc_issuance_sessions_total',
      'svc_presentations_total',
      'svc_status_list_signing_seconds',
      'svc_job_runs_total',
      'svc_job_run_seconds',
      'svc_nodejs_eventloop_lag_seconds',
    ]) {
      expect(text, name).toContain(`# TYPE ${name} `);
    }
    if (engine === 'postgres') expect(text).toContain('svc_db_pool_connections{state="total"}');
  });

  it('answers without a token on METRICS_PORT, and nothing else there', async () => {
    const reply = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(reply.status).toBe(200);
    expect(await reply.text()).toContain('svc_http_requests_total');
    expect((await fetch(`http://127.0.0.1:${metricsPort}/api/tenant`)).status).toBe(404);
  });

  it('counts issued credentials, ended sessions and HTTP requests by route pattern', async () => {
    const before = await scrape();
    const issued = 'svc_credentials_issued_total{tenant="acme",format="dc+sd-jwt"}';
    const credentialRoute = 'svc_http_requests_total{method="POST",route="/issuers/:tenantId/credential",status="200"}';
    const { credential, holder } = await issueCredential(svc, admin, 'pid', { given_name: 'Erika', age_over_18: true });

    const verified = 'svc_presentations_total{tenant="acme",format="dc+sd-jwt",outcome="completed"}';
    const refused = 'svc_presentations_total{tenant="acme",format="none",outcome="failed"}';
    const present = async (disclose: string[]) => {
      const offer = await svc.raw('POST', '/api/verifier/offer', { token: admin, body: { response_type: 'uri', requestId: 'adult' } });
      const request = await resolveRequest(offer.body.uri);
      return submit(request, { pid: [await presentSdJwt(credential, holder, request, disclose)] });
    };
    expect((await present(['age_over_18'])).status).toBe(200);
    expect((await present([])).status).toBe(400);

    const after = await scrape();
    expect(value(after, issued) - value(before, issued)).toBe(1);
    expect(value(after, credentialRoute) - value(before, credentialRoute)).toBe(1);
    expect(value(after, verified) - value(before, verified)).toBe(1);
    expect(value(after, refused) - value(before, refused)).toBe(1);
    // Route patterns, never raw URLs: no tenant id or handle in a route label.
    expect(after).not.toMatch(/route="[^"]*acme/);
  });

  it('counts the statements sent to the database: one for the readiness check, one for a scrape (the outbox gauges), none for liveness', async () => {
    const roundTrips = async () => value(await scrape(), 'svc_db_round_trips_total');
    await roundTrips();
    // The rate-limit counts of the set-up's token requests go to the database within 250 ms.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = await roundTrips();
    expect(before).toBeGreaterThan(0);
    expect(await roundTrips()).toBe(before + 1);
    expect((await fetch(`${svc.url}/health/ready`)).status).toBe(200);
    expect(await roundTrips()).toBe(before + 3);
    expect((await fetch(`${svc.url}/health`)).status).toBe(200);
    expect(await roundTrips()).toBe(before + 4);
  });
});
