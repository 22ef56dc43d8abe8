// The response endpoint's own rules, through one server: which session may answer (known, fetched,
// not expired, not answered, its own flow), the state, the credential query each presentation answers,
// what a completed and a failed session keep and log, the redirect_uri with its response_code, and the
// webhook's attempts. The verification of the presentations themselves is tested format by format
// (sd-jwt-verification.test.ts, mdoc-verification.test.ts).
import { createServer, type Server } from 'node:http';
import type { JWK } from 'jose';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PID, PID_ADULT_QUERY as QUERY } from '../support/fixtures.js';
import { presentSdJwt, type ResolvedRequest, resolveRequest, responseForm } from '../support/presenter.js';
import { startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

let svc: TestService;
let admin: string;
let credential: string;
let holder: JWK;

beforeAll(async () => {
  // A horizon of a second: a failing webhook gives up after the listed delays and a few doublings.
  svc = await startService({ WEBHOOK_RETRY_DELAYS_MS: '10,10', WEBHOOK_RETRY_HORIZON_SECONDS: '1' });
  admin = (await svc.tenant('acme')).token;
  expect((await svc.call('POST', '/api/issuer/credentials', { token: admin, body: PID })).status).toBe(201);
  const trust = await svc.call('POST', '/api/trust-list', {
    token: admin,
    body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
  });
  expect(trust.status, trust.text).toBe(201);
  for (const body of [
    { id: 'adult', dcql_query: QUERY, redirectUri: 'https://shop.example.com/done/{sessionId}/{sessionId}' },
    { id: 'adult-no-redirect', dcql_query: QUERY },
  ]) {
    const config = await svc.call('POST', '/api/verifier/config', { token: admin, body });
    expect(config.status, config.text).toBe(201);
  }
  ({ credential, holder } = await issueCredential(svc, admin, 'pid', {
    given_name: 'Erika',
    family_name: 'Mustermann',
    age_over_18: true,
  }));
});
afterAll(() => svc.stop());

async function offer(body: Record<string, unknown> = {}) {
  const reply = await svc.call('POST', '/api/verifier/offer', {
    token: admin,
    body: { response_type: 'uri', requestId: 'adult', ...body },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as { uri: string; session: string; requestUri: string; webhookSigningSecret?: string };
}
const sessionOf = (id: string) => svc.running.services.sessions.get('acme', id);
const logsOf = async (id: string) =>
  (await svc.call('GET', `/api/session/${id}/logs`, { token: admin })).body as {
    level: string;
    message: string;
    details?: Record<string, unknown>;
  }[];
const presentation = (resolved: ResolvedRequest) => presentSdJwt(credential, holder, resolved, ['given_name', 'age_over_18']);

/** Posts form fields to the request's response_uri, as a wallet does. */
async function post(responseUri: string, fields: Record<string, string>) {
  const reply = await fetch(responseUri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
  const text = await reply.text();
  return { status: reply.status, headers: reply.headers, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
}

async function expectRefused(reply: Awaited<ReturnType<typeof post>>, description: string) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(400);
  expect(reply.body).toMatchObject({ error: 'invalid_request', error_description: description });
}

describe('which session may answer', () => {
  it('refuses an unknown handle with 404', async () => {
    const made = await offer();
    const resolved = await resolveRequest(made.uri);
    const unknown = resolved.responseUri.replace(/\/presentations\/[^/]+\//, '/presentations/no-such-handle/');
    const reply = await post(unknown, await responseForm(resolved, { pid: [await presentation(resolved)] }));
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ error: 'invalid_request', error_description: 'unknown or expired presentation request' });
  });

  it('refuses an answer to a session that failed (not consumed, but no longer waiting for one)', async () => {
    const made = await offer();
    const resolved = await resolveRequest(made.uri);
    await expectRefused(
      await post(resolved.responseUri, await responseForm(resolved, { other: [await presentation(resolved)] })),
      "vp_token: 'other' is not a credential query of the request",
    );
    await expectRefused(
      await post(resolved.responseUri, await responseForm(resolved, { pid: [await presentation(resolved)] })),
      'this presentation request does not accept a response (already answered, or never fetched)',
    );
    expect(await sessionOf(made.session)).toMatchObject({ status: 'failed', consumed: false });
  });

  it('refuses a second answer, and a session expired meanwhile, without changing it', async () => {
    const made = await offer();
    const resolved = await resolveRequest(made.uri);
    const form = await responseForm(resolved, { pid: [await presentation(resolved)] });
    expect((await post(resolved.responseUri, form)).status).toBe(200);
    await expectRefused(
      await post(resolved.responseUri, form),
      'this presentation request does not accept a response (already answered, or never fetched)',
    );
    expect(await sessionOf(made.session)).toMatchObject({ status: 'completed', consumed: true });

    const late = await offer();
    const lateResolved = await resolveRequest(late.uri);
    await svc.running.services.sessions.update('acme', late.session, { status: 'expired' });
    await expectRefused(
      await post(lateResolved.responseUri, await responseForm(lateResolved, { pid: [await presentation(lateResolved)] })),
      'the presentation request has expired',
    );
    expect((await sessionOf(late.session)).status).toBe('expired');
  });

  it('refuses a body that is not a set of fields before it reaches the session', async () => {
    const made = await offer();
    const resolved = await resolveRequest(made.uri);
    const reply = await svc.raw('POST', new URL(resolved.responseUri).pathname, { body: ['vp_token', 'state'] });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ error: 'invalid_request', error_description: 'body: expected record, received array' });
    expect((await sessionOf(made.session)).status).toBe('fetched');
  });

  it('refuses a redirect session answered at the dc-api endpoint, naming where to post', async () => {
    const made = await offer();
    const resolved = await resolveRequest(made.uri);
    const form = await responseForm(resolved, { pid: [await presentation(resolved)] });
    const dcApiEndpoint = resolved.responseUri.replace(/\/response$/, '/dc-api-response');
    const reply = await svc.raw('POST', new URL(dcApiEndpoint).pathname, { body: { response: 'x.y.z.a.b', ...form } });
    expect(reply.status).toBe(400);
    expect(reply.body.error_description).toBe(
      'this presentation request does not answer here: it was made for a wallet, which posts its response to the response endpoint',
    );
    expect((await sessionOf(made.session)).status).toBe('fetched');
  });
});

describe('the answer of a session', () => {
  it('completes with a redirect_uri carrying a response_code the session requires (kept only hashed), and logs the verification', async () => {
    const made = await offer();
    const resolved = await resolveRequest(made.uri);
    const reply = await post(resolved.responseUri, await responseForm(resolved, { pid: [await presentation(resolved)] }));
    expect(reply.status).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    const redirect = new URL(reply.body.redirect_uri);
    expect(`${redirect.origin}${redirect.pathname}`).toBe(`https://shop.example.com/done/${made.session}/${made.session}`);
    const code = redirect.searchParams.get('response_code') as string;
    expect(code).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const done = await sessionOf(made.session);
    expect(done).toMatchObject({ status: 'completed', consumed: true });
    expect(done.public).toMatchObject({ responseCodeRequired: true });
    expect(JSON.stringify(done)).not.toContain(code);
    expect(await logsOf(made.session)).toContainEqual(
      expect.objectContaining({ level: 'info', message: 'presentation verified', details: { credentials: 1 } }),
    );
  });

  it('completes without redirect_uri and response_code when the request has no redirect', async () => {
    const made = await offer({ requestId: 'adult-no-redirect' });
    const resolved = await resolveRequest(made.uri);
    const reply = await post(resolved.responseUri, await responseForm(resolved, { pid: [await presentation(resolved)] }));
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({});
    expect((await sessionOf(made.session)).public).not.toHaveProperty('responseCodeRequired');
  });

  it('fails the session with the reason and a warning in its log when a rule refuses', async () => {
    const made = await offer();
    const resolved = await resolveRequest(made.uri);
    const form = await responseForm(resolved, { other: [await presentation(resolved)] });
    await expectRefused(await post(resolved.responseUri, form), "vp_token: 'other' is not a credential query of the request");
    expect(await sessionOf(made.session)).toMatchObject({
      status: 'failed',
      errorReason: "vp_token: 'other' is not a credential query of the request",
    });
    expect(await logsOf(made.session)).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: 'presentation rejected',
        details: { reason: "vp_token: 'other' is not a credential query of the request" },
      }),
    );
  });

  it('refuses another state, and a plain response where an encrypted one is expected', async () => {
    const made = await offer({ responseMode: 'direct_post' });
    const resolved = await resolveRequest(made.uri);
    const form = await responseForm(resolved, { pid: [await presentation(resolved)] });
    await expectRefused(await post(resolved.responseUri, { ...form, state: 'another state' }), 'state does not match the request');

    const encrypted = await offer({ responseMode: 'direct_post.jwt' });
    const encryptedResolved = await resolveRequest(encrypted.uri);
    const vpToken = JSON.stringify({ pid: [await presentation(encryptedResolved)] });
    await expectRefused(
      await post(encryptedResolved.responseUri, { vp_token: vpToken, state: String(encryptedResolved.payload.state) }),
      'the response must be encrypted (response_mode direct_post.jwt)',
    );
  });

  it('ignores an origin field in a wallet response (the origin binds only DC API responses)', async () => {
    const made = await offer({ requestId: 'adult-no-redirect' });
    const resolved = await resolveRequest(made.uri);
    const form = await responseForm(resolved, { pid: [await presentation(resolved)] });
    const reply = await post(resolved.responseUri, { ...form, origin: 'https://elsewhere.example' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((await sessionOf(made.session)).status).toBe('completed');
  });

  it('completes once when the same answer is posted twice at the same time: the other is refused', async () => {
    const made = await offer({ requestId: 'adult-no-redirect' });
    const resolved = await resolveRequest(made.uri);
    const form = await responseForm(resolved, { pid: [await presentation(resolved)] });
    const replies = await Promise.all([
      post(resolved.responseUri, form),
      post(resolved.responseUri, form),
      post(resolved.responseUri, form),
    ]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 400, 400]);
    // A loser either finds the session answered already or loses the completion itself.
    for (const refused of replies.filter((r) => r.status === 400))
      expect(refused.body).toMatchObject({
        error: 'invalid_request',
        error_description: expect.stringMatching(/^this presentation request (was already answered|does not accept a response)/),
      });
    const logs = await logsOf(made.session);
    expect(logs.filter((l) => l.message === 'presentation verified')).toHaveLength(1);
    expect(await sessionOf(made.session)).toMatchObject({ status: 'completed', consumed: true });
  });

  it('takes a state repeated beside the encrypted response only when it is the one inside', async () => {
    const made = await offer({ responseMode: 'direct_post.jwt' });
    const resolved = await resolveRequest(made.uri);
    const form = await responseForm(resolved, { pid: [await presentation(resolved)] });
    await expectRefused(
      await post(resolved.responseUri, { ...form, state: 'not the state' }),
      'state: the state sent beside the encrypted response differs from the one inside it',
    );
    const again = await offer({ responseMode: 'direct_post.jwt' });
    const againResolved = await resolveRequest(again.uri);
    const againForm = await responseForm(againResolved, { pid: [await presentation(againResolved)] });
    expect((await post(againResolved.responseUri, { ...againForm, state: String(againResolved.payload.state) })).status).toBe(200);
  });
});

