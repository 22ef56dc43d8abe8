// The tenant's trust settings as their own resource (/api/trust-config), kept where the federation
// block always was: the issuer settings' federation field, an alias that reads and writes the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldsOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let admin: string;
let other: string;

const FEDERATION: {
  role: 'leaf';
  mode: 'federation-only';
  authorityHints: string[];
  trustAnchors: { entityId: string }[];
  cacheTtlSeconds: number;
} = {
  role: 'leaf',
  mode: 'federation-only',
  authorityHints: ['https://federation.example.eu'],
  trustAnchors: [{ entityId: 'https://federation.example.eu' }],
  cacheTtlSeconds: 60,
};

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  other = (await svc.tenant('globex')).token;
});
afterAll(() => svc.stop());

const auditRows = (tenantId: string) =>
  svc.db
    .selectFrom('audit_log')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('action_type', '=', 'issuer_settings.updated')
    .execute();

describe('/api/trust-config', () => {
  it('starts with no federation', async () => {
    const reply = await svc.call('GET', '/api/trust-config', { token: admin });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({ federation: null, etsiTrustedLists: null });
  });

  it('PUT saves the federation block, with its defaults, into the issuer settings (the alias) and keeps their other fields', async () => {
    const settings = await svc.raw('PUT', '/api/issuer/config', { token: admin, body: { batchSize: 3 } });
    expect(settings.status, settings.text).toBe(200);
    const before = (await auditRows('acme')).length;

    const put = await svc.raw('PUT', '/api/trust-config', { token: admin, body: { federation: { role: 'leaf' } } });
    expect(put.status, put.text).toBe(200);
    const withDefaults = { role: 'leaf', mode: 'hybrid', authorityHints: [], trustAnchors: [], cacheTtlSeconds: 300 };
    expect(put.body).toEqual({ federation: withDefaults, etsiTrustedLists: null });

    const issuer = await svc.call('GET', '/api/issuer/config', { token: admin });
    expect(issuer.body.federation).toEqual(withDefaults);
    expect(issuer.body.batchSize).toBe(3);
    expect((await svc.call('GET', '/api/trust-config', { token: admin })).body).toEqual({
      federation: withDefaults,
      etsiTrustedLists: null,
    });
    // Saved as the issuer settings are: audited, and the federation key chain made.
    expect(await auditRows('acme')).toHaveLength(before + 1);
    const chains = await svc.db.selectFrom('key_chains').select('usage_type').where('tenant_id', '=', 'acme').execute();
    expect(chains.map((chain) => chain.usage_type)).toContain('federation');
  });

  it('a federation block written through the issuer settings is read through /api/trust-config, and null through either clears both', async () => {
    const current = (await svc.call('GET', '/api/issuer/config', { token: admin })).body;
    const put = await svc.call('PUT', '/api/issuer/config', { token: admin, body: { ...current, federation: FEDERATION } });
    expect(put.status, put.text).toBe(200);
    expect((await svc.call('GET', '/api/trust-config', { token: admin })).body).toEqual({ federation: FEDERATION, etsiTrustedLists: null });

    const cleared = await svc.call('PUT', '/api/trust-config', { token: admin, body: { federation: null, etsiTrustedLists: null } });
    expect(cleared.status, cleared.text).toBe(200);
    expect((await svc.call('GET', '/api/issuer/config', { token: admin })).body.federation).toBeNull();
    expect((await svc.call('GET', '/api/issuer/config', { token: admin })).body.batchSize).toBe(3);
  });

  it('refuses bad input with 400 naming the field, and changes nothing', async () => {
    const badMode = await svc.raw('PUT', '/api/trust-config', { token: admin, body: { federation: { role: 'leaf', mode: 'sometimes' } } });
    expect(badMode.status).toBe(400);
    expect(fieldsOf(badMode)).toContain('body.federation.mode');

    const badAnchor = await svc.raw('PUT', '/api/trust-config', {
      token: admin,
      body: { federation: { role: 'leaf', trustAnchors: [{ entityId: 'not a url' }] } },
    });
    expect(badAnchor.status).toBe(400);
    expect(fieldsOf(badAnchor)).toContain('body.federation.trustAnchors.0.entityId');

    const unknown = await svc.raw('PUT', '/api/trust-config', { token: admin, body: { federation: null, lote: {} } });
    expect(unknown.status).toBe(400);
    expect((await svc.call('GET', '/api/trust-config', { token: admin })).body).toEqual({ federation: null, etsiTrustedLists: null });
  });

  it('needs issuance:manage, as the issuer settings do', async () => {
    const limited = await svc.client(admin, 'acme-presenter', ['presentation:manage', 'issuance:offer']);
    expect((await svc.call('GET', '/api/trust-config', { token: limited })).status).toBe(403);
    const put = await svc.call('PUT', '/api/trust-config', { token: limited, body: { federation: FEDERATION, etsiTrustedLists: null } });
    expect(put.status).toBe(403);
    expect((await svc.call('GET', '/api/trust-config', { token: admin })).body).toEqual({ federation: null, etsiTrustedLists: null });
    expect((await svc.call('GET', '/api/trust-config')).status).toBe(401);
  });

  it("keeps each tenant's settings to itself", async () => {
    const put = await svc.call('PUT', '/api/trust-config', { token: other, body: { federation: FEDERATION, etsiTrustedLists: null } });
    expect(put.status, put.text).toBe(200);
    expect((await svc.call('GET', '/api/trust-config', { token: admin })).body).toEqual({ federation: null, etsiTrustedLists: null });
    expect((await svc.call('GET', '/api/trust-config', { token: other })).body).toEqual({ federation: FEDERATION, etsiTrustedLists: null });
    expect((await svc.call('GET', '/api/issuer/config', { token: admin })).body.federation).toBeNull();
  });
});
