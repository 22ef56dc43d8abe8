// Same-device presentations (OpenID4VP 1.0 sections 8.2 and 13.3, HAIP 1.0 section 5.1): the wallet
// is sent back to the request's redirectUri with a fresh response_code, and the result of such a
// session is released only with that code, once, through POST /api/verifier/result; GET
// /api/session never shows its credentials, and its webhook waits for the release. So a response
// that a wallet on another user's device posts to a request an attacker relayed cannot reach the
// attacker's session: only the browser the wallet redirects holds the code.
import { createServer, type Server } from 'node:http';
import type { JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PID, PID_ADULT_QUERY } from '../support/fixtures.js';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import { problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

let svc: TestService;
let admin: string;
let pid: { credential: string; holder: JWK };
let hooks: Server;
let hookUrl: string;
const delivered: { sessionId: string; credentials: { claims: Record<string, unknown> }[] }[] = [];
const CLAIMS = { given_name: 'Erika', age_over_18: true };

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  expect((await svc.call('POST', '/api/issuer/credentials', { token: admin, body: PID })).status).toBe(201);
  const trust = await svc.call('POST', '/api/trust-list', {
    token: admin,
    body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
  });
  expect(trust.status, trust.text).toBe(201);
  for (const body of [
    { id: 'same-device', dcql_query: PID_ADULT_QUERY, redirectUri: 'https://shop.example.com/done/{sessionId}' },
    { id: 'cross-device', dcql_query: PID_ADULT_QUERY },
  ]) {
    const config = await svc.call('POST', '/api/verifier/config', { token: admin, body });
    expect(config.status, config.text).toBe(201);
  }
  pid = await issueCredential(svc, admin, 'pid', { ...CLAIMS, family_name: 'Mustermann' });
  hooks = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      delivered.push(JSON.parse(body));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(hooks.address() as { port: number }).port}/presentations`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => (hooks ? hooks.close(() => resolve()) : resolve()));
  await svc?.stop();
});

/** A request of `requestId` answered by the wallet: the session id and the wallet's reply. */
async function answered(requestId: string, token = admin) {
  const offer = await svc.call('POST', '/api/verifier/offer', {
    token,
    body: { response_type: 'uri', requestId, webhook: { url: hookUrl } },
  });
  expect(offer.status, offer.text).toBe(201);
  const resolved = await resolveRequest(offer.body.uri as string);
  const reply = await submit(resolved, { pid: [await presentSdJwt(pid.credential, pid.holder, resolved, Object.keys(CLAIMS))] });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return { session: offer.body.session as string, reply };
}
const codeOf = (reply: { body: Record<string, any> }) => new URL(reply.body.redirect_uri).searchParams.get('response_code') as string;
const release = (session: string, response_code: string, token = admin) =>
  svc.raw('POST', '/api/verifier/result', { token, body: { session, response_code } });
const hooked = (session: string) => delivered.filter((d) => d.sessionId === session);

describe('the redirect back carries a response_code', () => {
  it('fresh and unguessable for each session (at least 128 bits), in the redirectUri of the request', async () => {
    const codes = await Promise.all([answered('same-device'), answered('same-device')]);
    for (const { session, reply } of codes) {
      expect(reply.body.redirect_uri).toMatch(new RegExp(`^https://shop.example.com/done/${session}\\?response_code=[A-Za-z0-9_-]{32}$`));
    }
    expect(codeOf(codes[0]?.reply as never)).not.toBe(codeOf(codes[1]?.reply as never));
  });

  it('is kept only hashed: neither the session nor its handles hold it', async () => {
    const { session, reply } = await answered('same-device');
    const code = codeOf(reply);
    const row = await svc.db
      .selectFrom('sessions')
      .select(['public_data', 'private_data'])
      .where('id', '=', session)
      .executeTakeFirstOrThrow();
    expect(`${row.public_data}${row.private_data}`).not.toContain(code);
    const handles = await svc.db.selectFrom('session_handles').select(['hash', 'purpose']).where('session_id', '=', session).execute();
    expect(handles.map((h) => h.hash)).not.toContain(code);
    expect(handles.map((h) => h.purpose)).toContain('presentation-response-code');
  });
});

