import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveKey } from '../../src/platform/crypto/derive.js';
import { problemOf } from '../support/problems.js';
import { ROOT_ID, startService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(() => svc.stop());

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

describe('POST /api/oauth2/token', () => {
  it('issues a token for credentials in a JSON body', async () => {
    const reply = await svc.call('POST', '/api/oauth2/token', {
      body: { grant_type: 'client_credentials', client_id: ROOT_ID, client_secret: svc.rootSecret },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 86400 });
    expect(reply.headers.get('cache-control')).toBe('no-store');
  });

  it('issues a token for credentials in a form body, grant_type defaulting to client_credentials', async () => {
    const reply = await svc.call('POST', '/api/oauth2/token', { form: { client_id: ROOT_ID, client_secret: svc.rootSecret } });
    expect(reply.status).toBe(200);
  });

  it('issues a token for HTTP Basic credentials with no body at all', async () => {
    const reply = await svc.call('POST', '/api/oauth2/token', { headers: { authorization: basic(ROOT_ID, svc.rootSecret) } });
    expect(reply.status).toBe(200);
  });

  it('signs the claims the specification names', async () => {
    const admin = await svc.tenant('claims', ['clients:manage', 'issuance:manage']);
    const header = decodeProtectedHeader(admin.token);
    const claims = decodeJwt(admin.token);
    expect(header.alg).toBe('HS256');
    expect(claims).toMatchObject({
      iss: 'svc-service',
      aud: 'svc-service',
      sub: 'claims-admin',
      tenant_id: 'claims',
      roles: ['clients:manage', 'issuance:manage'],
      client_gen: (await svc.db.selectFrom('clients').select('token_generation').where('id', '=', 'claims-admin').executeTakeFirstOrThrow())
        .token_generation,
    });
    expect(claims.client_gen).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect((claims.exp as number) - (claims.iat as number)).toBe(86400);
    const root = decodeJwt(await svc.rootToken());
    expect(root.tenant_id).toBeUndefined();
  });

  it('rejects a wrong secret and an unknown client alike with invalid_client', async () => {
    for (const [id, secret] of [
      [ROOT_ID, 'wrong-secret-wrong'],
      ['nobody', 'whatever-whatever'],
    ] as const) {
      const reply = await svc.call('POST', '/api/oauth2/token', { body: { client_id: id, client_secret: secret } });
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual({ error: 'invalid_client', error_description: 'unknown client or wrong secret' });
    }
    const viaBasic = await svc.call('POST', '/api/oauth2/token', { headers: { authorization: basic(ROOT_ID, 'nope-nope-nope') } });
    expect(viaBasic.status).toBe(401);
    expect(viaBasic.headers.get('www-authenticate')).toBe('Basic realm="svc"');
  });

  it('rejects other grant types and missing credentials', async () => {
    const grant = await svc.raw('POST', '/api/oauth2/token', {
      body: { grant_type: 'password', client_id: ROOT_ID, client_secret: svc.rootSecret },
    });
    expect(grant.status).toBe(400);
    expect(grant.body.error).toBe('unsupported_grant_type');
    const missing = await svc.call('POST', '/api/oauth2/token', { body: { client_id: ROOT_ID } });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: 'invalid_request', error_description: 'missing client_secret (or HTTP Basic credentials)' });
  });
});

