import { createServer, type Server } from 'node:http';
import type { JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PID, PID_ADULT_QUERY as QUERY } from '../support/fixtures.js';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import { startService, type TestService } from '../support/service.js';
import { holderKey, issueCredential } from '../support/wallet.js';

let svc: TestService;
let admin: string;
let credential: string;
let holder: JWK;

const issue = (tenantToken: string, claims: Record<string, unknown>) => issueCredential(svc, tenantToken, 'pid', claims);

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  expect((await svc.call('POST', '/api/issuer/credentials', { token: admin, body: PID })).status).toBe(201);
  const trust = await svc.call('POST', '/api/trust-list', {
    token: admin,
    body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
  });
  expect(trust.status, trust.text).toBe(201);
  const config = await svc.call('POST', '/api/verifier/config', {
    token: admin,
    body: { id: 'adult', dcql_query: QUERY, redirectUri: 'https://shop.example.com/done/{sessionId}' },
  });
  expect(config.status, config.text).toBe(201);
  ({ credential, holder } = await issue(admin, { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true }));
});
afterAll(() => svc.stop());

const request = async (body: Record<string, unknown> = {}) => {
  const reply = await svc.call('POST', '/api/verifier/offer', {
    token: admin,
    body: { response_type: 'uri', requestId: 'adult', ...body },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as { uri: string; session: string; requestUri: string };
};
const session = (id: string) => svc.running.services.sessions.get('acme', id);

describe('SD-JWT VC presentations', () => {
  for (const [clientIdPrefix, responseMode, requestUriMethod] of [
    ['x509_hash', 'direct_post.jwt', 'get'],
    ['x509_san_dns', 'direct_post', 'post'],
  ] as const) {
    it(`verifies a presentation end to end (${clientIdPrefix}, ${responseMode}, request_uri by ${requestUriMethod})`, async () => {
      const offer = await request({ clientIdPrefix, responseMode, requestUriMethod });
      expect(offer.uri).toMatch(/^openid4vp:\/\/\?client_id=/);
      const resolved = await resolveRequest(offer.uri);
      expect(resolved.clientId.startsWith(`${clientIdPrefix}:`)).toBe(true);
      expect(resolved.responseMode).toBe(responseMode);
      expect((await session(offer.session)).status).toBe('fetched');
      const presentation = await presentSdJwt(credential, holder, resolved, ['given_name', 'age_over_18']);
      const reply = await submit(resolved, { pid: [presentation] });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body.redirect_uri).toMatch(new RegExp(`^https://shop.example.com/done/${offer.session}\\?response_code=`));
      const done = await session(offer.session);
      expect(done).toMatchObject({ status: 'completed', consumed: true });
      expect(done.private?.credentials).toEqual([
        expect.objectContaining({
          queryId: 'pid',
          format: 'dc+sd-jwt',
          vct: 'urn:eudi:pid:1',
          claims: { given_name: 'Erika', age_over_18: true },
        }),
      ]);
      const raw = await svc.db.selectFrom('sessions').select('private_data').where('id', '=', offer.session).executeTakeFirstOrThrow();
      expect(raw.private_data).not.toContain('Erika');
    });
  }
});

describe('rejected presentations fail the session closed', () => {
  async function attempt(
    present: (resolved: Awaited<ReturnType<typeof resolveRequest>>) => Promise<Record<string, string[]>>,
    offerBody = {},
  ) {
    const offer = await request(offerBody);
    const resolved = await resolveRequest(offer.uri);
    const reply = await submit(resolved, await present(resolved));
    const state = await session(offer.session);
    return { reply, state };
  }
  const expectRejected = (result: Awaited<ReturnType<typeof attempt>>, reason: RegExp) => {
    expect(result.reply.status).toBe(400);
    expect(result.reply.body.error).toBe('invalid_request');
    expect(result.state.status).toBe('failed');
    expect(result.state.errorReason).toMatch(reason);
    expect(result.state.private?.credentials).toBeUndefined();
  };

  it('a tampered issuer signature', async () => {
    const [jwt, ...rest] = credential.split('~');
    const [h, p, s] = (jwt as string).split('.');
    const forged = [h, p, `${(s as string).slice(0, -4)}AAAA`].join('.');
    expectRejected(
      await attempt(async (r) => ({ pid: [await presentSdJwt([forged, ...rest].join('~'), holder, r, ['given_name', 'age_over_18'])] })),
      /credential/,
    );
  });

  it('a credential past its exp', async () => {
    const short = { ...PID, id: 'pid-short', lifeTime: 1 };
    expect((await svc.call('POST', '/api/issuer/credentials', { token: admin, body: short })).status).toBe(201);
    const expiring = await issueCredential(svc, admin, 'pid-short', { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true });
    svc.clock.advance(2100);
    expectRejected(
      await attempt(async (r) => ({ pid: [await presentSdJwt(expiring.credential, expiring.holder, r, ['given_name', 'age_over_18'])] })),
      /credential|expired|exp/,
    );
  });

  it('an issuer no trust list of the tenant names', async () => {
    const other = (await svc.tenant('globex')).token;
    expect((await svc.call('POST', '/api/issuer/credentials', { token: other, body: PID })).status).toBe(201);
    const foreign = await issue(other, { given_name: 'Eve', family_name: 'Mallory', age_over_18: true });
    expectRejected(
      await attempt(async (r) => ({ pid: [await presentSdJwt(foreign.credential, foreign.holder, r, ['given_name', 'age_over_18'])] })),
      /untrusted issuer/,
    );
  });

  it('an issuer the tenant lists only as a wallet provider (walletIssuance): wallet providers are not trusted for credentials', async () => {
    const other = (await svc.tenant('initech')).token;
    expect((await svc.call('POST', '/api/issuer/credentials', { token: other, body: PID })).status).toBe(201);
    const listed = await issue(other, { given_name: 'Eve', family_name: 'Mallory', age_over_18: true });
    const chain = await svc.call('GET', '/api/key-chain/default-attestation/certificate', { token: other });
    expect(chain.status, chain.text).toBe(200);
    const root = (chain.text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).at(-1) as string;
    const trust = await svc.call('POST', '/api/trust-list', {
      token: admin,
      body: {
        id: 'wallets',
        entities: [{ type: 'external', name: 'Initech Wallets', certificates: [root], serviceType: 'walletIssuance' }],
      },
    });
    expect(trust.status, trust.text).toBe(201);
    try {
      expectRejected(
        await attempt(async (r) => ({ pid: [await presentSdJwt(listed.credential, listed.holder, r, ['given_name', 'age_over_18'])] })),
        /untrusted issuer/,
      );
    } finally {
      expect((await svc.call('DELETE', '/api/trust-list/wallets', { token: admin })).status).toBe(204);
    }
  });

  it('a KB-JWT signed by another key', async () => {
    const stranger = (await holderKey()).privateJwk;
    expectRejected(
      await attempt(async (r) => ({
        pid: [await presentSdJwt(credential, holder, r, ['given_name', 'age_over_18'], { signWith: stranger })],
      })),
      /credential|key binding/,
    );
  });

  it('a wrong nonce', async () => {
    expectRejected(
      await attempt(async (r) => ({
        pid: [await presentSdJwt(credential, holder, r, ['given_name', 'age_over_18'], { nonce: 'guessed' })],
      })),
      /nonce/i,
    );
  });

  it('a wrong audience', async () => {
    expectRejected(
      await attempt(async (r) => ({
        pid: [await presentSdJwt(credential, holder, r, ['given_name', 'age_over_18'], { aud: 'x509_hash:someone-else' })],
      })),
      /aud/,
    );
  });

  it('a KB-JWT issued in the future, and one too old', async () => {
    const now = Math.floor(Date.now() / 1000);
    expectRejected(
      await attempt(async (r) => ({ pid: [await presentSdJwt(credential, holder, r, ['given_name', 'age_over_18'], { iat: now + 600 })] })),
      /iat/,
    );
    expectRejected(
      await attempt(async (r) => ({
        pid: [await presentSdJwt(credential, holder, r, ['given_name', 'age_over_18'], { iat: now - 3600 })],
      })),
      /iat/,
    );
  });

  it('a wrong sd_hash', async () => {
    expectRejected(
      await attempt(async (r) => ({ pid: [await presentSdJwt(credential, holder, r, ['given_name', 'age_over_18'], { sdHash: 'AAAA' })] })),
      /sd_hash|credential/,
    );
  });

  it('a tampered disclosure', async () => {
    const parts = credential.split('~');
    const disclosure = JSON.parse(Buffer.from(parts[1] as string, 'base64url').toString()) as unknown[];
    disclosure[2] = 'Mallory';
    parts[1] = Buffer.from(JSON.stringify(disclosure)).toString('base64url');
    expectRejected(await attempt(async (r) => ({ pid: [await presentSdJwt(parts.join('~'), holder, r)] })), /credential/);
  });

  it('claims missing for the DCQL query', async () => {
    expectRejected(await attempt(async (r) => ({ pid: [await presentSdJwt(credential, holder, r, ['given_name'])] })), /DCQL/);
  });

  it('transaction data hashes that do not match', async () => {
    const transaction = [{ type: 'payment', credential_ids: ['pid'], amount: '42.00 EUR' }];
    expectRejected(
      await attempt(
        async (r) => ({
          pid: [await presentSdJwt(credential, holder, r, ['given_name', 'age_over_18'], { transactionDataHashes: ['bm90IHRoZSBoYXNo'] })],
        }),
        { transaction_data: transaction },
      ),
      /transaction data/,
    );
    const accepted = await attempt(async (r) => ({ pid: [await presentSdJwt(credential, holder, r, ['given_name', 'age_over_18'])] }), {
      transaction_data: transaction,
    });
    expect(accepted.reply.status).toBe(200);
  });
});

describe('one use only', () => {
  it('serves the request object once', async () => {
    const offer = await request();
    expect((await fetch(offer.requestUri)).status).toBe(200);
    const again = await fetch(offer.requestUri);
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: string }).error).toBe('invalid_request');
  });

  it('refuses a replayed response', async () => {
    const offer = await request();
    const resolved = await resolveRequest(offer.uri);
    const vpToken = { pid: [await presentSdJwt(credential, holder, resolved, ['given_name', 'age_over_18'])] };
    expect((await submit(resolved, vpToken)).status).toBe(200);
    const replay = await submit(resolved, vpToken);
    expect(replay.status).toBe(400);
    expect((await session(offer.session)).status).toBe('completed');
  });

  it('refuses a response after the session expired', async () => {
    const offer = await request();
    const resolved = await resolveRequest(offer.uri);
    await svc.db
      .updateTable('sessions')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', offer.session)
      .execute();
    const reply = await submit(resolved, { pid: [await presentSdJwt(credential, holder, resolved, ['given_name', 'age_over_18'])] });
    expect(reply.status).toBe(400);
    expect(reply.body.error_description).toContain('expired');
  });
});

