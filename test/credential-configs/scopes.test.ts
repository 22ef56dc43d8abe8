// The scope of a credential configuration: every configuration has one (default its id; HAIP 1.0
// section 4.1 asks the issuer metadata for one on each), settable, and unique in the tenant, which
// the database decides (a unique index over tenant and scope).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFieldErrors, problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let acme: string;
let globex: string;

const PATH = '/api/issuer/credentials';

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  globex = (await svc.tenant('globex')).token;
});
afterAll(() => svc.stop());

const configuration = (id: string, scope?: string) => ({
  id,
  config: { format: 'dc+sd-jwt', ...(scope !== undefined && { scope }) },
  vct: `urn:example:${id}`,
  fields: [{ path: ['name'], type: 'string' }],
});
const create = (token: string, body: unknown) => svc.raw('POST', PATH, { token, body });
const patch = (token: string, id: string, body: unknown) => svc.raw('PATCH', `${PATH}/${id}`, { token, body });

/** The stored rows of the tenant: the scope column and the document's scope, which must agree. */
async function storedScopes(tenantId: string) {
  const rows = await svc.db
    .selectFrom('credential_configs')
    .select(['id', 'scope', 'document'])
    .where('tenant_id', '=', tenantId)
    .execute();
  return Object.fromEntries(rows.map((row) => [row.id, { column: row.scope, document: JSON.parse(row.document).config.scope }]));
}

const metadata = async (tenant: string) => (await svc.raw('GET', `/.well-known/openid-credential-issuer/issuers/${tenant}`)).body;

describe('scope of a credential configuration', () => {
  it('defaults to the configuration id, is stored in the column and the document alike, and the metadata lists it', async () => {
    const reply = await create(acme, configuration('badge'));
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body.config.scope).toBe('badge');
    expect((await storedScopes('acme')).badge).toEqual({ column: 'badge', document: 'badge' });
    expect((await metadata('acme')).credential_configurations_supported.badge.scope).toBe('badge');
  });

  it('takes a scope of its own, listed in the metadata for every configuration', async () => {
    const reply = await create(acme, configuration('membership', 'org.example.membership'));
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body.config.scope).toBe('org.example.membership');
    const supported = (await metadata('acme')).credential_configurations_supported;
    expect(supported.membership.scope).toBe('org.example.membership');
    for (const [id, entry] of Object.entries(supported)) expect((entry as { scope?: unknown }).scope, id).toEqual(expect.any(String));
  });

  it('refuses a scope another configuration of the tenant holds (its id or its own scope) with 400 naming config.scope and the holder', async () => {
    for (const scope of ['badge', 'org.example.membership']) {
      const reply = await create(acme, configuration('copy', scope));
      expectFieldErrors(reply, ['body.config.scope']);
      expect(problemOf(reply).errors?.[0]?.message).toMatch(/already the scope of credential configuration '(badge|membership)'/);
    }
    // A configuration whose default scope (its id) another one holds as its scope is refused alike.
    const byDefault = await create(acme, configuration('org.example.membership'));
    expectFieldErrors(byDefault, ['body.config.scope']);
    expect(Object.keys(await storedScopes('acme')).sort()).toEqual(['badge', 'membership']);
  });

  it("is unique per tenant only: another tenant's configuration may hold the same scope", async () => {
    const reply = await create(globex, configuration('other', 'org.example.membership'));
    expect(reply.status, reply.text).toBe(201);
    expect((await metadata('globex')).credential_configurations_supported.other.scope).toBe('org.example.membership');
    expect((await metadata('acme')).credential_configurations_supported.membership.scope).toBe('org.example.membership');
  });

  it('PATCH: a held scope is refused and nothing changes; a free one is taken; a config without scope goes back to the id', async () => {
    const taken = await patch(acme, 'badge', { config: { format: 'dc+sd-jwt', scope: 'org.example.membership' } });
    expectFieldErrors(taken, ['body.config.scope']);
    expect((await storedScopes('acme')).badge).toEqual({ column: 'badge', document: 'badge' });

    const moved = await patch(acme, 'membership', { config: { format: 'dc+sd-jwt', scope: 'org.example.membership.v2' } });
    expect(moved.status, moved.text).toBe(200);
    expect((await storedScopes('acme')).membership).toEqual({ column: 'org.example.membership.v2', document: 'org.example.membership.v2' });
    // The old value is free again.
    expect((await create(acme, configuration('legacy', 'org.example.membership'))).status).toBe(201);

    const back = await patch(acme, 'membership', { config: { format: 'dc+sd-jwt' } });
    expect(back.status, back.text).toBe(200);
    expect(back.body.config.scope).toBe('membership');
    expect((await metadata('acme')).credential_configurations_supported.membership.scope).toBe('membership');
    // A PATCH that leaves config alone keeps the scope.
    expect((await patch(acme, 'legacy', { description: 'kept' })).body.config.scope).toBe('org.example.membership');
  });

  it.each([
    ['a space', 'two words'],
    ['a double quote', 'say"so'],
    ['a backslash', 'back\\slash'],
    ['nothing', ''],
    ['a non-ASCII character', 'ausweis-ä'],
  ])('refuses a scope with %s: 400 naming config.scope', async (_what, scope) => {
    const reply = await create(acme, configuration('malformed', scope));
    expectFieldErrors(reply, ['body.config.scope']);
    expect((await storedScopes('acme')).malformed).toBeUndefined();
  });

  it('lets exactly one of concurrent writers take a scope: the database decides', async () => {
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => create(acme, configuration(`racer-${i}`, 'org.example.race'))));
    const statuses = replies.map((reply) => reply.status).sort();
    expect(statuses).toEqual([201, 400, 400, 400, 400, 400]);
    for (const reply of replies.filter((r) => r.status === 400)) expectFieldErrors(reply, ['body.config.scope']);
    const holders = Object.entries(await storedScopes('acme')).filter(([, scopes]) => scopes.column === 'org.example.race');
    expect(holders).toHaveLength(1);
  });

  it('is held unique by the database itself, whatever writes the row', async () => {
    const now = new Date().toISOString();
    const row = { tenant_id: 'acme', id: 'sneaked', document: '{}', scope: 'badge', created_at: now, updated_at: now };
    await expect(svc.db.insertInto('credential_configs').values(row).execute()).rejects.toThrow();
    await svc.db
      .insertInto('credential_configs')
      .values({ ...row, tenant_id: 'globex' })
      .execute();
    await svc.db.deleteFrom('credential_configs').where('id', '=', 'sneaked').execute();
  });
});