describe('failed token attempts are limited per address', () => {
  let limited: TestService;
  beforeAll(async () => {
    limited = await startService({ TOKEN_FAILED_ATTEMPTS_LIMIT: '3', TOKEN_FAILED_ATTEMPTS_WINDOW: '60' });
  });
  afterAll(() => limited.stop());

  it('answers 429 with Retry-After once the limit is reached, even for the right secret', async () => {
    for (let i = 0; i < 3; i++) {
      expect(
        (await limited.call('POST', '/api/oauth2/token', { body: { client_id: ROOT_ID, client_secret: `wrong-${i}-padding` } })).status,
      ).toBe(401);
    }
    const blocked = await limited.call('POST', '/api/oauth2/token', { body: { client_id: ROOT_ID, client_secret: limited.rootSecret } });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(blocked.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    const stored = await limited.db.selectFrom('request_windows').selectAll().where('key', 'like', 'auth-failures:%').execute();
    expect(stored).toEqual([expect.objectContaining({ count: 3 })]);
  });

  it('starts a new window once the old one has passed', async () => {
    await limited.db
      .updateTable('request_windows')
      .where('key', 'like', 'auth-failures:%')
      .set({ window_start: new Date(Date.now() - 61_000).toISOString() })
      .execute();
    const reply = await limited.call('POST', '/api/oauth2/token', { body: { client_id: ROOT_ID, client_secret: limited.rootSecret } });
    expect(reply.status).toBe(200);
  });
});

describe('bearer tokens on the management API', () => {
  const rootGeneration = async () =>
    (await svc.db.selectFrom('clients').select('token_generation').where('id', '=', ROOT_ID).executeTakeFirstOrThrow()).token_generation;
  /** A token as the service makes them for the root client, unless `claims` or `options` say otherwise. */
  const forge = async (claims: Record<string, unknown>, options: { key?: Uint8Array; exp?: number; iss?: string; aud?: string } = {}) =>
    new SignJWT({ client_gen: await rootGeneration(), ...claims })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(options.iss ?? 'svc-service')
      .setAudience(options.aud ?? 'svc-service')
      .setSubject(ROOT_ID)
      .setIssuedAt()
      .setExpirationTime(options.exp ?? Math.floor(Date.now() / 1000) + 300)
      .sign(options.key ?? deriveKey(svc.running.config.MASTER_SECRET, 'management-token'));

  async function expect401(token: string | undefined, error?: string) {
    const reply = await svc.call('GET', '/api/tenant', token === undefined ? {} : { headers: { authorization: token } });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('content-type')).toContain('application/problem+json');
    const challenge = reply.headers.get('www-authenticate');
    expect(challenge).toContain('Bearer realm="svc"');
    if (error) expect(challenge).toContain(`error="${error}"`);
    return reply;
  }

  it('accepts a token it signed', async () => {
    expect((await svc.call('GET', '/api/tenant', { headers: { authorization: `Bearer ${await forge({})}` } })).status).toBe(200);
  });

  it('requires a token', async () => {
    await expect401(undefined);
    await expect401('Token abc', 'invalid_request');
  });

  it('rejects a wrong signature', async () => {
    await expect401(`Bearer ${await forge({}, { key: new Uint8Array(32).fill(7) })}`, 'invalid_token');
  });

  it('rejects a wrong audience', async () => {
    const reply = await expect401(`Bearer ${await forge({}, { aud: 'another-service' })}`, 'invalid_token');
    expect(problemOf(reply).detail).toContain('aud');
  });

  it('rejects a wrong issuer', async () => {
    const reply = await expect401(`Bearer ${await forge({}, { iss: 'someone-else' })}`, 'invalid_token');
    expect(problemOf(reply).detail).toContain('iss');
  });

  it('rejects an expired token beyond the clock-skew allowance, accepts one within it', async () => {
    const now = Math.floor(Date.now() / 1000);
    const reply = await expect401(`Bearer ${await forge({}, { exp: now - 120 })}`, 'invalid_token');
    expect(problemOf(reply).detail).toBe('the access token has expired');
    const skewed = await svc.call('GET', '/api/tenant', { headers: { authorization: `Bearer ${await forge({}, { exp: now - 5 })}` } });
    expect(skewed.status).toBe(200);
  });

  it('rejects a token not bound to a generation of its client, as tokens of earlier versions were', async () => {
    for (const client_gen of [undefined, '', 42]) {
      const reply = await expect401(`Bearer ${await forge({ client_gen })}`, 'invalid_token');
      expect(problemOf(reply).detail).toBe('the access token has no client_gen claim; get a new token');
    }
    const stale = await expect401(`Bearer ${await forge({ client_gen: 'a-generation-the-client-never-had' })}`, 'invalid_token');
    expect(problemOf(stale).detail).toBe('the access token was issued before its client was re-created or its secret replaced');
  });

  it('rejects a garbage token', async () => {
    await expect401('Bearer not.a.jwt', 'invalid_token');
  });

  it('rejects the token of a deleted client', async () => {
    const admin = await svc.tenant('deleted-client');
    const token = await svc.client(admin.token, 'short-lived', ['issuance:manage']);
    expect((await svc.call('GET', '/api/version', { token })).status).toBe(200);
    expect((await svc.call('DELETE', '/api/client/short-lived', { token: admin.token })).status).toBe(204);
    const reply = await expect401(`Bearer ${token}`, 'invalid_token');
    expect(problemOf(reply).detail).toBe('the client of this access token no longer exists');
  });
});
