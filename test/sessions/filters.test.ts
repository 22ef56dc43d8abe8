// The session list's filters an operator narrows by: configuration, creation date range and id
// prefix, each alone and combined with status and type, on both databases; bad values answer 400
// naming the field, and another tenant's sessions never match.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionKind } from '../../src/sessions/model.js';
import { fieldsOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let token: string;
const ids = new Map<string, string>();

/** Makes a session in `tenant` with a known creation time and configuration; answers its id. */
async function make(tenant: string, kind: SessionKind, configuration: string[], created: string, status = 'active') {
  // A presentation request names its configuration as requestId; one embedded in issuance as presentationConfigId.
  const shown =
    kind === 'issuance'
      ? { credentialConfigurationIds: configuration }
      : configuration[0] === 'age-check'
        ? { requestId: configuration[0] }
        : { presentationConfigId: configuration[0] };
  const session = await svc.running.services.sessions.create({
    tenantId: tenant,
    kind,
    clientId: null,
    lifetimeSeconds: 600,
    public: shown,
  });
  await svc.db.updateTable('sessions').set({ status, created_at: created }).where('id', '=', session.id).execute();
  return session.id;
}

beforeAll(async () => {
  svc = await startService();
  token = (await svc.tenant('filtering')).token;
  await svc.tenant('elsewhere');
  ids.set('a', await make('filtering', 'issuance', ['pid', 'mdl'], '2030-01-01T10:00:00.000Z'));
  ids.set('b', await make('filtering', 'issuance', ['mdl'], '2030-01-02T10:00:00.000Z', 'completed'));
  ids.set('c', await make('filtering', 'presentation', ['age-check'], '2030-01-03T10:00:00.000Z', 'completed'));
  ids.set('d', await make('filtering', 'presentation', ['pid'], '2030-01-04T10:00:00.000Z', 'failed'));
  // Same configuration ids and times in another tenant: never listed here.
  ids.set('x', await make('elsewhere', 'issuance', ['pid'], '2030-01-02T10:00:00.000Z', 'completed'));
  ids.set('y', await make('elsewhere', 'presentation', ['age-check'], '2030-01-03T10:00:00.000Z', 'completed'));
});
afterAll(() => svc.stop());

const names = async (query: string) => {
  const reply = await svc.raw('GET', `/api/session?${query}`, { token });
  expect(reply.status, reply.text).toBe(200);
  const page = reply.body as { items: { id: string }[]; total: number };
  const found = page.items.map((s) => [...ids].find(([, id]) => id === s.id)?.[0]);
  expect(page.total).toBe(found.length);
  return found;
};

describe('session list filters', () => {
  it('by configuration: offered (issuance, any of several) or requested (presentation)', async () => {
    expect(await names('configurationId=mdl')).toEqual(['b', 'a']);
    expect(await names('configurationId=pid')).toEqual(['d', 'a']);
    expect(await names('configurationId=age-check')).toEqual(['c']);
    expect(await names('configurationId=unknown')).toEqual([]);
    // A prefix of a configuration id is not that configuration.
    expect(await names('configurationId=pi')).toEqual([]);
  });

  it('by creation date: from inclusive, to exclusive, in any offset', async () => {
    expect(await names('createdFrom=2030-01-02T10:00:00.000Z')).toEqual(['d', 'c', 'b']);
    expect(await names('createdTo=2030-01-02T10:00:00Z')).toEqual(['a']);
    expect(await names('createdFrom=2030-01-02T00:00:00Z&createdTo=2030-01-04T00:00:00Z')).toEqual(['c', 'b']);
    // 2030-01-03T12:00+02:00 is 10:00 UTC: c is created at that moment.
    expect(await names(`createdFrom=${encodeURIComponent('2030-01-03T12:00:00+02:00')}`)).toEqual(['d', 'c']);
  });

  it('by id prefix: a whole id finds that session, a prefix the sessions it starts', async () => {
    const a = ids.get('a') ?? '';
    expect(await names(`idPrefix=${a}`)).toEqual(['a']);
    const prefix = a.slice(0, 8);
    const expected = [...ids].filter(([name, id]) => !['x', 'y'].includes(name) && id.startsWith(prefix)).map(([name]) => name);
    expect(await names(`idPrefix=${prefix}`)).toEqual(expected.reverse());
    // Another tenant's id finds nothing here.
    expect(await names(`idPrefix=${ids.get('x')}`)).toEqual([]);
    // Case matters on both databases (substr, not like).
    expect(await names(`idPrefix=${a.toUpperCase()}`)).toEqual(a === a.toUpperCase() ? ['a'] : []);
  });

  it('combines with each other and with status and type', async () => {
    expect(await names('configurationId=pid&type=issuance')).toEqual(['a']);
    expect(await names('configurationId=mdl&status=completed')).toEqual(['b']);
    expect(await names('configurationId=pid&createdFrom=2030-01-03T00:00:00Z&status=failed&type=presentation')).toEqual(['d']);
    expect(await names('status=completed&createdTo=2030-01-03T00:00:00Z')).toEqual(['b']);
    expect(await names(`configurationId=age-check&idPrefix=${ids.get('c')}`)).toEqual(['c']);
    expect(await names(`configurationId=mdl&idPrefix=${ids.get('c')}`)).toEqual([]);
  });

  it('pages over the filtered sessions', async () => {
    const reply = await svc.call('GET', '/api/session?configurationId=pid&pageSize=1&page=2', { token });
    expect(reply.body).toMatchObject({ total: 2, totalPages: 2, page: 2 });
    expect(reply.body.items.map((s) => s.id)).toEqual([ids.get('a')]);
  });

  it.each([
    ['createdFrom=yesterday', 'query.createdFrom'],
    ['createdFrom=2030-01-01', 'query.createdFrom'],
    ['createdTo=2030-13-01T00:00:00Z', 'query.createdTo'],
    ['idPrefix=abc%25', 'query.idPrefix'],
    ['idPrefix=', 'query.idPrefix'],
    ['configurationId=', 'query.configurationId'],
    [`configurationId=${'x'.repeat(201)}`, 'query.configurationId'],
  ])('answers 400 naming the field for %s', async (query, field) => {
    const reply = await svc.call('GET', `/api/session?${query}`, { token });
    expect(reply.status).toBe(400);
    expect(fieldsOf(reply)).toContain(field);
  });
});
