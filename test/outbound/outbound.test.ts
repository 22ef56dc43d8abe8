// Outgoing calls (attribute providers, per-offer claim webhooks, issuance and verifier webhooks,
// status lists of presented credentials but this service's own, which it reads without the network)
// go only where the outbound policy allows: no loopback, private, link-local or other non-public
// address while OUTBOUND_ALLOW_PRIVATE is false, never the cloud metadata address, never a redirect
// to another origin (which would carry the API key there), and never more than the size cap. A URL naming a refused address is refused when it is stored; a
// name is judged by what it resolves to when it is called, and the failure lands in the session log.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import { expectProblem, fieldsOf, problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';
import { issueCredential, receiveCredentials } from '../support/wallet.js';

/** Every form of a non-public address a URL can carry; the URL parser turns the numeric IPv4 forms into 127.0.0.1. */
const REFUSED_HOSTS = [
  '127.0.0.1',
  '0x7f000001',
  '2130706433',
  '0177.0.0.1',
  '127.1',
  '017700000001',
  '0.0.0.0',
  '10.1.2.3',
  '172.16.0.1',
  '192.168.1.1',
  '100.64.0.1',
  '169.254.1.1',
  '169.254.169.254',
  '224.0.0.1',
  '255.255.255.255',
  '240.0.0.1',
  '192.0.2.1',
  '198.51.100.1',
  '203.0.113.1',
  '[::]',
  '[::1]',
  '[fe80::1]',
  '[fc00::1]',
  '[fd00:ec2::254]',
  '[ff02::1]',
  '[2001:db8::1]',
  '[::ffff:127.0.0.1]',
  '[::ffff:169.254.169.254]',
  '[::127.0.0.1]',
  '[::ffff:0:10.0.0.1]',
  '[64:ff9b::127.0.0.1]',
  '[64:ff9b::192.168.0.1]',
  '[64:ff9b:1::1]',
  '[2002:7f00:1::]',
];

const ENDPOINT_PATHS = ['/api/issuer/attribute-providers', '/api/issuer/webhook-endpoints'];

const PID = {
  id: 'pid',
  config: { format: 'dc+sd-jwt' },
  vct: 'urn:eudi:pid:1',
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true },
    { path: ['family_name'], type: 'string' },
  ],
};
const QUERY = {
  credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] }, claims: [{ path: ['given_name'] }] }],
};

interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local HTTP server that records what reaches it and answers with `answer`. */
async function receiver(answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(204).end()) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      received.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
type Receiver = Awaited<ReturnType<typeof receiver>>;

const logsOf = (svc: TestService, sessionId: string) =>
  svc.db.selectFrom('session_logs').selectAll().where('session_id', '=', sessionId).orderBy('seq').execute();
const logged = async (svc: TestService, sessionId: string, message: string) =>
  (await logsOf(svc, sessionId)).filter((l) => l.message === message).map((l) => JSON.parse(l.details as string));

async function setUpIssuer(svc: TestService, tenant: string) {
  const { token } = await svc.tenant(tenant);
  const created = await svc.raw('POST', '/api/issuer/credentials', { token, body: PID });
  expect(created.status, created.text).toBe(201);
  return token;
}

