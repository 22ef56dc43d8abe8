// RFC 8693 token exchange: a service administrator acts in one tenant with a short-lived token.
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_ID, startService, type TestService } from '../support/service.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
  await svc.tenant('acme');
});
afterAll(() => svc.stop());

function exchange(service: TestService, body: Record<string, string>) {
  return service.raw('POST', '/api/oauth2/token', {
    body: { grant_type: GRANT, subject_token_type: ACCESS_TOKEN, ...body },
  });
}

/** A second service administrator, so that it can be deleted or given a new secret. */
async function serviceAdmin(clientId: string): Promise<{ token: string; secret: string }> {
  const reply = await svc.raw('POST', '/api/client', {
    token: await svc.rootToken(),
    body: { clientId, roles: ['tenants:manage'] },
  });
  expect(reply.status).toBe(201);
  return { token: await svc.token(clientId, reply.body.secret), secret: reply.body.secret };
}

async function auditOf(token: string) {
  const reply = await svc.raw('GET', '/api/admin/audit-logs?limit=50', { token });
  expect(reply.status).toBe(200);
  return reply.body as {
    actionType: string;
    tenantId: string;
    actorId: string;
    actorDisplay: string;
    actingAdminId: string | null;
    after: any;
    requestId: string;
  }[];
}

