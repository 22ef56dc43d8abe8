// The registrar configuration of a tenant: stored only after its credentials log in at the
// registrar's identity provider, secrets write-only and encrypted at rest, other tenants'
// invisible; and the registrar's schema metadata catalog as the verifier sees it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, fieldsOf, problemOf } from '../support/problems.js';
import { type RegistrarFake, startRegistrarFake } from '../support/registrar-fake.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let registrar: RegistrarFake;
let token: string;

const PASSWORD = 'correct horse battery staple';
const configFor = (fake: RegistrarFake, extra: Record<string, unknown> = {}) => ({
  registrarUrl: fake.url,
  oidcUrl: fake.oidcUrl,
  clientId: 'swagger',
  username: 'rp-operator',
  password: PASSWORD,
  ...extra,
});

beforeAll(async () => {
  svc = await startService();
  registrar = await startRegistrarFake({ username: 'rp-operator', password: PASSWORD, clientId: 'swagger' });
  token = (await svc.tenant('registered', ['registrar:manage', 'presentation:manage'])).token;
});
afterAll(async () => {
  await svc.stop();
  await registrar.stop();
});

describe('registrar configuration', () => {
  it('is refused without registrar:manage, and absent until created', async () => {
    const other = (await svc.tenant('no-registrar-role', ['issuance:manage'])).token;
    expectProblem(await svc.call('GET', '/api/registrar/config', { token: other }), 403);
    expectProblem(await svc.call('POST', '/api/registrar/config', { token: other, body: configFor(registrar) }), 403);
    expectProblem(await svc.call('GET', '/api/registrar/config', { token }), 404);
  });

  it('stores nothing when the credentials do not log in, naming the field', async () => {
    const before = registrar.grants.length;
    const reply = await svc.call('POST', '/api/registrar/config', { token, body: configFor(registrar, { password: 'wrong' }) });
    expectProblem(reply, 400);
    expect(fieldsOf(reply)).toEqual(['body.password']);
    expect(problemOf(reply).detail).toContain('Failed to authenticate with registrar: Invalid user credentials');
    expect(registrar.grants.length).toBe(before + 1);
    expectProblem(await svc.call('GET', '/api/registrar/config', { token }), 404);
    const invalid = await svc.call('POST', '/api/registrar/config', { token, body: { ...configFor(registrar), registrarUrl: 'ftp://x' } });
    expectProblem(invalid, 400);
    expect(fieldsOf(invalid)).toContain('body.registrarUrl');
  });

  it('names oidcUrl when its host does not exist, and stores nothing', async () => {
    const reply = await svc.call('POST', '/api/registrar/config', {
      token,
      body: configFor(registrar, { oidcUrl: 'http://no-such-host.invalid/realms/registrar' }),
    });
    expectProblem(reply, 400);
    expect(fieldsOf(reply)).toEqual(['body.oidcUrl']);
    expectProblem(await svc.call('GET', '/api/registrar/config', { token }), 404);
  });

  it('logs in, then stores the configuration with its password encrypted and never returned', async () => {
    const reply = await svc.call('POST', '/api/registrar/config', {
      token,
      body: configFor(registrar, { registrationCertificateDefaults: { privacy_policy: 'https://rp.example.com/privacy' } }),
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({
      registrarUrl: registrar.url,
      oidcUrl: registrar.oidcUrl,
      clientId: 'swagger',
      username: 'rp-operator',
      hasPassword: true,
      hasClientSecret: false,
    });
    expect(JSON.stringify(reply.body)).not.toContain(PASSWORD);
    const grant = registrar.grants.at(-1) as URLSearchParams;
    expect(Object.fromEntries(grant)).toEqual({
      grant_type: 'password',
      username: 'rp-operator',
      password: PASSWORD,
      client_id: 'swagger',
    });

    const row = await svc.db.selectFrom('registrar_configs').selectAll().where('tenant_id', '=', 'registered').executeTakeFirstOrThrow();
    expect(row.document).not.toContain(PASSWORD);
    expect((await svc.call('GET', '/api/registrar/config', { token })).body.hasPassword).toBe(true);
    // Another tenant sees no configuration.
    const other = (await svc.tenant('unregistered', ['registrar:manage', 'presentation:manage'])).token;
    expectProblem(await svc.call('GET', '/api/registrar/config', { token: other }), 404);
  });

  it('tests the login again only when a credential field changes', async () => {
    const before = registrar.grants.length;
    const defaults = await svc.call('PATCH', '/api/registrar/config', {
      token,
      body: { registrationCertificateDefaults: { support_uri: 'https://rp.example.com/help' } },
    });
    expect(defaults.status, defaults.text).toBe(200);
    expect(defaults.body.registrationCertificateDefaults).toEqual({ support_uri: 'https://rp.example.com/help' });
    expect(registrar.grants.length).toBe(before);
    const refused = await svc.call('PATCH', '/api/registrar/config', { token, body: { username: 'someone-else' } });
    expectProblem(refused, 400);
    expect(registrar.grants.length).toBe(before + 1);
    expect((await svc.call('GET', '/api/registrar/config', { token })).body.username).toBe('rp-operator');
  });

  it("answers 502 when the registrar's identity provider cannot be reached", async () => {
    const reply = await svc.call('POST', '/api/registrar/config', {
      token,
      body: configFor(registrar, { oidcUrl: 'http://127.0.0.1:9/realms/x' }),
    });
    expectProblem(reply, 502);
    expect(problemOf(reply).detail).toContain('could not be reached');
  });
});

describe("the registrar's schema metadata catalog", () => {
  it("lists the registrar's entries, is empty without a registrar, and passes a registrar failure on as 502", async () => {
    registrar.catalog = [{ id: 'pid', version: '1.0.0' }];
    const listed = await svc.call('GET', '/api/verifier/config/schema-metadata/catalog', { token });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body).toEqual([{ id: 'pid', version: '1.0.0' }]);
    const other = (await svc.tenant('catalog-less', ['presentation:manage'])).token;
    expect((await svc.call('GET', '/api/verifier/config/schema-metadata/catalog', { token: other })).body).toEqual([]);
    registrar.catalog = 503;
    const failed = await svc.call('GET', '/api/verifier/config/schema-metadata/catalog', { token });
    expectProblem(failed, 502);
    expect(problemOf(failed).detail).toContain('catalog unavailable');
    registrar.catalog = [];
  });

  it('deletes the configuration', async () => {
    expect((await svc.call('DELETE', '/api/registrar/config', { token })).status).toBe(204);
    expectProblem(await svc.call('GET', '/api/registrar/config', { token }), 404);
    expect((await svc.call('GET', '/api/verifier/config/schema-metadata/catalog', { token })).body).toEqual([]);
  });
});
