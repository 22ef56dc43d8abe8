// A production deployment verifies the credentials it issued itself: the compiled service, started
// as `npm start` runs it with NODE_ENV=production (so OUTBOUND_ALLOW_PRIVATE is false) and a
// PUBLIC_URL on loopback, reads its own status list without the network, which would refuse it.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { type RequestOptions, request } from '../support/http.js';
import { presentSdJwt, resolveRequest, submit } from '../support/presenter.js';
import { run, type Started, stop } from '../support/process.js';
import { ALL_TENANT_ROLES, freePort, ROOT_ID } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

const PID = {
  id: 'pid',
  config: { format: 'dc+sd-jwt' },
  vct: 'urn:eudi:pid:1',
  statusManagement: true,
  fields: [{ path: ['given_name'], type: 'string', mandatory: true }],
};
const QUERY = {
  credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] }, claims: [{ path: ['given_name'] }] }],
};

let database: TestDatabase;
let started: Started;
let base: string;
const rootSecret = randomBytes(24).toString('base64url');
const call = (method: string, path: string, options?: RequestOptions) => request(base, method, path, options);

beforeAll(async () => {
  database = await freshDatabase();
  const port = await freePort();
  started = await run({
    ...database.env,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    MASTER_SECRET: randomBytes(32).toString('base64url'),
    AUTH_CLIENT_ID: ROOT_ID,
    AUTH_CLIENT_SECRET: rootSecret,
  });
  base = `http://127.0.0.1:${started.port}`;
});
afterAll(async () => {
  await stop(started);
  await database.drop();
});

async function tokenOf(clientId: string, secret: string): Promise<string> {
  const reply = await call('POST', '/api/oauth2/token', {
    body: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.access_token;
}

describe('npm start with NODE_ENV=production and PUBLIC_URL on loopback', () => {
  it('verifies a credential it issued with its status checked, and rejects it once revoked', async () => {
    const created = await call('POST', '/api/tenant', {
      token: await tokenOf(ROOT_ID, rootSecret),
      body: { id: 'acme', name: 'Acme', roles: ALL_TENANT_ROLES },
    });
    expect(created.status, created.text).toBe(201);
    const token = await tokenOf(created.body.client.clientId, created.body.client.secret);
    for (const [path, body] of [
      ['/api/issuer/credentials', PID],
      [
        '/api/trust-list',
        {
          id: 'issuers',
          entities: [
            { type: 'internal', keyChainId: 'default-attestation' },
            { type: 'internal', keyChainId: 'default-statusList', serviceType: 'revocation' },
          ],
        },
      ],
      ['/api/verifier/config', { id: 'pid-check', dcql_query: QUERY }],
    ] as const) {
      const reply = await call('POST', path, { token, body });
      expect(reply.status, reply.text).toBe(201);
    }
    const issued = await issueCredential({ call }, token, 'pid', { given_name: 'Erika' });

    const present = async () => {
      const offer = await call('POST', '/api/verifier/offer', { token, body: { response_type: 'uri', requestId: 'pid-check' } });
      expect(offer.status, offer.text).toBe(201);
      const resolved = await resolveRequest(offer.body.uri);
      const reply = await submit(resolved, { pid: [await presentSdJwt(issued.credential, issued.holder, resolved, ['given_name'])] });
      const session = await call('GET', `/api/session/${offer.body.session}`, { token });
      return { status: reply.status, session: session.body as { status: string; errorReason?: string } };
    };

    const accepted = await present();
    expect(accepted.status).toBe(200);
    expect(accepted.session.status).toBe('completed');
    expect(accepted.session.errorReason).toBeUndefined();
    // The status was checked: the verifier read the list once and keeps it.
    expect((await call('GET', '/api/cache/stats', { token })).body.fetchedStatusList).toMatchObject({ entries: 1, misses: 1 });

    const revoked = await call('POST', '/api/session/revoke', { token, body: { sessionId: issued.session, status: 1 } });
    expect(revoked.status, revoked.text).toBe(200);
    expect((await call('DELETE', '/api/cache/status-list', { token })).status).toBe(204);
    expect(await present()).toEqual({
      status: 400,
      session: expect.objectContaining({ status: 'failed', errorReason: 'status: revoked' }),
    });
  });
});