describe('token exchange into a tenant', () => {
  it('issues a tenant token with only the chosen roles, acting as the administrator', async () => {
    const reply = await exchange(svc, { subject_token: await svc.rootToken(), audience: 'acme', scope: 'clients:manage' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    expect(reply.body).toEqual({
      access_token: expect.any(String),
      issued_token_type: ACCESS_TOKEN,
      token_type: 'Bearer',
      expires_in: 900,
      scope: 'clients:manage',
    });
    const token = reply.body.access_token as string;
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ sub: ROOT_ID, tenant_id: 'acme', roles: ['clients:manage'], act: { sub: ROOT_ID } });
    expect((claims.exp as number) - (claims.iat as number)).toBe(900);

    const listed = await svc.raw('GET', '/api/client', { token });
    expect(listed.status).toBe(200);
    expect((listed.body as { tenantId: string }[]).every((client) => client.tenantId === 'acme')).toBe(true);
    // A role not chosen is not held, though the administrator's tenant clients could hold it.
    expect((await svc.raw('GET', '/api/user', { token })).status).toBe(403);
    // A service operation is out of reach: the token is the tenant's.
    expect((await svc.raw('GET', '/api/tenant', { token })).status).toBe(403);
  });

  it('names the acting administrator in whoami, and only for an exchanged token', async () => {
    const root = await svc.rootToken();
    const token = (await exchange(svc, { subject_token: root, audience: 'acme', scope: 'clients:manage' })).body.access_token as string;
    const acting = await svc.raw('GET', '/api/whoami', { token });
    expect(acting.status).toBe(200);
    expect(acting.body).toEqual({
      clientId: ROOT_ID,
      tenantId: 'acme',
      roles: ['clients:manage'],
      expiresAt: expect.any(String),
      actingAdminId: ROOT_ID,
    });
    // The administrator's own token, and a tenant's own client, act for nobody else.
    const own = await svc.raw('GET', '/api/whoami', { token: root });
    expect(own.body).toMatchObject({ clientId: ROOT_ID, tenantId: null });
    expect(own.body).not.toHaveProperty('actingAdminId');
    const tenantClient = await svc.tenant('whoami-plain');
    const plain = await svc.raw('GET', '/api/whoami', { token: tenantClient.token });
    expect(plain.body).toMatchObject({ tenantId: 'whoami-plain' });
    expect(plain.body).not.toHaveProperty('actingAdminId');
  });

  it('audits the exchange and every write as the administrator in the tenant', async () => {
    const reply = await exchange(svc, { subject_token: await svc.rootToken(), audience: 'acme', scope: 'clients:manage' });
    const token = reply.body.access_token as string;
    const created = await svc.raw('POST', '/api/client', {
      token,
      headers: { 'x-request-id': 'exchange-write-1' },
      body: { clientId: 'acme-by-admin', roles: ['clients:manage'] },
    });
    expect(created.status).toBe(201);
    const row = await svc.db.selectFrom('clients').select('tenant_id').where('id', '=', 'acme-by-admin').executeTakeFirstOrThrow();
    expect(row.tenant_id).toBe('acme');

    const entries = await auditOf(token);
    const write = entries.find((e) => e.actionType === 'client.created' && e.after?.clientId === 'acme-by-admin');
    expect(write).toMatchObject({
      tenantId: 'acme',
      actorId: ROOT_ID,
      actingAdminId: ROOT_ID,
      actorDisplay: `admin ${ROOT_ID} in tenant acme`,
    });
    const exchanged = entries.find((e) => e.actionType === 'token.exchanged');
    expect(exchanged).toMatchObject({
      tenantId: 'acme',
      actorId: ROOT_ID,
      actingAdminId: ROOT_ID,
      actorDisplay: `admin ${ROOT_ID} in tenant acme`,
      after: { adminClientId: ROOT_ID, roles: ['clients:manage'] },
    });
    // The entries are the tenant's: its own clients see them too, with the acting administrator named.
    const stored = await svc.db
      .selectFrom('audit_log')
      .select(['acting_admin_id', 'tenant_id'])
      .where('action_type', '=', 'token.exchanged')
      .execute();
    expect(stored.every((e) => e.acting_admin_id === ROOT_ID && e.tenant_id === 'acme')).toBe(true);
  });

  it('grants every tenant role when no scope is given, never tenants:manage', async () => {
    const reply = await exchange(svc, { subject_token: await svc.rootToken(), audience: 'acme' });
    expect(reply.status).toBe(200);
    expect((reply.body.scope as string).split(' ')).not.toContain('tenants:manage');
    expect((reply.body.scope as string).split(' ')).toContain('users:manage');
    expect((await svc.raw('GET', '/api/user', { token: reply.body.access_token })).status).toBe(200);
  });

  it('never outlives the subject token', async () => {
    const short = await startService({ JWT_EXPIRES_IN: '5m' });
    try {
      await short.tenant('brief');
      const subject = await short.rootToken();
      const reply = await exchange(short, { subject_token: subject, audience: 'brief' });
      expect(reply.status).toBe(200);
      expect(reply.body.expires_in).toBeLessThanOrEqual(300);
      expect(decodeJwt(reply.body.access_token).exp).toBe(decodeJwt(subject).exp);
    } finally {
      await short.stop();
    }
  });

  it('refuses what RFC 8693 section 2.2.2 refuses', async () => {
    const root = await svc.rootToken();
    const tenantToken = (await svc.tenant('globex')).token;
    const exchanged = (await exchange(svc, { subject_token: root, audience: 'acme' })).body.access_token as string;

    const cases: [Record<string, string>, number, string, RegExp][] = [
      [{ subject_token: tenantToken, audience: 'acme' }, 400, 'invalid_request', /belongs to a tenant/],
      [{ subject_token: exchanged, audience: 'acme' }, 400, 'invalid_request', /cannot be exchanged again/],
      [{ subject_token: 'not-a-token', audience: 'acme' }, 400, 'invalid_request', /subject_token/],
      [
        { subject_token: root, audience: 'acme', subject_token_type: 'urn:ietf:params:oauth:token-type:jwt' },
        400,
        'invalid_request',
        /subject_token_type: 'urn:ietf:params:oauth:token-type:jwt'/,
      ],
      [{ subject_token: root, audience: 'nowhere' }, 400, 'invalid_target', /nowhere/],
      [{ subject_token: root }, 400, 'invalid_request', /audience/],
      [{ subject_token: root, audience: 'acme', scope: 'clients:manage flying' }, 400, 'invalid_scope', /flying/],
      [{ subject_token: root, audience: 'acme', scope: 'tenants:manage' }, 400, 'invalid_scope', /tenants:manage/],
    ];
    for (const [body, status, error, description] of cases) {
      const reply = await exchange(svc, body);
      expect(reply.status, JSON.stringify(body)).toBe(status);
      expect(reply.body.error, JSON.stringify(body)).toBe(error);
      expect(reply.body.error_description, JSON.stringify(body)).toMatch(description);
    }
  });

  it('refuses a service client without tenants:manage', async () => {
    const admin = await serviceAdmin('demoted-admin');
    // The API keeps tenants:manage on every client without a tenant; take it away behind its back.
    // The token was never used, so no cached state of the client hides the change.
    await svc.db
      .updateTable('clients')
      .set({ roles: JSON.stringify(['clients:manage']) })
      .where('id', '=', 'demoted-admin')
      .execute();
    const reply = await exchange(svc, { subject_token: admin.token, audience: 'acme' });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(/lacks the role tenants:manage/) });
  });

  it('dies with the administrator: client deleted or secret replaced', async () => {
    const doomed = await serviceAdmin('doomed-admin');
    const byDoomed = (await exchange(svc, { subject_token: doomed.token, audience: 'acme' })).body.access_token as string;
    expect((await svc.raw('GET', '/api/client', { token: byDoomed })).status).toBe(200);
    expect((await svc.raw('DELETE', '/api/client/doomed-admin', { token: await svc.rootToken() })).status).toBe(204);
    const afterDeletion = await svc.raw('GET', '/api/client', { token: byDoomed });
    expect(afterDeletion.status).toBe(401);

    const rotated = await serviceAdmin('rotated-admin');
    const byRotated = (await exchange(svc, { subject_token: rotated.token, audience: 'acme' })).body.access_token as string;
    expect((await svc.raw('POST', '/api/client/rotated-admin/rotate-secret', { token: await svc.rootToken() })).status).toBe(200);
    expect((await svc.raw('GET', '/api/client', { token: byRotated })).status).toBe(401);
  });

  it('dies with the tenant: deleted, or not active', async () => {
    await svc.tenant('fleeting');
    const token = (await exchange(svc, { subject_token: await svc.rootToken(), audience: 'fleeting' })).body.access_token as string;
    expect((await svc.raw('GET', '/api/client', { token })).status).toBe(200);
    await svc.db.updateTable('tenants').set({ status: 'initializing' }).where('id', '=', 'fleeting').execute();
    const inactive = await svc.raw('GET', '/api/client', { token });
    expect(inactive.status).toBe(401);
    expect(inactive.body.detail).toMatch(/fleeting/);
    expect((await exchange(svc, { subject_token: await svc.rootToken(), audience: 'fleeting' })).body.error).toBe('invalid_target');
    await svc.db.updateTable('tenants').set({ status: 'active' }).where('id', '=', 'fleeting').execute();
    expect((await svc.raw('DELETE', '/api/tenant/fleeting', { token: await svc.rootToken() })).status).toBe(204);
    expect((await svc.raw('GET', '/api/client', { token })).status).toBe(401);
  });
});