describe('presentation offers', () => {
  it('refuses a configuration outside the client allow-list, and unknown configurations', async () => {
    const created = await svc.call('POST', '/api/client', {
      token: admin,
      body: { clientId: 'acme-checkout', roles: ['presentation:request'], allowedPresentationConfigs: ['other'] },
    });
    const limited = await svc.token('acme-checkout', created.body.secret);
    expect(
      (await svc.call('POST', '/api/verifier/offer', { token: limited, body: { response_type: 'uri', requestId: 'adult' } })).status,
    ).toBe(403);
    const unknown = await svc.raw('POST', '/api/verifier/offer', { token: admin, body: { response_type: 'uri', requestId: 'nope' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].field).toBe('body.requestId');
    const dcApi = await svc.raw('POST', '/api/verifier/offer', {
      token: admin,
      body: { response_type: 'iso-18013-7', requestId: 'adult' },
    });
    // ISO 18013-7 Annex C (test/verification/annex-c.test.ts) is bound to the page's origin.
    expect(dcApi.body.errors[0].field).toBe('body.expected_origin');
  });

  it('sends the verified claims to the configured webhook', async () => {
    const received: any[] = [];
    const receiver: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        received.push(JSON.parse(body));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as { port: number };
    await svc.call('POST', '/api/issuer/webhook-endpoints', {
      token: admin,
      body: { id: 'shop', name: 'Shop', url: `http://127.0.0.1:${port}/claims`, auth: { type: 'none' } },
    });
    const config = await svc.call('POST', '/api/verifier/config', {
      token: admin,
      body: { id: 'adult-hook', dcql_query: QUERY, webhookEndpointId: 'shop' },
    });
    expect(config.status, config.text).toBe(201);
    const offer = await svc.raw('POST', '/api/verifier/offer', { token: admin, body: { response_type: 'uri', requestId: 'adult-hook' } });
    const resolved = await resolveRequest(offer.body.uri);
    expect(
      (await submit(resolved, { pid: [await presentSdJwt(credential, holder, resolved, ['given_name', 'age_over_18'])] })).status,
    ).toBe(200);
    await expect.poll(() => received.length, { timeout: 5000 }).toBe(1);
    expect(received[0]).toMatchObject({
      type: 'presentation.completed',
      sessionId: offer.body.session,
      credentials: [{ claims: { given_name: 'Erika', age_over_18: true } }],
    });
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });
});

describe('a webhook given with the request', () => {
  it('receives the claims instead of the configured webhook, and is never shown in the session', async () => {
    const received: { body: any; auth: unknown }[] = [];
    const receiver: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        received.push({ body: JSON.parse(body), auth: req.headers['x-shop-key'] });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as { port: number };
    const offer = await svc.raw('POST', '/api/verifier/offer', {
      token: admin,
      body: {
        response_type: 'uri',
        requestId: 'adult',
        webhook: {
          url: `http://127.0.0.1:${port}/per-request`,
          auth: { type: 'header', header: { name: 'X-Shop-Key', value: 'per-request-secret' } },
        },
      },
    });
    expect(offer.status, offer.text).toBe(201);
    const resolved = await resolveRequest(offer.body.uri);
    const answer = await submit(resolved, { pid: [await presentSdJwt(credential, holder, resolved, ['given_name', 'age_over_18'])] });
    expect(answer.status).toBe(200);
    // 'adult' redirects: its webhook goes out when the response code releases the result.
    const response_code = new URL(answer.body.redirect_uri).searchParams.get('response_code');
    const released = await svc.raw('POST', '/api/verifier/result', { token: admin, body: { session: offer.body.session, response_code } });
    expect(released.status, released.text).toBe(200);
    await expect.poll(() => received.length, { timeout: 5000 }).toBe(1);
    expect(received[0]).toMatchObject({
      auth: 'per-request-secret',
      body: { type: 'presentation.completed', sessionId: offer.body.session, requestId: 'adult' },
    });
    const shown = await svc.call('GET', `/api/session/${offer.body.session}`, { token: admin });
    expect(shown.text).not.toContain('per-request-secret');
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });
});
