// Input that no route schema speaks of: nesting depth, NUL characters, and arrays of thousands of
// wrong items. Each is a 400 naming the field on both databases, never a 500 or a giant reply.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, fieldsOf, problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let admin: string;
beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
});
afterAll(() => svc.stop());

const DCQL = { credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] } }] };
const deep = (levels: number) => `${'{"a":'.repeat(levels)}null${'}'.repeat(levels)}`;
const raw = (method: string, path: string, body: string, token = admin) =>
  svc.raw(method, path, { token, body, headers: { 'content-type': 'application/json' } });

describe('nesting depth', () => {
  it('refuses a value nested 5,000 levels deep with a 400 naming its member, and stores nothing', async () => {
    const reply = await raw(
      'POST',
      '/api/verifier/config',
      `{"id":"deep","dcql_query":${JSON.stringify(DCQL)},"registration_cert":${deep(5_000)}}`,
    );
    expectProblem(reply, 400);
    expect(problemOf(reply).errors).toEqual([{ field: 'body.registration_cert', message: 'nests deeper than 64 levels' }]);
    expect((await svc.call('GET', '/api/verifier/config/deep', { token: admin })).status).toBe(404);
  });

  it('refuses a deep top-level array, and answers a protocol endpoint in the OAuth shape', async () => {
    const array = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
    const management = await raw('PUT', '/api/issuer/config', array);
    expectProblem(management, 400);
    expect(fieldsOf(management)).toEqual(['body.0']);
    const protocol = await svc.raw('POST', '/issuers/acme/notification', { body: array, headers: { 'content-type': 'application/json' } });
    expect(protocol.status).toBe(400);
    expect(protocol.body).toEqual({ error: 'invalid_request', error_description: 'body.0: nests deeper than 64 levels' });
  });

  it('accepts a value nested within the bound', async () => {
    const reply = await raw(
      'POST',
      '/api/verifier/config',
      `{"id":"nested","dcql_query":${JSON.stringify(DCQL)},"registration_cert":${deep(60)}}`,
    );
    expect(reply.status, reply.text).toBe(201);
  });
});

describe('NUL characters', () => {
  it('refuses NUL in a body string, in a body key, in a path id and in a query value, naming each', async () => {
    const cases = [
      [
        await svc.call('POST', '/api/key-chain', {
          token: admin,
          body: { usageType: 'access', type: 'standalone', description: 'a\u0000b' },
        }),
        'body.description',
      ],
      [
        await svc.raw('PATCH', '/api/key-chain/default-access', { token: admin, body: { 'desc\u0000ription': 'x' } }),
        'body.desc\\u0000ription',
      ],
      [await svc.call('GET', '/api/key-chain/a%00b', { token: admin }), 'params.id'],
      [await svc.call('GET', '/api/key-chain?usageType=%00', { token: admin }), 'query.usageType'],
      [await svc.call('POST', '/api/tenant', { token: await svc.rootToken(), body: { id: 'nul', name: '\u0000' } }), 'body.name'],
    ] as const;
    for (const [reply, field] of cases) {
      expectProblem(reply, 400);
      expect(fieldsOf(reply), field).toEqual([field]);
    }
    const described = await svc.db.selectFrom('key_chains').select('id').where('description', 'like', 'a%b').execute();
    expect(described).toEqual([]);
    expect(await svc.db.selectFrom('tenants').select('id').where('id', '=', 'nul').execute()).toEqual([]);
  });

  it('answers NUL in a protocol path or form in the OAuth shape', async () => {
    const path = await svc.raw('GET', '/issuers/a%00b/jwks.json');
    expect(path.status).toBe(400);
    expect(path.body).toEqual({
      error: 'invalid_request',
      error_description: 'params.tenantId: must not contain a NUL character (U+0000)',
    });
    const form = await svc.raw('POST', '/issuers/acme/token', {
      form: { grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code', 'pre-authorized_code': 'a\u0000b' },
    });
    expect(form.status).toBe(400);
    expect(form.body.error).toBe('invalid_request');
    expect(form.body.error_description).toContain('body.pre-authorized_code');
  });
});

describe('lone surrogates', () => {
  it('refuses a string that is not well-formed Unicode, which no certificate name can encode', async () => {
    const reply = await svc.call('POST', '/api/key-chain', {
      token: admin,
      body: { id: 'surrogate', usageType: 'access', type: 'standalone', subject: { commonName: 'ok', organization: 'a\ud800' } },
    });
    expectProblem(reply, 400);
    expect(problemOf(reply).errors).toEqual([
      { field: 'body.subject.organization', message: 'must not contain a lone surrogate (not well-formed Unicode)' },
    ]);
    expect((await svc.call('GET', '/api/key-chain/surrogate', { token: admin })).status).toBe(404);
    const paired = await svc.call('POST', '/api/key-chain', {
      token: admin,
      body: {
        id: 'paired',
        usageType: 'access',
        type: 'standalone',
        subject: { commonName: 'ok', organization: 'Emoji \ud83d\ude00 GmbH' },
      },
    });
    expect(paired.status, paired.text).toBe(201);
    expect(paired.body.subject.organization).toBe('Emoji 😀 GmbH');
  });
});

describe('arrays of many wrong items', () => {
  it('names the first 20 offending items and counts the rest, instead of a reply of megabytes', async () => {
    await svc.client(admin, 'many-roles', ['issuance:offer']);
    const roles = new Array(1_000).fill('x');
    const reply = await svc.call('PATCH', '/api/client/many-roles', { token: admin, body: { roles } });
    expectProblem(reply, 400);
    expect(fieldsOf(reply)).toEqual(Array.from({ length: 20 }, (_, i) => `body.roles.${i}`));
    expect(problemOf(reply).detail).toMatch(/; and 980 more$/);
    expect(reply.text.length).toBeLessThan(10_000);
  });

  it('refuses an offer naming more than 100 configurations before looking any up', async () => {
    const reply = await svc.call('POST', '/api/issuer/offer', {
      token: admin,
      body: { response_type: 'uri', flow: 'pre_authorized_code', credentialConfigurationIds: new Array(100_000).fill('pid') },
    });
    expectProblem(reply, 400);
    expect(fieldsOf(reply)).toEqual(['body.credentialConfigurationIds']);
  });
});