describe('the result of a session answered through a redirect', () => {
  it('is not in GET /api/session, nor in the list, before or after its release', async () => {
    const { session, reply } = await answered('same-device');
    const read = async () => {
      const one = await svc.raw('GET', `/api/session/${session}`, { token: admin });
      expect(one.status, one.text).toBe(200);
      const list = await svc.raw('GET', '/api/session?type=presentation&pageSize=100', { token: admin });
      return [one.body, list.body.items.find((s: { id: string }) => s.id === session)];
    };
    for (const view of await read()) {
      expect(view).toMatchObject({ status: 'completed', consumed: true, responseCodeRequired: true });
      expect(view).not.toHaveProperty('credentials');
    }
    expect((await release(session, codeOf(reply))).status).toBe(200);
    for (const view of await read()) {
      expect(view).toMatchObject({ responseCodeRequired: true, resultReleasedAt: expect.any(String) });
      expect(view).not.toHaveProperty('credentials');
    }
  });

  it('is released once with its response_code, and its webhook goes out then, not before', async () => {
    const { session, reply } = await answered('same-device');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(hooked(session)).toEqual([]);

    const released = await release(session, codeOf(reply));
    expect(released.status, released.text).toBe(200);
    expect(released.body).toMatchObject({
      id: session,
      status: 'completed',
      responseCodeRequired: true,
      resultReleasedAt: expect.any(String),
    });
    expect(released.body.credentials).toEqual([expect.objectContaining({ queryId: 'pid', claims: CLAIMS })]);
    await expect.poll(() => hooked(session).length, { timeout: 5000 }).toBe(1);
    expect(hooked(session)[0]?.credentials).toEqual([expect.objectContaining({ claims: CLAIMS })]);

    const again = await release(session, codeOf(reply));
    expect(again.status).toBe(400);
    expect(problemOf(again).errors?.map((e) => e.field)).toEqual(['body.response_code']);
    const logs = await svc.raw('GET', `/api/session/${session}/logs`, { token: admin });
    expect(logs.body.map((l: { message: string }) => l.message)).toContain('result released with the response code');
  });

  it('is released to exactly one of several concurrent callers with the code', async () => {
    const { session, reply } = await answered('same-device');
    const replies = await Promise.all(Array.from({ length: 8 }, () => release(session, codeOf(reply))));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400, 400, 400]);
  });

  it("is not released with a wrong code, nor with another session's code, which stays good for its own", async () => {
    const [first, second] = await Promise.all([answered('same-device'), answered('same-device')]);
    for (const code of ['guessed', codeOf(second?.reply as never)]) {
      const refused = await release(first?.session as string, code);
      expect(refused.status, refused.text).toBe(400);
      expect(problemOf(refused).errors).toEqual([
        { field: 'body.response_code', message: 'is not the response code of this session, or was used already, or expired' },
      ]);
    }
    expect((await release(second?.session as string, codeOf(second?.reply as never))).status).toBe(200);
    expect((await release(first?.session as string, codeOf(first?.reply as never))).status).toBe(200);
  });

  it('is not released once the code expired', async () => {
    const { session, reply } = await answered('same-device');
    await svc.db
      .updateTable('session_handles')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('session_id', '=', session)
      .where('purpose', '=', 'presentation-response-code')
      .execute();
    const refused = await release(session, codeOf(reply));
    expect(refused.status).toBe(400);
    expect(problemOf(refused).errors?.map((e) => e.field)).toEqual(['body.response_code']);
  });
});

describe('what the release refuses', () => {
  it('a session answered without a redirect (cross-device): its result is in GET /api/session, and its webhook went out', async () => {
    const { session, reply } = await answered('cross-device');
    expect(reply.body).toEqual({});
    const view = await svc.raw('GET', `/api/session/${session}`, { token: admin });
    expect(view.body.credentials).toEqual([expect.objectContaining({ claims: CLAIMS })]);
    expect(view.body).not.toHaveProperty('responseCodeRequired');
    await expect.poll(() => hooked(session).length, { timeout: 5000 }).toBe(1);
    const refused = await release(session, 'anything');
    expect(refused.status).toBe(400);
    expect(problemOf(refused).errors?.[0]).toMatchObject({
      field: 'body.response_code',
      message: expect.stringContaining(`GET /api/session/${session}`),
    });
  });

  it('a session not completed, naming body.session; an unknown one with 404', async () => {
    const offer = await svc.call('POST', '/api/verifier/offer', { token: admin, body: { response_type: 'uri', requestId: 'same-device' } });
    const open = await release(offer.body.session as string, 'anything');
    expect(open.status).toBe(400);
    expect(problemOf(open).errors).toEqual([{ field: 'body.session', message: 'is active, not completed: there is no result to release' }]);
    expect((await release('00000000-0000-4000-8000-000000000000', 'anything')).status).toBe(404);
  });

  it("another tenant's session, as unknown (404), without spending its code", async () => {
    const { session, reply } = await answered('same-device');
    const other = (await svc.tenant('globex')).token;
    expect((await release(session, codeOf(reply), other)).status).toBe(404);
    expect((await release(session, codeOf(reply))).status).toBe(200);
  });

  it('a client without presentation:request or presentation:manage (403), and a body without the code (400 naming it)', async () => {
    const { session, reply } = await answered('same-device');
    const issuerOnly = await svc.client(admin, 'issuer-only', ['issuance:offer']);
    expect((await release(session, codeOf(reply), issuerOnly)).status).toBe(403);
    const requester = await svc.client(admin, 'requester', ['presentation:request']);
    const missing = await svc.raw('POST', '/api/verifier/result', { token: requester, body: { session } });
    expect(missing.status).toBe(400);
    expect(problemOf(missing).errors?.map((e) => e.field)).toEqual(['body.response_code']);
    expect((await release(session, codeOf(reply), requester)).status).toBe(200);
  });
});