describe('the webhook', () => {
  it('logs each failed attempt, retries, and gives up after the last', async () => {
    const attempts: string[] = [];
    const receiver: Server = createServer((req, res) => {
      attempts.push(String(req.headers['x-key']));
      res.writeHead(503).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as { port: number };
    try {
      // Without a redirect, the webhook goes out on completion (with one, it waits for the response_code: response-code.test.ts).
      const made = await offer({
        requestId: 'adult-no-redirect',
        webhook: { url: `http://127.0.0.1:${port}/claims`, auth: { type: 'header', header: { name: 'X-Key', value: 'k' } } },
      });
      const resolved = await resolveRequest(made.uri);
      expect((await post(resolved.responseUri, await responseForm(resolved, { pid: [await presentation(resolved)] }))).status).toBe(200);
      await expect
        .poll(async () => (await logsOf(made.session)).some((l) => l.message === 'webhook delivery failed; giving up'), { timeout: 5000 })
        .toBe(true);
      const logs = (await logsOf(made.session)).filter((l) => l.message.startsWith('webhook'));
      // An attempt, a retry per listed delay, then retries at doubling waits until the horizon (a second here).
      expect(logs.length).toBeGreaterThanOrEqual(3);
      expect(logs.map((l) => [l.level, l.message, l.details?.attempt])).toEqual(
        logs.map((_, i) =>
          i < logs.length - 1
            ? ['warn', 'webhook delivery failed; will retry', i + 1]
            : ['error', 'webhook delivery failed; giving up', i + 1],
        ),
      );
      expect(logs.every((l) => typeof l.details?.reason === 'string')).toBe(true);
      expect(attempts).toEqual(logs.map(() => 'k'));
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });

  it('logs a delivery, signed with the secret answered with the request, and sends nothing when neither the request nor its configuration names a webhook', async () => {
    const received: unknown[] = [];
    const signed: { body: string; headers: Record<string, string> }[] = [];
    const receiver: Server = createServer((req, res) => {
      received.push(req.headers['x-key']);
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        const header = (name: string) => String(req.headers[name]);
        signed.push({
          body,
          headers: Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((n) => [n, header(n)])),
        });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as { port: number };
    try {
      const made = await offer({
        requestId: 'adult-no-redirect',
        webhook: { url: `http://127.0.0.1:${port}/claims`, auth: { type: 'none' } },
      });
      const resolved = await resolveRequest(made.uri);
      expect((await post(resolved.responseUri, await responseForm(resolved, { pid: [await presentation(resolved)] }))).status).toBe(200);
      await expect.poll(() => received.length, { timeout: 5000 }).toBe(1);
      expect(received).toEqual([undefined]);
      await expect
        .poll(async () => (await logsOf(made.session)).find((l) => l.message === 'webhook delivered'), { timeout: 5000 })
        .toMatchObject({ level: 'info', details: { attempt: 1 } });
      // Checked by the standardwebhooks package, independently of the service's signing code.
      expect(made.webhookSigningSecret).toMatch(/^whsec_/);
      const [hit] = signed;
      if (!hit) throw new Error('no request');
      expect(new Webhook(String(made.webhookSigningSecret)).verify(hit.body, hit.headers)).toMatchObject({
        type: 'presentation.completed',
        sessionId: made.session,
      });

      const quiet = await offer({ requestId: 'adult-no-redirect' });
      const quietResolved = await resolveRequest(quiet.uri);
      expect(
        (await post(quietResolved.responseUri, await responseForm(quietResolved, { pid: [await presentation(quietResolved)] }))).status,
      ).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await logsOf(quiet.session)).filter((l) => l.message.startsWith('webhook'))).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});
