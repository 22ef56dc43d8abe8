// The access log as an operator reads it, from the service as `npm start` runs it: the handles in
// offer and presentation request URIs are bearer values (an offer's handle yields its pre-authorized
// code), so their path segments are logged redacted, and so are credentials in query strings (a pushed
// request's request_uri, the code and state at the chained authorization server's callback), while
// the rest of the URL stays readable.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { run, type Started, stop } from '../support/process.js';

const ROOT = { id: 'root', secret: randomBytes(24).toString('base64url') };
let database: TestDatabase;
let service: Started;
let base: string;

beforeAll(async () => {
  database = await freshDatabase();
  service = await run({
    ...database.env,
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    MASTER_SECRET: randomBytes(32).toString('base64url'),
    AUTH_CLIENT_ID: ROOT.id,
    AUTH_CLIENT_SECRET: ROOT.secret,
  });
  base = `http://127.0.0.1:${service.port}`;
}, 120_000);
afterAll(async () => {
  if (service) await stop(service);
  await database.drop();
});

async function call(method: string, path: string, token?: string, body?: unknown) {
  const reply = await fetch(`${base}${path}`, {
    method,
    headers: { ...(token && { authorization: `Bearer ${token}` }), ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await reply.text();
  return { status: reply.status, text, body: text.startsWith('{') ? JSON.parse(text) : undefined };
}

async function tokenFor(clientId: string, secret: string): Promise<string> {
  const reply = await fetch(`${base}/api/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
  });
  return ((await reply.json()) as { access_token: string }).access_token;
}

/** The log records of requests to `path` (a prefix), as parsed JSON. */
const requestsTo = (path: string) =>
  service
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { req?: { url: string } })
    .filter((record) => record.req?.url.startsWith(path));

describe('access log', () => {
  it('shows offer and presentation request URIs with their handles redacted', async () => {
    const tenant = await call('POST', '/api/tenant', await tokenFor(ROOT.id, ROOT.secret), {
      id: 'logs',
      name: 'Logs',
      roles: ['issuance:manage', 'issuance:offer', 'presentation:manage', 'presentation:request'],
    });
    expect(tenant.status, tenant.text).toBe(201);
    const token = await tokenFor(tenant.body.client.clientId, tenant.body.client.secret);
    const configuration = await call('POST', '/api/issuer/credentials', token, {
      id: 'pid',
      vct: 'urn:test:pid',
      config: { format: 'dc+sd-jwt' },
      fields: [{ path: ['given_name'], type: 'string', mandatory: true }],
    });
    expect(configuration.status, configuration.text).toBe(201);

    // An offer by reference, fetched as a wallet would: the answer holds the pre-authorized code.
    const offer = await call('POST', '/api/issuer/offer', token, {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: ['pid'],
      credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika' } } },
    });
    expect(offer.status, offer.text).toBe(201);
    const offerUri = new URL(new URL(offer.body.uri).searchParams.get('credential_offer_uri') as string);
    const offerHandle = offerUri.pathname.split('/').pop() as string;
    const fetched = await call('GET', `${offerUri.pathname}?probe=1`);
    expect(fetched.status, fetched.text).toBe(200);
    const code = fetched.body.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code'] as string;

    // A presentation request, fetched and (badly) answered.
    const verifier = await call('POST', '/api/verifier/config', token, {
      id: 'check',
      dcql_query: { credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:test:pid'] } }] },
    });
    expect(verifier.status, verifier.text).toBe(201);
    const request = await call('POST', '/api/verifier/offer', token, { response_type: 'uri', requestId: 'check' });
    expect(request.status, request.text).toBe(201);
    const requestUri = new URL(new URL(request.body.uri).searchParams.get('request_uri') as string);
    const requestHandle = requestUri.pathname.split('/')[2] as string;
    expect(requestUri.pathname).toBe(`/presentations/${requestHandle}/request`);
    expect((await call('GET', requestUri.pathname)).status).toBe(200);
    expect((await call('POST', `/presentations/${requestHandle}/response`)).status).toBe(400);

    // The records are written before the answers: wait for the last one.
    await expect.poll(() => requestsTo('/presentations/[redacted]/response').length).toBe(1);
    const output = service.output();
    for (const secret of [offerHandle, requestHandle, code]) {
      expect(secret.length).toBeGreaterThanOrEqual(16);
      expect(output).not.toContain(secret);
    }
    expect(requestsTo('/issuers/logs/credential-offer/').map((r) => r.req?.url)).toEqual([
      '/issuers/logs/credential-offer/[redacted]?probe=1',
    ]);
    expect(requestsTo('/presentations/').map((r) => r.req?.url)).toEqual([
      '/presentations/[redacted]/request',
      '/presentations/[redacted]/response',
    ]);
    // The request_uri of a pushed authorization request is a bearer value too.
    const pushed = 'urn:ietf:params:oauth:request_uri:pushed-secret-0123456789';
    await call('GET', `/issuers/logs/authorize?client_id=wallet&request_uri=${encodeURIComponent(pushed)}`);
    await expect.poll(() => requestsTo('/issuers/logs/authorize').length).toBe(1);
    expect(requestsTo('/issuers/logs/authorize').map((r) => r.req?.url)).toEqual([
      '/issuers/logs/authorize?client_id=wallet&request_uri=[redacted]',
    ]);
    expect(service.output()).not.toContain('pushed-secret');
    // So are the upstream provider's code and the login's state at the chained authorization server's callback.
    const callback = '/api/issuers/logs/chained-as-vp/callback';
    await call('GET', `${callback}?state=upstream-state-0123456789&code=upstream-code-0123456789&iss=https%3A%2F%2Flogin.example.com`);
    await expect.poll(() => requestsTo(callback).length).toBe(1);
    expect(requestsTo(callback).map((r) => r.req?.url)).toEqual([
      `${callback}?state=[redacted]&code=[redacted]&iss=https%3A%2F%2Flogin.example.com`,
    ]);
    expect(service.output()).not.toContain('upstream-state');
    expect(service.output()).not.toContain('upstream-code');
    // Other URLs are logged as they are.
    expect(requestsTo('/api/verifier/offer').map((r) => r.req?.url)).toEqual(['/api/verifier/offer']);
  }, 60_000);
});
