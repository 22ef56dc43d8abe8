// Rate limits on the wallet-facing endpoints (docs/operations.md "Rate limits"): counted per address with the
// tenant and per tenant, shared through the database or Redis, lowered by a tenant in its settings.
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Reply } from '../support/http.js';
import { expectFieldErrors, expectProblem } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

const REDIS_URL = 'redis://127.0.0.1:6379';
const from = (address: string) => ({ 'x-forwarded-for': address });

/** Sends `count` token requests at once (each a bad grant: admitted ones answer 400, refused ones 429). */
function tokenBurst(svc: TestService, tenant: string, count: number, headers: (i: number) => Record<string, string> = () => ({})) {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      svc.raw('POST', `/issuers/${tenant}/token`, { form: { grant_type: 'urn:example:none' }, headers: headers(i) }),
    ),
  );
}

const refused = (replies: Reply<unknown>[]) => replies.filter((reply) => reply.status === 429);
const admitted = (replies: Reply<unknown>[]) => replies.filter((reply) => reply.status !== 429);

/** A 429 as the token endpoint answers it: OAuth error JSON, Retry-After and the RateLimit fields. */
function expectRefusal(reply: Reply<any>, policy: string) {
  expect(reply.status).toBe(429);
  expect(reply.body).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('too many token requests') });
  const retryAfter = Number(reply.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(3600);
  expect(reply.headers.get('ratelimit-policy')).toBe(policy);
  expect(reply.headers.get('ratelimit')).toBe(`"token";r=0;t=${retryAfter}`);
}

async function deleteKeys(pattern: string) {
  const redis = createClient({ url: REDIS_URL });
  await redis.connect();
  try {
    const keys = await redis.keys(pattern);
    if (keys.length) await redis.del(keys);
  } finally {
    await redis.close();
  }
}

const STORES = [
  { store: 'the database', env: () => ({}) },
  { store: 'Redis', env: () => ({ REDIS_URL, REDIS_KEY_PREFIX: `svc-test:${randomBytes(6).toString('hex')}:` }) },
];

describe.each(STORES)('rate limits shared through $store', ({ env }) => {
  let svc: TestService;
  let settings: Record<string, string>;
  beforeAll(async () => {
    settings = env();
    svc = await startService({
      ...settings,
      TRUST_PROXY: 'true',
      RATE_LIMIT_TOKEN: '100/3600',
      RATE_LIMIT_TOKEN_PER_TENANT: '150/3600',
    });
    await svc.tenant('a');
    await svc.tenant('b');
  });
  afterAll(async () => {
    await svc.stop();
    // Other users share this Redis: only this test's keys go (never FLUSHALL).
    if (settings.REDIS_URL) await deleteKeys(`${settings.REDIS_KEY_PREFIX}*`);
  });

  it('a burst of 300 from one address at one tenant: exactly 100 pass, the rest are 429; other tenants and addresses are unaffected', async () => {
    const replies = await tokenBurst(svc, 'a', 300, () => from('203.0.113.1'));
    expect(admitted(replies)).toHaveLength(100);
    for (const reply of admitted(replies)) {
      expect(reply.status).toBe(400);
      expect(reply.headers.get('ratelimit-policy')).toBe('"token";q=100;w=3600');
      expect(reply.headers.get('ratelimit')).toMatch(/^"token";r=\d+;t=\d+$/);
    }
    for (const reply of refused(replies)) expectRefusal(reply, '"token";q=100;w=3600');
    const [otherTenant] = await tokenBurst(svc, 'b', 1, () => from('203.0.113.1'));
    expect(otherTenant?.status).toBe(400);
    const [otherAddress] = await tokenBurst(svc, 'a', 1, () => from('203.0.113.2'));
    expect(otherAddress?.status).toBe(400);
    expect(otherAddress?.headers.get('ratelimit')).toMatch(/^"token";r=\d+;t=\d+$/);
  });

  it('the tenant takes 150 from all addresses together', async () => {
    // 101 are counted at tenant a already; 49 more pass, whichever addresses send them.
    const replies = await tokenBurst(svc, 'a', 90, (i) => from(`198.51.100.${i}`));
    expect(admitted(replies)).toHaveLength(49);
    const [other] = await tokenBurst(svc, 'b', 1, () => from('198.51.100.1'));
    expect(other?.status).toBe(400);
  });

  it('the counts reach the shared store', async () => {
    if (settings.REDIS_URL) {
      const redis = createClient({ url: REDIS_URL });
      await redis.connect();
      try {
        const prefix = settings.REDIS_KEY_PREFIX ?? '';
        await vi.waitFor(async () => {
          const keys = await redis.keys(`${prefix}token:t:*`);
          const counts = await Promise.all(keys.map((key) => redis.get(key)));
          expect(counts.map(Number).sort((x, y) => x - y)).toEqual([2, 150]);
          for (const key of keys) expect(await redis.pTTL(key)).toBeGreaterThan(0);
        });
      } finally {
        await redis.close();
      }
      return;
    }
    await vi.waitFor(async () => {
      const rows = await svc.db.selectFrom('request_windows').select(['key', 'count']).where('key', 'like', 'token:t:%').execute();
      expect(rows.map((row) => Number(row.count)).sort((x, y) => x - y)).toEqual([2, 150]);
    });
  });
});