async function offer(svc: TestService, token: string, body: Record<string, unknown>) {
  const reply = await svc.call('POST', '/api/issuer/offer', {
    token,
    body: { response_type: 'uri', flow: 'pre_authorized_code', credentialConfigurationIds: ['pid'], ...body },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as { uri: string; session: string };
}

/** Runs the wallet's side of the offer: what the credential request failed with, or 'issued'. */
async function credentialOutcome(uri: string): Promise<string> {
  return receiveCredentials(uri).then(
    () => 'issued',
    (err: unknown) => JSON.stringify(err, Object.getOwnPropertyNames(err ?? {})),
  );
}

const viaProvider = { credentialClaims: { pid: { type: 'attributeProvider', attributeProviderId: 'registry' } } };

describe('with OUTBOUND_ALLOW_PRIVATE=false', () => {
  let svc: TestService;
  let admin: string;
  let target: Receiver;
  beforeAll(async () => {
    svc = await startService({ OUTBOUND_ALLOW_PRIVATE: 'false' });
    admin = await setUpIssuer(svc, 'acme');
    target = await receiver((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"claims":{"given_name":"X"}}'));
  });
  afterAll(async () => {
    await target.close();
    await svc.stop();
  });

  describe.each(ENDPOINT_PATHS)('storing a URL at %s', (path) => {
    const table = path.endsWith('attribute-providers') ? 'attribute_providers' : 'webhook_endpoints';
    const body = (id: string, url: string) => ({ id, name: 'Partner', url, auth: { type: 'none' } });
    const stored = (id: string) =>
      svc.db.selectFrom(table).selectAll().where('tenant_id', '=', 'acme').where('id', '=', id).executeTakeFirst();

    it.each(REFUSED_HOSTS)('refuses http://%s with a 400 naming body.url, and stores nothing', async (host) => {
      const reply = await svc.raw('POST', path, { token: admin, body: body('inside', `http://${host}:8080/hook`) });
      expectProblem(reply, 400);
      expect(fieldsOf(reply)).toEqual(['body.url']);
      expect(reply.body.errors[0].message).toMatch(/^refused: \S+ is (a|an|the) .+ address/);
      expect(await stored('inside')).toBeUndefined();
    });

    it('refuses a refused address on update and keeps the stored URL', async () => {
      const created = await svc.raw('POST', path, { token: admin, body: body('moving', 'https://partner.example.com/hook') });
      expect(created.status, created.text).toBe(201);
      for (const url of ['http://2130706433/hook', 'http://[::ffff:a9fe:a9fe]/latest/meta-data/']) {
        const reply = await svc.raw('PATCH', `${path}/moving`, { token: admin, body: { url } });
        expectProblem(reply, 400);
        expect(fieldsOf(reply)).toEqual(['body.url']);
      }
      expect((await stored('moving'))?.url).toBe('https://partner.example.com/hook');
    });

    it('accepts a public address, and a name (judged by what it resolves to when called)', async () => {
      for (const [id, url] of [
        ['public-ip', 'https://93.184.215.14/hook'],
        ['public-ip6', 'https://[2606:4700:4700::1111]/hook'],
        ['nat64-public', 'https://[64:ff9b::8.8.8.8]/hook'],
        ['by-name', 'http://localhost:8080/hook'],
      ] as const) {
        const reply = await svc.raw('POST', path, { token: admin, body: body(id, url) });
        expect(reply.status, reply.text).toBe(201);
      }
    });
  });

  it('refuses an attribute provider whose name resolves to a loopback address when it is called', async () => {
    const made = await svc.call('POST', '/api/issuer/attribute-providers', {
      token: admin,
      body: {
        id: 'registry',
        name: 'Registry',
        url: `http://localhost:${target.port}/claims`,
        auth: { type: 'header', header: { name: 'X-Api-Key', value: 'registry-secret' } },
      },
    });
    expect(made.status, made.text).toBe(201);
    const before = target.received.length;
    const created = await offer(svc, admin, viaProvider);
    expect(await credentialOutcome(created.uri)).toContain('credential_request_denied');
    expect(target.received.length).toBe(before);
    const [failure] = await logged(svc, created.session, 'attribute source failed');
    expect(failure.reason).toMatch(
      /^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address \(OUTBOUND_ALLOW_PRIVATE is false\)$/,
    );
  });

  it('refuses a per-offer claim webhook naming a refused address when the offer is made', async () => {
    for (const host of ['0x7f000001', '[::ffff:10.0.0.1]']) {
      const reply = await svc.raw('POST', '/api/issuer/offer', {
        token: admin,
        body: {
          response_type: 'uri',
          flow: 'pre_authorized_code',
          credentialConfigurationIds: ['pid'],
          credentialClaims: { pid: { type: 'webhook', webhook: { url: `http://${host}/claims` } } },
        },
      });
      expectProblem(reply, 400);
      expect(fieldsOf(reply)).toEqual(['body.credentialClaims.pid.webhook.url']);
      expect(reply.body.errors[0].message).toMatch(/^refused: \S+ is .+ \(OUTBOUND_ALLOW_PRIVATE is false\)$/);
    }
  });

  it('refuses a per-offer claim webhook whose name resolves to a loopback address', async () => {
    const before = target.received.length;
    const created = await offer(svc, admin, {
      credentialClaims: { pid: { type: 'webhook', webhook: { url: `http://localhost:${target.port}/claims` } } },
    });
    expect(await credentialOutcome(created.uri)).toContain('credential_request_denied');
    expect(target.received.length).toBe(before);
    const [failure] = await logged(svc, created.session, 'attribute source failed');
    expect(failure.reason).toMatch(/^refused: localhost resolves to/);
  });

  it('refuses an issuance webhook whose name resolves to a loopback address, once, without retrying', async () => {
    const made = await svc.call('POST', '/api/issuer/webhook-endpoints', {
      token: admin,
      body: { id: 'crm', name: 'CRM', url: `http://localhost:${target.port}/hook`, auth: { type: 'none' } },
    });
    expect(made.status, made.text).toBe(201);
    const before = target.received.length;
    const created = await offer(svc, admin, {
      webhookEndpointId: 'crm',
      credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika' } } },
    });
    await receiveCredentials(created.uri);
    // One final failure per status change (fetched, completed): a refused destination is not retried.
    await expect.poll(async () => (await logged(svc, created.session, 'webhook delivery failed; giving up')).length).toBe(2);
    const failures = await logged(svc, created.session, 'webhook delivery failed; giving up');
    expect(failures.map((f) => f.attempt)).toEqual([1, 1]);
    expect(failures[0].reason).toMatch(/^refused: localhost resolves to .+, a loopback address/);
    expect(await logged(svc, created.session, 'webhook delivery failed; will retry')).toEqual([]);
    expect(target.received.length).toBe(before);
  });

  describe('as a verifier', () => {
    let token: string;
    beforeAll(async () => {
      token = await setUpIssuer(svc, 'shop');
      const trust = await svc.call('POST', '/api/trust-list', {
        token,
        body: {
          id: 'issuers',
          entities: [
            { type: 'internal', keyChainId: 'default-attestation' },
            { type: 'internal', keyChainId: 'default-statusList', serviceType: 'revocation' },
          ],
        },
      });
      expect(trust.status, trust.text).toBe(201);
      const config = await svc.call('POST', '/api/verifier/config', { token, body: { id: 'pid-check', dcql_query: QUERY } });
      expect(config.status, config.text).toBe(201);
    });

    it('refuses a verifier webhook naming a refused address when the request is made', async () => {
      for (const host of ['127.1', '[::ffff:169.254.169.254]']) {
        const reply = await svc.call('POST', '/api/verifier/offer', {
          token,
          body: { response_type: 'uri', requestId: 'pid-check', webhook: { url: `http://${host}/claims` } },
        });
        expectProblem(reply, 400);
        expect(fieldsOf(reply)).toEqual(['body.webhook.url']);
      }
    });

    it('refuses a verifier webhook whose name resolves to a loopback address, and the presentation still completes', async () => {
      const { credential, holder } = await issueCredential(svc, token, 'pid', { given_name: 'Erika' });
      const before = target.received.length;
      const request = await svc.raw('POST', '/api/verifier/offer', {
        token,
        body: {
          response_type: 'uri',
          requestId: 'pid-check',
          webhook: {
            url: `http://localhost:${target.port}/claims`,
            auth: { type: 'header', header: { name: 'X-Api-Key', value: 'shop-secret' } },
          },
        },
      });
      expect(request.status, request.text).toBe(201);
      const resolved = await resolveRequest(request.body.uri);
      const reply = await submit(resolved, { pid: [await presentSdJwt(credential, holder, resolved, ['given_name'])] });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      await expect.poll(async () => (await logged(svc, request.body.session, 'webhook delivery failed; giving up')).length).toBe(1);
      const [failure] = await logged(svc, request.body.session, 'webhook delivery failed; giving up');
      expect(failure).toMatchObject({
        attempt: 1,
        reason: expect.stringMatching(/^refused: localhost resolves to .+, a loopback address/),
      });
      expect(target.received.length).toBe(before);
    });

    it("reads this service's own status list in-process, and refuses another issuer's at a loopback address", async () => {
      const withStatus = await svc.call('PATCH', '/api/issuer/credentials/pid', { token, body: { statusManagement: true } });
      expect(withStatus.status, withStatus.text).toBe(200);
      const present = async (issued: { credential: string; holder: Parameters<typeof presentSdJwt>[1] }) => {
        const request = await svc.raw('POST', '/api/verifier/offer', { token, body: { response_type: 'uri', requestId: 'pid-check' } });
        const resolved = await resolveRequest(request.body.uri);
        const reply = await submit(resolved, { pid: [await presentSdJwt(issued.credential, issued.holder, resolved, ['given_name'])] });
        return { reply, session: await svc.running.services.sessions.get('shop', request.body.session) };
      };

      // Its own list is under PUBLIC_URL, on loopback here: read without the network, so not refused.
      const own = await present(await issueCredential(svc, token, 'pid', { given_name: 'Erika' }));
      expect(own.reply.status, JSON.stringify(own.reply.body)).toBe(200);
      expect(own.session.status).toBe('completed');

      // Another issuer on loopback, trusted by this tenant, still answering: its list is refused by the policy.
      const remote = await startService();
      try {
        const remoteToken = await setUpIssuer(remote, 'remote');
        const remoteStatus = await remote.call('PATCH', '/api/issuer/credentials/pid', {
          token: remoteToken,
          body: { statusManagement: true },
        });
        expect(remoteStatus.status, remoteStatus.text).toBe(200);
        const certificates: string[] = [];
        for (const chain of ['default-attestation', 'default-statusList']) {
          const pem = await remote.call('GET', `/api/key-chain/${chain}/certificate`, { token: remoteToken });
          certificates.push((pem.text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).at(-1) as string);
        }
        const trust = await svc.call('PUT', '/api/trust-list/issuers', {
          token,
          body: {
            entities: [
              { type: 'internal', keyChainId: 'default-attestation' },
              { type: 'internal', keyChainId: 'default-statusList', serviceType: 'revocation' },
              { type: 'external', name: 'Remote issuer', certificates },
            ],
          },
        });
        expect(trust.status, trust.text).toBe(200);
        const issued = await issueCredential(remote, remoteToken, 'pid', { given_name: 'Erika' });
        const refused = await present(issued);
        expect(refused.reply.status).toBe(400);
        expect(refused.reply.body.error).toBe('invalid_request');
        expect(refused.session.status).toBe('failed');
        expect(refused.session.errorReason).toMatch(
          /^status: the status list at http:\/\/127\.0\.0\.1:\d+\/\S+ could not be fetched \(refused: 127\.0\.0\.1 is a loopback address \(OUTBOUND_ALLOW_PRIVATE is false\)\)$/,
        );
        expect(refused.session.errorReason).toContain(`at ${remote.url}/issuers/remote/status-lists/`);
      } finally {
        await remote.stop();
      }
    });
  });
});

describe('with private destinations allowed (the default outside production)', () => {
  let svc: TestService;
  let admin: string;
  beforeAll(async () => {
    svc = await startService();
    admin = await setUpIssuer(svc, 'acme');
  });
  afterAll(() => svc.stop());

  it('still refuses the cloud metadata addresses (credential endpoints included) in every form, and accepts loopback', async () => {
    const credentialEndpoints = ['169.254.170.2', '169.254.170.23', '[fd00:ec2::23]', '100.100.100.200'];
    for (const host of [
      '169.254.169.254',
      '[fd00:ec2::254]',
      '[::ffff:169.254.169.254]',
      '[64:ff9b::a9fe:a9fe]',
      '2852039166',
      ...credentialEndpoints,
    ]) {
      const reply = await svc.call('POST', '/api/issuer/webhook-endpoints', {
        token: admin,
        body: { id: 'metadata', name: 'Metadata', url: `http://${host}/latest/meta-data/`, auth: { type: 'none' } },
      });
      expectProblem(reply, 400);
      expect(problemOf(reply).errors).toEqual([
        { field: 'body.url', message: expect.stringMatching(/the cloud metadata address \(always refused\)$/) },
      ]);
    }
    const local = await svc.call('POST', '/api/issuer/webhook-endpoints', {
      token: admin,
      body: { id: 'local', name: 'Local', url: 'http://127.0.0.1:9/hook', auth: { type: 'none' } },
    });
    expect(local.status, local.text).toBe(201);
  });

  describe('a redirect to another origin', () => {
    let first: Receiver;
    let second: Receiver;
    beforeAll(async () => {
      second = await receiver((_req, res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"claims":{"given_name":"Mallory"}}'),
      );
      first = await receiver((_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${second.port}/elsewhere` }).end());
    });
    afterAll(async () => {
      await first.close();
      await second.close();
    });

    it('is not followed from an attribute provider, so its API key never reaches the other server', async () => {
      const made = await svc.call('POST', '/api/issuer/attribute-providers', {
        token: admin,
        body: {
          id: 'registry',
          name: 'Registry',
          url: `http://127.0.0.1:${first.port}/claims`,
          auth: { type: 'header', header: { name: 'X-Api-Key', value: 'registry-secret' } },
        },
      });
      expect(made.status, made.text).toBe(201);
      const created = await offer(svc, admin, viaProvider);
      const outcome = await credentialOutcome(created.uri);
      expect(first.received.at(-1)?.headers['x-api-key']).toBe('registry-secret');
      expect(second.received.map((r) => r.headers['x-api-key'])).toEqual([]);
      expect(outcome).toContain('credential_request_denied');
      const [failure] = await logged(svc, created.session, 'attribute source failed');
      expect(failure.reason).toBe(`refused: a redirect to another origin (http://127.0.0.1:${second.port}) is not followed`);
    });

    it('is not followed from a webhook, and not retried', async () => {
      const made = await svc.call('POST', '/api/issuer/webhook-endpoints', {
        token: admin,
        body: {
          id: 'crm',
          name: 'CRM',
          url: `http://127.0.0.1:${first.port}/hook`,
          auth: { type: 'header', header: { name: 'X-Api-Key', value: 'hook-secret' } },
        },
      });
      expect(made.status, made.text).toBe(201);
      const created = await offer(svc, admin, {
        webhookEndpointId: 'crm',
        credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika' } } },
      });
      await receiveCredentials(created.uri);
      await expect.poll(async () => (await logged(svc, created.session, 'webhook delivery failed; giving up')).length).toBe(2);
      const failures = await logged(svc, created.session, 'webhook delivery failed; giving up');
      expect(failures.map((f) => [f.attempt, f.reason])).toEqual([
        [1, `refused: a redirect to another origin (http://127.0.0.1:${second.port}) is not followed`],
        [1, `refused: a redirect to another origin (http://127.0.0.1:${second.port}) is not followed`],
      ]);
      expect(second.received).toEqual([]);
    });
  });

  describe('an answer larger than the cap (1 MiB)', () => {
    let large: Receiver;
    let chunked = false;
    // Valid JSON with claims, padded past the cap: read whole, it would issue a credential.
    const answer = JSON.stringify({ claims: { given_name: 'Huge' }, padding: 'x'.repeat(1024 * 1024) });
    beforeAll(async () => {
      large = await receiver((_req, res) => {
        if (chunked) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write(answer.slice(0, 600_000));
          res.end(answer.slice(600_000));
        } else res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(answer.length) }).end(answer);
      });
      const made = await svc.call('POST', '/api/issuer/attribute-providers', {
        token: admin,
        body: { id: 'large', name: 'Large', url: `http://127.0.0.1:${large.port}/claims`, auth: { type: 'none' } },
      });
      expect(made.status, made.text).toBe(201);
    });
    afterAll(() => large.close());

    it.each([false, true])('is refused (chunked: %s)', async (asChunks) => {
      chunked = asChunks;
      const created = await offer(svc, admin, { credentialClaims: { pid: { type: 'attributeProvider', attributeProviderId: 'large' } } });
      expect(await credentialOutcome(created.uri)).toContain('credential_request_denied');
      const [failure] = await logged(svc, created.session, 'attribute source failed');
      expect(failure.reason).toBe('the answer is larger than 1048576 bytes');
    });
  });
});
