// Attribute providers and webhook endpoints share one shape and one implementation; every test here
// runs against both paths.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpEndpointService } from '../../src/http-endpoints/service.js';
import { createdBody, expectFieldErrors, problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let acme: string;
let globex: string;

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  globex = (await svc.tenant('globex')).token;
});
afterAll(() => svc.stop());

const SECRET = 'sk_live_5f1e2d3c4b5a69788796a5b4';
const HEADER = 'X-Partner-Credential';

interface Kind {
  path: string;
  table: 'attribute_providers' | 'webhook_endpoints';
  label: string;
  audit: string;
  reference: 'attributeProviderId' | 'webhookEndpointId';
  service: () => HttpEndpointService;
  /** What creating one answers beside the view (a webhook endpoint's signing secret, once). */
  createdExtra: Record<string, unknown>;
  /** What resolve() gives beside URL and headers (a webhook endpoint's signing secrets). */
  resolvedExtra: Record<string, unknown>;
}
const KINDS: Kind[] = [
  {
    path: '/api/issuer/attribute-providers',
    table: 'attribute_providers',
    label: 'attribute provider',
    audit: 'attribute_provider',
    reference: 'attributeProviderId',
    service: () => svc.running.services.attributeProviders,
    createdExtra: {},
    resolvedExtra: {},
  },
  {
    path: '/api/issuer/webhook-endpoints',
    table: 'webhook_endpoints',
    label: 'webhook endpoint',
    audit: 'webhook_endpoint',
    reference: 'webhookEndpointId',
    service: () => svc.running.services.webhookEndpoints,
    createdExtra: { signingSecret: expect.stringMatching(/^whsec_/) },
    resolvedExtra: { signingSecrets: [expect.stringMatching(/^whsec_/)] },
  },
];

const stamps = { createdAt: expect.any(String), updatedAt: expect.any(String) };