describe('addresses', () => {
  it('without TRUST_PROXY, X-Forwarded-For is ignored: a spoofed address gets no quota of its own', async () => {
    const svc = await startService({ RATE_LIMIT_TOKEN: '20/3600' });
    try {
      await svc.tenant('a');
      const replies = await tokenBurst(svc, 'a', 40, (i) => from(`192.0.2.${i}`));
      expect(admitted(replies)).toHaveLength(20);
    } finally {
      await svc.stop();
    }
  });

  it('RATE_LIMITS_ENABLED=false switches them off (no 429, no RateLimit fields)', async () => {
    const svc = await startService({ RATE_LIMIT_TOKEN: '5/3600', RATE_LIMITS_ENABLED: 'false' });
    try {
      await svc.tenant('a');
      const replies = await tokenBurst(svc, 'a', 20);
      expect(admitted(replies)).toHaveLength(20);
      expect(replies[0]?.headers.get('ratelimit')).toBeNull();
    } finally {
      await svc.stop();
    }
  });
});

describe('endpoints that name no tenant are limited per address', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ RATE_LIMIT_PRESENTATION: '3/3600', RATE_LIMIT_MANAGEMENT_TOKEN: '4/3600' });
  });
  afterAll(() => svc.stop());

  it("the verifier's request object and response endpoints share one count per address (OAuth error JSON beyond)", async () => {
    const replies = [
      await svc.raw('GET', '/presentations/unknown-handle/request'),
      await svc.raw('POST', '/presentations/other-handle/request', { form: {} }),
      await svc.raw('POST', '/presentations/unknown-handle/response', { form: {} }),
      await svc.raw('GET', '/presentations/unknown-handle/request'),
    ];
    expect(replies.slice(0, 3).map((reply) => reply.status)).not.toContain(429);
    const last = replies[3] as Reply<any>;
    expect(last.status).toBe(429);
    expect(last.body).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('too many presentation requests') });
    expect(last.headers.get('ratelimit-policy')).toBe('"presentation";q=3;w=3600');
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('the management token endpoint: right or wrong credentials, every request counts', async () => {
    // The service's own start asked for no token; the test's tenant helpers are not used here.
    const replies = [];
    for (let i = 0; i < 5; i++) {
      replies.push(await svc.raw('POST', '/api/oauth2/token', { body: { client_id: 'root', client_secret: svc.rootSecret } }));
    }
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 429]);
    expect(replies[4]?.body).toEqual({
      error: 'invalid_request',
      error_description: expect.stringContaining('too many management token requests'),
    });
    expect(replies[0]?.headers.get('ratelimit')).toMatch(/^"management_token";r=3;t=\d+$/);
  });
});

describe('a tenant lowers its limits in its issuer settings', () => {
  let svc: TestService;
  let admin: string;
  beforeAll(async () => {
    svc = await startService({ TRUST_PROXY: 'true', RATE_LIMIT_TOKEN: '100/3600' });
    admin = (await svc.tenant('a')).token;
    await svc.tenant('b');
  });
  afterAll(() => svc.stop());

  const put = (rateLimits: unknown, token = admin) => svc.raw('PUT', '/api/issuer/config', { token, body: { rateLimits } });

  it('lowering works at once, for that tenant only', async () => {
    const saved = await put({ token: { perAddress: 10 } });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body.rateLimits).toEqual({ token: { perAddress: 10 } });
    const replies = await tokenBurst(svc, 'a', 30, () => from('203.0.113.9'));
    expect(admitted(replies)).toHaveLength(10);
    expect(refused(replies)[0]?.headers.get('ratelimit-policy')).toBe('"token";q=10;w=3600');
    const other = await tokenBurst(svc, 'b', 30, () => from('203.0.113.9'));
    expect(admitted(other)).toHaveLength(30);
  });

  it('above the operator ceiling is a 400 naming the field', async () => {
    const reply = await put({ token: { perAddress: 101 }, nonce: { perTenant: 1_000_000 } });
    expectFieldErrors(reply, ['body.rateLimits.token.perAddress', 'body.rateLimits.nonce.perTenant']);
    expect(reply.text).toContain('RATE_LIMIT_TOKEN');
    const unknownClass = await put({ presentation: { perAddress: 1 } });
    expectProblem(unknownClass, 400);
  });

  it('a client without issuance:manage may not change them (403)', async () => {
    const offers = await svc.client(admin, 'offers-only', ['issuance:offer']);
    expectProblem(await put({ token: { perAddress: 1 } }, offers), 403);
  });
});

describe('two instances on one PostgreSQL database', () => {
  it.runIf(process.env.DB_TYPE === 'postgres')('hold the limit within the documented bound (limit + instances x a tenth)', async () => {
    const first = await startService({ TRUST_PROXY: 'true', RATE_LIMIT_TOKEN: '100/3600' });
    const second = await startService({ TRUST_PROXY: 'true', RATE_LIMIT_TOKEN: '100/3600' }, { besides: first });
    try {
      await first.tenant('a');
      const replies = (
        await Promise.all([tokenBurst(first, 'a', 150, () => from('203.0.113.5')), tokenBurst(second, 'a', 150, () => from('203.0.113.5'))])
      ).flat();
      const passed = admitted(replies).length;
      expect(passed).toBeGreaterThanOrEqual(100);
      expect(passed).toBeLessThanOrEqual(100 + 2 * 10);
      // Once both have synced, neither admits more.
      await vi.waitFor(async () => {
        const later = [
          ...(await tokenBurst(first, 'a', 5, () => from('203.0.113.5'))),
          ...(await tokenBurst(second, 'a', 5, () => from('203.0.113.5'))),
        ];
        expect(admitted(later)).toHaveLength(0);
      });
    } finally {
      await second.stop();
      await first.stop();
    }
  });
});
