// The two reads the console is built on: who the caller is now (GET /api/whoami, which chooses the
// sections and actions the console shows) and the status of each credential a session issued
// (GET /api/session/{id}/credentials, which the session page shows with revoke and suspend).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/service.js';
import { holderKey, receiveCredentials } from '../support/wallet.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
}, 60_000);
afterAll(() => svc?.stop());

describe('GET /api/whoami', () => {
  it("names the client, its tenant and the roles it holds now, not those of the token's issue", async () => {
    const admin = await svc.tenant('who');
    const token = await svc.client(admin.token, 'who-offers', ['issuance:offer', 'presentation:request']);
    const before = await svc.call('GET', '/api/whoami', { token });
    expect(before.status, before.text).toBe(200);
    expect(before.body).toMatchObject({ clientId: 'who-offers', tenantId: 'who', roles: ['issuance:offer', 'presentation:request'] });
    expect(Date.parse(before.body.expiresAt)).toBeGreaterThan(Date.now());

    // A role taken away shows at once, with the same token.
    const changed = await svc.call('PATCH', '/api/client/who-offers', { token: admin.token, body: { roles: ['issuance:offer'] } });
    expect(changed.status, changed.text).toBe(200);
    expect((await svc.call('GET', '/api/whoami', { token })).body.roles).toEqual(['issuance:offer']);
  });

  it('names no tenant for the service client, and answers 401 without a token', async () => {
    const root = await svc.call('GET', '/api/whoami', { token: await svc.rootToken() });
    expect(root.body).toMatchObject({ clientId: 'root', tenantId: null });
    expect(root.body.roles).toContain('tenants:manage');
    expect((await svc.call('GET', '/api/whoami')).status).toBe(401);
  });
});

describe('GET /api/session/{id}/credentials', () => {
  it("shows each issued credential's status as it is revoked, suspended and reinstated; presentation sessions have none", async () => {
    const { token } = await svc.tenant('creds');
    // Two bits per entry, so that a credential can be suspended as well as revoked.
    expect((await svc.call('PUT', '/api/status-list-config', { token, body: { bits: 2 } })).status).toBe(200);
    const config = await svc.call('POST', '/api/issuer/credentials', {
      token,
      body: {
        id: 'pid',
        config: { format: 'dc+sd-jwt' },
        vct: 'urn:eudi:pid:1',
        statusManagement: true,
        fields: [{ path: ['given_name'], type: 'string' }],
      },
    });
    expect(config.status, config.text).toBe(201);
    const offer = await svc.call('POST', '/api/issuer/offer', {
      token,
      body: {
        response_type: 'uri',
        flow: 'pre_authorized_code',
        credentialConfigurationIds: ['pid'],
        credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika' } } },
      },
    });
    expect(offer.status, offer.text).toBe(201);
    const sessionId = offer.body.session as string;
    expect((await svc.call('GET', `/api/session/${sessionId}/credentials`, { token })).body).toEqual([]);
    await receiveCredentials(offer.body.uri, { keys: [await holderKey()] });

    const states = async () => {
      const reply = await svc.call('GET', `/api/session/${sessionId}/credentials`, { token });
      expect(reply.status, reply.text).toBe(200);
      return (reply.body as { state: string; credentialConfigurationId: string }[]).map((c) => `${c.credentialConfigurationId}:${c.state}`);
    };
    expect(await states()).toEqual(['pid:valid']);
    for (const [status, state] of [
      [1, 'revoked'],
      [2, 'suspended'],
      [0, 'valid'],
    ] as const) {
      const changed = await svc.call('POST', '/api/session/revoke', { token, body: { sessionId, status } });
      expect(changed.body.updatedEntries).toBe(1);
      expect(await states()).toEqual([`pid:${state}`]);
    }

    // Another tenant sees no such session; a client without issuance:manage may not ask.
    const other = await svc.tenant('creds-other');
    expect((await svc.call('GET', `/api/session/${sessionId}/credentials`, { token: other.token })).status).toBe(404);
    const offersOnly = await svc.client(token, 'creds-offers', ['issuance:offer']);
    expect((await svc.call('GET', `/api/session/${sessionId}/credentials`, { token: offersOnly })).status).toBe(403);
    expect((await svc.call('GET', '/api/session/nope/credentials', { token })).status).toBe(404);
  });
});