describe.each(KINDS)('$path', (kind) => {
  const create = (token: string, body: unknown) => svc.raw('POST', kind.path, { token, body });
  const get = (token: string, id: string) => svc.raw('GET', `${kind.path}/${id}`, { token });
  const patch = (token: string, id: string, body: unknown) => svc.raw('PATCH', `${kind.path}/${id}`, { token, body });
  const remove = (token: string, id: string) => svc.raw('DELETE', `${kind.path}/${id}`, { token });
  const row = (tenantId: string, id: string) =>
    svc.db.selectFrom(kind.table).selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  const withHeader = (id: string) => ({
    id,
    name: 'Partner',
    description: 'claims of the partner system',
    url: 'https://partner.example.com/v1/claims?tenant=acme',
    auth: { type: 'header', header: { name: HEADER, value: SECRET } },
  });

  async function created(token: string, body: Record<string, unknown>) {
    return createdBody(await create(token, body));
  }

  describe('CRUD', () => {
    it('creates one without authentication', async () => {
      const body = { id: 'open', name: 'Open', url: 'http://internal.example:8080/hook', auth: { type: 'none' } };
      const reply = await create(acme, body);
      expect(reply.status, reply.text).toBe(201);
      expect(reply.body).toEqual({ ...body, tenantId: 'acme', description: null, ...stamps, ...kind.createdExtra });
      expect(reply.body.updatedAt).toBe(reply.body.createdAt);
      const { signingSecret: _, ...view } = reply.body;
      expect((await get(acme, 'open')).body).toEqual(view);
      expect(await kind.service().resolve('acme', 'open')).toEqual({ url: body.url, headers: {}, ...kind.resolvedExtra });
    });

    it('creates one with a header, stores it encrypted and never returns the value', async () => {
      const reply = await create(acme, withHeader('partner'));
      expect(reply.status, reply.text).toBe(201);
      const expected = {
        ...withHeader('partner'),
        auth: { type: 'header', header: { name: HEADER, value: '****' } },
        tenantId: 'acme',
        ...stamps,
      };
      expect(reply.body).toEqual({ ...expected, ...kind.createdExtra });
      expect((await get(acme, 'partner')).body).toEqual(expected);
      const list = await svc.raw('GET', kind.path, { token: acme });
      expect(list.body.find((e: { id: string }) => e.id === 'partner')).toEqual(expected);
      for (const text of [reply.text, list.text, (await get(acme, 'partner')).text]) expect(text).not.toContain(SECRET);

      const stored = await row('acme', 'partner');
      expect(stored?.auth.startsWith('v1.')).toBe(true);
      const raw = JSON.stringify(stored);
      expect(raw).not.toContain(SECRET);
      expect(raw).not.toContain(HEADER);
      expect(raw).not.toContain('header');
    });

    it('resolves the URL and the decrypted header for the features that call it', async () => {
      expect(await kind.service().resolve('acme', 'partner')).toEqual({
        url: 'https://partner.example.com/v1/claims?tenant=acme',
        headers: { [HEADER]: SECRET },
        ...kind.resolvedExtra,
      });
      await expect(kind.service().resolve('globex', 'partner')).rejects.toMatchObject({ status: 404 });
    });

    it('binds the sealed auth to its row: copied into another row it does not open', async () => {
      await created(acme, { id: 'victim', name: 'Victim', url: 'https://victim.example.com/', auth: { type: 'none' } });
      const source = await row('acme', 'partner');
      await svc.db
        .updateTable(kind.table)
        .set({ auth: source?.auth as string })
        .where('tenant_id', '=', 'acme')
        .where('id', '=', 'victim')
        .execute();
      expect((await get(acme, 'victim')).status).toBe(500);
      await svc.db.deleteFrom(kind.table).where('tenant_id', '=', 'acme').where('id', '=', 'victim').execute();
    });

    it('updates the fields given and replaces auth as a whole', async () => {
      await created(acme, withHeader('changing'));
      let reply = await patch(acme, 'changing', { name: 'Renamed', description: null, url: 'https://new.example.com/' });
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body).toMatchObject({
        name: 'Renamed',
        description: null,
        url: 'https://new.example.com/',
        auth: { type: 'header', header: { name: HEADER, value: '****' } },
      });
      expect(await kind.service().resolve('acme', 'changing')).toEqual({
        url: 'https://new.example.com/',
        headers: { [HEADER]: SECRET },
        ...kind.resolvedExtra,
      });

      reply = await patch(acme, 'changing', { auth: { type: 'header', header: { name: 'Authorization', value: 'Bearer rotated-token' } } });
      expect(reply.body.auth).toEqual({ type: 'header', header: { name: 'Authorization', value: '****' } });
      expect((await kind.service().resolve('acme', 'changing')).headers).toEqual({ Authorization: 'Bearer rotated-token' });
      expect(JSON.stringify(await row('acme', 'changing'))).not.toContain('rotated-token');

      reply = await patch(acme, 'changing', { auth: { type: 'none' } });
      expect(reply.body.auth).toEqual({ type: 'none' });
      expect((await kind.service().resolve('acme', 'changing')).headers).toEqual({});
      expect((await get(acme, 'changing')).body.createdAt).toBe(reply.body.createdAt);
    });

    it('accepts the id on PATCH only when it names the same one', async () => {
      expect((await patch(acme, 'changing', { id: 'changing', name: 'Same' })).status).toBe(200);
      expectFieldErrors(await patch(acme, 'changing', { id: 'other' }), ['body.id']);
    });

    it('deletes one, then it is gone', async () => {
      await created(acme, { id: 'gone', name: 'Gone', url: 'https://gone.example.com/', auth: { type: 'none' } });
      const reply = await remove(acme, 'gone');
      expect(reply.status).toBe(204);
      expect((await get(acme, 'gone')).status).toBe(404);
      expect(await row('acme', 'gone')).toBeUndefined();
    });

    it('answers 404 for unknown ids, naming the kind', async () => {
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { name: 'x' }],
        ['DELETE', undefined],
      ] as const) {
        const reply = await svc.raw(method, `${kind.path}/nope`, { token: acme, body });
        expect(reply.status, method).toBe(404);
        expect(problemOf(reply).detail).toBe(`${kind.label} 'nope' does not exist`);
      }
    });

    it('refuses a duplicate id, and accepts it in another tenant', async () => {
      const reply = await create(acme, { ...withHeader('partner'), name: 'Other' });
      expect(reply.status).toBe(409);
      expect(problemOf(reply).detail).toBe(`${kind.label} 'partner' already exists`);
      expect((await get(acme, 'partner')).body.name).toBe('Partner');
      expect((await create(globex, withHeader('partner'))).status).toBe(201);
    });
  });

  describe('validation', () => {
    const ok = { id: 'valid', name: 'Valid', url: 'https://valid.example.com/', auth: { type: 'none' } };
    const header = (h: Record<string, unknown>) => ({ ...ok, auth: { type: 'header', header: h } });
    const cases: [string, Record<string, unknown>, string[]][] = [
      ['nothing', {}, ['body.id', 'body.name', 'body.url', 'body.auth']],
      ['a bad id', { ...ok, id: 'a/b' }, ['body.id']],
      ['an empty name', { ...ok, name: '' }, ['body.name']],
      ['a URL that is not one', { ...ok, url: 'partner' }, ['body.url']],
      ['an ftp URL', { ...ok, url: 'ftp://files.example.com/' }, ['body.url']],
      ['credentials in the URL', { ...ok, url: 'https://user:pass@example.com/' }, ['body.url']],
      ['an unknown auth type', { ...ok, auth: { type: 'basic' } }, ['body.auth.type']],
      ['a header auth without header', { ...ok, auth: { type: 'header' } }, ['body.auth.header']],
      ['a header without value', header({ name: 'X-Key' }), ['body.auth.header.value']],
      ['a header name with a space', header({ name: 'X Key', value: 'v' }), ['body.auth.header.name']],
      ['a header the service sets', header({ name: 'Host', value: 'evil.example.com' }), ['body.auth.header.name']],
      ['a header value with a line break', header({ name: 'X-Key', value: 'v\r\nX-Other: 1' }), ['body.auth.header.value']],
      ['an unknown field', { ...ok, secret: 'x' }, ['body.secret']],
    ];
    it.each(cases)('answers 400 naming the field(s) for %s', async (_name, body, fields) => {
      expectFieldErrors(await create(acme, body), fields);
      expect(await row('acme', 'valid')).toBeUndefined();
    });

    it('checks PATCH bodies with the same rules, all fields optional', async () => {
      expectFieldErrors(await patch(acme, 'partner', { url: 'mailto:x@example.com', auth: { type: 'header', header: { name: 'X' } } }), [
        'body.url',
        'body.auth.header.value',
      ]);
      expect((await patch(acme, 'partner', {})).status).toBe(200);
    });
  });

  describe('isolation', () => {
    it("hides another tenant's endpoint and leaves it unchanged", async () => {
      await created(acme, { id: 'acme-only', name: 'Mine', url: 'https://mine.example.com/', auth: { type: 'none' } });
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { name: 'Theirs' }],
        ['DELETE', undefined],
      ] as const) {
        expect((await svc.raw(method, `${kind.path}/acme-only`, { token: globex, body })).status, method).toBe(404);
      }
      const theirs = (await svc.raw('GET', kind.path, { token: globex })).body.map((e: { id: string }) => e.id);
      expect(theirs).not.toContain('acme-only');
      expect((await get(acme, 'acme-only')).body.name).toBe('Mine');
    });
  });

  describe('in use', () => {
    it('refuses to delete one that a credential configuration refers to, until it no longer does', async () => {
      await created(acme, { id: 'referenced', name: 'Referenced', url: 'https://ref.example.com/', auth: { type: 'none' } });
      const configId = `uses-${kind.audit}`;
      const config = await svc.raw('POST', '/api/issuer/credentials', {
        token: acme,
        body: { id: configId, config: { format: 'dc+sd-jwt' }, fields: [], [kind.reference]: 'referenced' },
      });
      expect(config.status, config.text).toBe(201);

      const refused = await remove(acme, 'referenced');
      expect(refused.status).toBe(409);
      expect(problemOf(refused).detail).toBe(`${kind.label} 'referenced' is in use: credential configuration '${configId}'`);
      expect((await get(acme, 'referenced')).status).toBe(200);

      await svc.raw('PATCH', `/api/issuer/credentials/${configId}`, { token: acme, body: { [kind.reference]: null } });
      expect((await remove(acme, 'referenced')).status).toBe(204);
    });
  });

  describe('audit', () => {
    it('records create, update and delete without the header value', async () => {
      const rid = `audit-${kind.audit}-${Date.now()}`;
      const headers = { 'x-request-id': rid };
      await svc.raw('POST', kind.path, { token: acme, headers, body: withHeader('audited') });
      await svc.raw('PATCH', `${kind.path}/audited`, {
        token: acme,
        headers,
        body: { auth: { type: 'header', header: { name: HEADER, value: 'second-secret-value' } } },
      });
      await svc.raw('PATCH', `${kind.path}/audited`, { token: acme, headers, body: { name: 'Renamed' } });
      await svc.raw('DELETE', `${kind.path}/audited`, { token: acme, headers });
      const log = await svc.raw('GET', '/api/admin/audit-logs?limit=500', { token: acme });
      expect(log.text).not.toContain(SECRET);
      expect(log.text).not.toContain('second-secret-value');
      const entries = log.body.filter((e: { requestId: string }) => e.requestId === rid).reverse();
      expect(entries.map((e: { actionType: string }) => e.actionType)).toEqual([
        `${kind.audit}.created`,
        `${kind.audit}.updated`,
        `${kind.audit}.updated`,
        `${kind.audit}.deleted`,
      ]);
      const masked = { type: 'header', header: { name: HEADER, value: '****' } };
      expect(entries[0]).toMatchObject({ tenantId: 'acme', before: null, after: { id: 'audited', name: 'Partner', auth: masked } });
      expect(entries[1].changedFields).toEqual(['authReplaced', 'updatedAt']);
      expect(entries[1].after.authReplaced).toBe(true);
      expect(entries[2].changedFields).toEqual(['name', 'updatedAt']);
      expect(entries[3]).toMatchObject({ before: { id: 'audited', name: 'Renamed', auth: masked }, after: null });
      const stored = await svc.db.selectFrom('audit_log').selectAll().where('request_id', '=', rid).execute();
      expect(JSON.stringify(stored)).not.toContain(SECRET);
    });
  });
});

describe('OpenAPI', () => {
  it('documents both kinds with the masked auth', async () => {
    const doc = (await svc.raw('GET', '/api/openapi.json')).body;
    for (const name of ['AttributeProvider', 'WebhookEndpoint']) {
      const schema = doc.components.schemas[name];
      expect(schema.required).toEqual(['id', 'tenantId', 'name', 'description', 'url', 'auth', 'createdAt', 'updatedAt']);
      expect(JSON.stringify(schema.properties.auth)).toContain('"const":"****"');
    }
    expect(doc.paths['/api/issuer/webhook-endpoints/{id}'].delete.description).toContain('issuance:manage');
  });
});
