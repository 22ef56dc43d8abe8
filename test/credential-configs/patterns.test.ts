// Field patterns come from API callers and run on a linear-time engine: patterns that make a
// backtracking engine take exponential time are harmless, and what such an engine cannot run
// (backreferences, lookaround) is refused when the configuration is saved.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, fieldsOf, problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let admin: string;

/** Each takes seconds to minutes on a backtracking engine for the short claim, and forever for the long one. */
const CATASTROPHIC = ['^(a+)+$', '(a|aa)+$', '^(a|a?)+$', '(.*a){12}'];
const CLAIMS = { short: `${'a'.repeat(28)}!`, '10 kB': `${'a'.repeat(10_000)}!` };
/** A backtracking engine spends seconds on one of these offers; the linear one needs milliseconds. */
const OFFER_BOUND_MS = 1_000;
/** The liveness probe answers while the offers are processed; a blocked event loop takes seconds. */
const HEALTH_BOUND_MS = 500;

const configId = (i: number) => `catastrophic-${i}`;
const configuration = (id: string, pattern: string) => ({
  id,
  config: { format: 'dc+sd-jwt' },
  vct: `urn:example:${id}`,
  fields: [{ path: ['code'], type: 'string', mandatory: true, constraints: { pattern } }],
});
const create = (body: unknown) => svc.raw('POST', '/api/issuer/credentials', { token: admin, body });
const offer = (id: string, code: string) =>
  svc.raw('POST', '/api/issuer/offer', {
    token: admin,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: [id],
      credentialClaims: { [id]: { type: 'inline', claims: { code } } },
    },
  });
const storedConfigs = () => svc.db.selectFrom('credential_configs').select('id').execute();

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  for (const [i, pattern] of CATASTROPHIC.entries()) {
    const reply = await create(configuration(configId(i), pattern));
    expect(reply.status, reply.text).toBe(201);
  }
});
afterAll(() => svc.stop());

describe('catastrophic patterns', () => {
  const cases = CATASTROPHIC.flatMap((pattern, i) => Object.entries(CLAIMS).map(([size, code]) => [pattern, size, i, code] as const));

  it.each(cases)('%s against a %s claim is decided in milliseconds', async (pattern, _size, i, code) => {
    const started = performance.now();
    const reply = await offer(configId(i), code);
    const elapsed = performance.now() - started;
    if (pattern === '(.*a){12}') {
      expect(reply.status, reply.text).toBe(201);
    } else {
      expectProblem(reply, 400);
      expect(problemOf(reply).errors).toEqual([
        { field: `body.credentialClaims.${configId(i)}.claims.code`, message: `must match ${pattern}` },
      ]);
    }
    expect(elapsed).toBeLessThan(OFFER_BOUND_MS);
  });

  it('keep GET /health answering while offers with them are processed concurrently', async () => {
    const offers = cases.map(([, , i, code]) => offer(configId(i), code));
    const started = performance.now();
    const health = await svc.raw('GET', '/health');
    const healthMs = performance.now() - started;
    const replies = await Promise.all(offers);
    expect(health.status).toBe(200);
    expect(replies.map((r) => r.status)).toEqual(cases.map(([pattern]) => (pattern === '(.*a){12}' ? 201 : 400)));
    expect(healthMs).toBeLessThan(HEALTH_BOUND_MS);
  });

  it('still match what they describe', async () => {
    expect((await offer(configId(0), 'aaaa')).status).toBe(201);
    expect((await offer(configId(1), 'xaaa')).status).toBe(201);
    expect((await offer(configId(2), '')).status).toBe(201);
    expect((await offer(configId(3), 'a'.repeat(11))).status).toBe(400);
  });
});

describe('patterns a linear-time engine cannot run', () => {
  it.each([
    ['a backreference', '^(a)\\1$', 'a backreference'],
    ['a named backreference', '^(?<x>a)\\k<x>$', 'a backreference'],
    ['a lookahead', '^(?=.*\\d).{8,}$', 'lookaround'],
    ['a negative lookahead', '^(?!admin).*$', 'lookaround'],
    ['a lookbehind', '(?<=EUR )\\d+', 'lookaround'],
    ['a negative lookbehind', '(?<!-)\\d+', 'lookaround'],
  ])('are refused with 400 naming the field and why: %s', async (_name, pattern, what) => {
    const before = await storedConfigs();
    const reply = await create(configuration('refused', pattern));
    expectProblem(reply, 400);
    expect(fieldsOf(reply)).toEqual(['body.fields.0.constraints.pattern']);
    const [error] = reply.body.errors;
    expect(error.message).toMatch(new RegExp(`^uses ${what}, which patterns cannot: they run on a linear-time engine \\(RE2 syntax\\)`));
    expect(await storedConfigs()).toEqual(before);
  });

  it('are refused on update as well', async () => {
    const reply = await svc.raw('PATCH', `/api/issuer/credentials/${configId(0)}`, {
      token: admin,
      body: { fields: [{ path: ['code'], type: 'string', constraints: { pattern: '(?=a)a' } }] },
    });
    expectProblem(reply, 400);
    expect(fieldsOf(reply)).toEqual(['body.fields.0.constraints.pattern']);
  });

  it('a pattern that is no regular expression is named as such', async () => {
    const reply = await create(configuration('broken', '([a-z'));
    expectProblem(reply, 400);
    expect(problemOf(reply).errors).toEqual([
      { field: 'body.fields.0.constraints.pattern', message: expect.stringMatching(/^is not a valid regular expression: /) },
    ]);
  });

  it('a stored configuration whose pattern is refused now refuses claims instead of issuing them unchecked', async () => {
    const id = 'stored-before';
    expect((await create(configuration(id, '^\\d+$'))).status).toBe(201);
    const row = await svc.db.selectFrom('credential_configs').select('document').where('id', '=', id).executeTakeFirstOrThrow();
    const document = row.document.replace('^\\\\d+$', '^(?!0)\\\\d+$');
    expect(document).not.toBe(row.document);
    await svc.db.updateTable('credential_configs').set({ document }).where('id', '=', id).execute();
    const reply = await offer(id, '12');
    expectProblem(reply, 400);
    expect(reply.body.errors[0].message).toMatch(/^cannot be checked: the configuration's pattern uses lookaround/);
  });
});

describe('ECMAScript syntax', () => {
  it('\\u escapes and named groups mean what they mean in JSON Schema', async () => {
    expect((await create(configuration('escapes', '^[\\u0041-\\u005A]{2}(?<rest>-\\u{1F600})?$'))).status).toBe(201);
    expect((await offer('escapes', 'DE')).status).toBe(201);
    expect((await offer('escapes', 'DE-😀')).status).toBe(201);
    const refused = await offer('escapes', 'de');
    expectProblem(refused, 400);
    expect(fieldsOf(refused)).toEqual(['body.credentialClaims.escapes.claims.code']);
  });
});
