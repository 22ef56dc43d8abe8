// Registration certificates of presentation configurations: obtained from the registrar for the
// DCQL query, cached until shortly before they expire, reissued on demand, and sent to wallets in
// the signed request object's verifier_info (OpenID4VP 1.0 section 5.1).
import { createPublicKey } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveRequest } from '../support/presenter.js';
import { expectProblem, problemOf } from '../support/problems.js';
import { type RegistrarFake, startRegistrarFake } from '../support/registrar-fake.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let registrar: RegistrarFake;
let token: string;

const ACCOUNT = { username: 'rp-operator', password: 'correct horse battery staple', clientId: 'swagger' };
const DEFAULTS = { privacy_policy: 'https://rp.example.com/privacy', support_uri: 'mailto:help@rp.example.com' };
const QUERY = {
  credentials: [
    {
      id: 'pid',
      format: 'dc+sd-jwt',
      meta: { vct_values: ['urn:eudi:pid:1'] },
      claims: [{ path: ['given_name'] }, { id: 'adult', path: ['age_over_18'], values: [true] }],
    },
    {
      id: 'mdl',
      format: 'mso_mdoc',
      meta: { doctype_value: 'org.iso.18013.5.1.mDL' },
      claims: [{ path: ['org.iso.18013.5.1', 'portrait'] }],
    },
  ],
};
const PURPOSE = [{ lang: 'en', content: 'Check that the customer is an adult' }];

const configPath = (id: string) => `/api/verifier/config/${id}`;
const saveConfig = async (id: string, registration_cert: unknown, extra: Record<string, unknown> = {}) => {
  const reply = await svc.raw('POST', '/api/verifier/config', { token, body: { id, dcql_query: QUERY, registration_cert, ...extra } });
  expect([200, 201], reply.text).toContain(reply.status);
  return reply.body;
};
const offer = (requestId: string, as = token) =>
  svc.raw('POST', '/api/verifier/offer', { token: as, body: { response_type: 'uri', requestId } });
/** The request object of a new request, as a wallet fetches it. */
const requestObject = async (requestId: string) => {
  const reply = await offer(requestId);
  expect(reply.status, reply.text).toBe(201);
  return (await resolveRequest(reply.body.uri)).payload;
};
const creations = () => registrar.certificates.received.filter((c) => c.method === 'POST' && c.path === '/registration-certificates');
const reissue = (id: string, as = token) => svc.raw('POST', `${configPath(id)}/registration-cert/reissue`, { token: as });
/** A registration certificate obtained elsewhere (signed here by the fake registrar's CA), registering `credentials`. */
const givenCertificate = (credentials: unknown[], expiresIn = 3600) =>
  new SignJWT({ credentials })
    .setProtectedHeader({ alg: 'ES256', typ: 'rc-rp+jwt' })
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + expiresIn)
    .sign(registrar.certificates.ca.keys.privateKey);
const REGISTERED = [
  {
    format: 'dc+sd-jwt',
    meta: { vct_values: ['urn:eudi:pid:1'] },
    claims: [{ path: ['given_name'] }, { path: ['age_over_18'] }, { path: ['family_name'] }],
  },
  { format: 'mso_mdoc', meta: { doctype_value: 'org.iso.18013.5.1.mDL' } },
];

beforeAll(async () => {
  svc = await startService();
  registrar = await startRegistrarFake(ACCOUNT);
  token = (await svc.tenant('rp')).token;
  const config = await svc.call('POST', '/api/registrar/config', {
    token,
    body: { registrarUrl: registrar.url, oidcUrl: registrar.oidcUrl, ...ACCOUNT, registrationCertificateDefaults: DEFAULTS },
  });
  expect(config.status, config.text).toBe(200);
});
afterAll(async () => {
  await svc.stop();
  await registrar.stop();
});

describe('a registration certificate requested with body', () => {
  it('is obtained for the DCQL query when the first request is made, and sent in verifier_info', async () => {
    const saved = await saveConfig('kyc', { body: { purpose: PURPOSE } });
    expect(saved.registrationCertCache).toBeNull();
    expect(creations()).toHaveLength(0); // obtained when needed, not on save

    const payload = await requestObject('kyc');
    const [created] = creations();
    const [party] = registrar.certificates.relyingParties;
    expect(created?.authorization).toMatch(/^Bearer registrar-token-\d+$/);
    expect(created?.body).toEqual({
      ...DEFAULTS,
      purpose: PURPOSE,
      rpId: party?.id,
      credentials: [
        { format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] }, claims: [{ path: ['given_name'] }, { path: ['age_over_18'] }] },
        { format: 'mso_mdoc', meta: { doctype_value: 'org.iso.18013.5.1.mDL' }, claims: [{ path: ['org.iso.18013.5.1', 'portrait'] }] },
      ],
    });
    const [certificate] = registrar.certificates.registrationCertificates;
    expect(payload.verifier_info).toEqual([{ format: 'registration_cert', data: certificate?.jwt }]);

    // The JWT is the registrar's, signed by its CA.
    const jwt = certificate?.jwt as string;
    expect(decodeProtectedHeader(jwt).typ).toBe('rc-rp+jwt');
    await jwtVerify(jwt, createPublicKey(registrar.certificates.ca.certificate.toString('pem')));

    const cache = (await svc.raw('GET', configPath('kyc'), { token })).body.registrationCertCache;
    expect(cache).toEqual({
      jwt,
      id: certificate?.id,
      issuedAt: new Date((decodeJwt(jwt).iat as number) * 1000).toISOString(),
      expiresAt: new Date((decodeJwt(jwt).exp as number) * 1000).toISOString(),
      obtainedAt: expect.any(String),
      fingerprint: expect.any(String),
    });
  });

  it('is reused from the cache: the next request makes no registrar call', async () => {
    const before = registrar.certificates.received.length;
    const payload = await requestObject('kyc');
    expect(registrar.certificates.received.length).toBe(before);
    expect(payload.verifier_info).toEqual([{ format: 'registration_cert', data: registrar.certificates.registrationCertificates[0]?.jwt }]);
  });

  it('is obtained again when it is about to expire, and when the DCQL query changes', async () => {
    await svc.db
      .updateTable('presentation_configs')
      .set({
        registration_cert_cache: JSON.stringify({
          ...(await svc.raw('GET', configPath('kyc'), { token })).body.registrationCertCache,
          expiresAt: new Date(Date.now() + 30_000).toISOString(),
        }),
      })
      .where('tenant_id', '=', 'rp')
      .where('id', '=', 'kyc')
      .execute();
    // Written behind the service's back, as another instance would: seen once this instance's copy of
    // the configuration has expired (PRESENTATION_CONFIG_CACHE_MS).
    await expect
      .poll(async () => {
        await requestObject('kyc');
        return creations().length;
      })
      .toBe(2);
    await requestObject('kyc');
    expect(creations()).toHaveLength(2);

    const narrower = { credentials: [QUERY.credentials[0]] };
    expect((await svc.raw('PATCH', configPath('kyc'), { token, body: { dcql_query: narrower } })).status).toBe(200);
    const payload = await requestObject('kyc');
    expect(creations()).toHaveLength(3);
    expect((creations()[2]?.body as { credentials?: unknown[] } | undefined)?.credentials).toHaveLength(1);
    expect(payload.verifier_info[0].data).toBe(registrar.certificates.registrationCertificates[2]?.jwt);
    expect((await svc.raw('PATCH', configPath('kyc'), { token, body: { dcql_query: QUERY } })).status).toBe(200);
  });

  it('is reissued on demand, bypassing the cache; later requests carry the new one', async () => {
    const before = (await svc.raw('GET', configPath('kyc'), { token })).body.registrationCertCache;
    const reply = await reissue('kyc');
    expect(reply.status, reply.text).toBe(200);
    const latest = registrar.certificates.registrationCertificates.at(-1);
    expect(reply.body.registrationCertCache.jwt).toBe(latest?.jwt);
    expect(reply.body.registrationCertCache.jwt).not.toBe(before?.jwt);
    const count = creations().length;
    expect((await requestObject('kyc')).verifier_info).toEqual([{ format: 'registration_cert', data: latest?.jwt }]);
    expect(creations()).toHaveLength(count);
  });

  it('fails the request with 502 naming the registrar message when the registrar refuses or is down; no session is made', async () => {
    await saveConfig('kyc', { body: { purpose: [{ lang: 'de', content: 'Volljährigkeit' }] } }); // a new request: the cache is cleared
    const sessions = async () => (await svc.db.selectFrom('sessions').select('id').where('tenant_id', '=', 'rp').execute()).length;
    const before = await sessions();
    registrar.certificates.failures.set('POST /registration-certificates', 400);
    registrar.certificates.failureMessage = 'privacy_policy must be reachable';
    try {
      const refused = await offer('kyc');
      expectProblem(refused, 502);
      expect(problemOf(refused).detail).toBe(
        "no registration certificate for presentation configuration 'kyc': the registrar answered 400: privacy_policy must be reachable",
      );
      registrar.certificates.failures.set('POST /registration-certificates', 503);
      expectProblem(await reissue('kyc'), 502);
    } finally {
      registrar.certificates.failures.clear();
    }
    expect(await sessions()).toBe(before);
    await svc.call('PATCH', '/api/registrar/config', { token, body: { registrarUrl: 'http://127.0.0.1:9' } });
    try {
      const down = await offer('kyc');
      expectProblem(down, 502);
      expect(problemOf(down).detail).toContain('the registrar could not be reached');
    } finally {
      await svc.call('PATCH', '/api/registrar/config', { token, body: { registrarUrl: registrar.url } });
    }
    expect((await offer('kyc')).status).toBe(201);
  });

  it('says what is missing when neither the request nor the defaults give a privacy policy', async () => {
    await svc.call('PATCH', '/api/registrar/config', { token, body: { registrationCertificateDefaults: null } });
    try {
      await saveConfig('bare', {});
      const reply = await offer('bare');
      expectProblem(reply, 409);
      expect(problemOf(reply).detail).toContain('lacks privacy_policy and support_uri');
    } finally {
      await svc.call('PATCH', '/api/registrar/config', { token, body: { registrationCertificateDefaults: DEFAULTS } });
    }
    // With the defaults back, an empty request is the defaults alone; the description is the purpose.
    await saveConfig('bare', {}, { description: 'Age check at the counter' });
    await requestObject('bare');
    expect(creations().at(-1)?.body).toMatchObject({ ...DEFAULTS, purpose: [{ lang: 'en', content: 'Age check at the counter' }] });
  });
});

describe('a registration certificate given as jwt or id', () => {
  it('sends a jwt as given, without calling the registrar, and has nothing to reissue', async () => {
    const jwt = await givenCertificate(REGISTERED);
    await saveConfig('given', { jwt });
    const before = registrar.certificates.received.length;
    expect((await requestObject('given')).verifier_info).toEqual([{ format: 'registration_cert', data: jwt }]);
    expect(registrar.certificates.received.length).toBe(before);
    expectProblem(await reissue('given'), 409);

    // One that expires after it was saved is not sent.
    await saveConfig('given', { jwt: await givenCertificate(REGISTERED, 1) });
    svc.clock.advance(1_100);
    const expired = await offer('given');
    expectProblem(expired, 409);
    expect(problemOf(expired).detail).toContain('(registration_cert.jwt) expired at');
  });

  it('reuses the active certificate of that id the registrar lists', async () => {
    const listed = registrar.certificates.registrationCertificates[0];
    await saveConfig('by-id', { id: listed?.id });
    const count = creations().length;
    expect((await requestObject('by-id')).verifier_info).toEqual([{ format: 'registration_cert', data: listed?.jwt }]);
    expect(creations()).toHaveLength(count);
    const [party] = registrar.certificates.relyingParties;
    expect(registrar.certificates.received.at(-1)).toMatchObject({ method: 'GET', path: `/registration-certificates?rp=${party?.id}` });

    await saveConfig('by-id', { id: 'unknown' });
    const unknown = await offer('by-id');
    expectProblem(unknown, 409);
    expect(problemOf(unknown).detail).toContain("no active registration certificate 'unknown'");
    // With a body to fall back on, a new one is requested.
    await saveConfig('by-id', { id: 'unknown', body: { purpose: PURPOSE } });
    expect((await requestObject('by-id')).verifier_info[0].data).toBe(registrar.certificates.registrationCertificates.at(-1)?.jwt);
    expect(creations()).toHaveLength(count + 1);
  });

  it('puts the attachments of the configuration after the registration certificate', async () => {
    const attached = [{ format: 'policy', data: { url: 'https://rp.example.com/policy' }, credential_ids: ['pid'] }];
    const jwt = await givenCertificate(REGISTERED);
    await saveConfig('attached', { jwt }, { attached });
    expect((await requestObject('attached')).verifier_info).toEqual([{ format: 'registration_cert', data: jwt }, ...attached]);
  });

  it('refuses a given jwt that is expired, registers nothing, or does not register what the query asks for', async () => {
    const narrow = [REGISTERED[0]];
    const fewerClaims = [{ ...REGISTERED[0], claims: [{ path: ['given_name'] }] }, REGISTERED[1]];
    const otherType = [{ ...REGISTERED[0], meta: { vct_values: ['urn:other'] } }, REGISTERED[1]];
    for (const [jwt, message] of [
      [await givenCertificate(REGISTERED, -10), 'expired at'],
      [await givenCertificate([]), 'has no credentials claim'],
      [await givenCertificate(narrow), "dcql_query.credentials.1 ('mdl')"],
      [await givenCertificate(fewerClaims), "dcql_query.credentials.0 ('pid')"],
      [await givenCertificate(otherType), "dcql_query.credentials.0 ('pid')"],
      ['eyJhbGciOiJFUzI1NiJ9.bm90IGpzb24.c2ln', 'not a JSON object'],
    ] as [string, string][]) {
      const reply = await svc.call('POST', '/api/verifier/config', {
        token,
        body: { id: 'overasking', dcql_query: QUERY, registration_cert: { jwt } },
      });
      expectProblem(reply, 400);
      expect(problemOf(reply).errors).toEqual([{ field: 'body.registration_cert.jwt', message: expect.stringContaining(message) }]);
    }
  });

  it("judges a given jwt's exp by the service's clock when the configuration is saved", async () => {
    const jwt = await givenCertificate(REGISTERED, 30);
    await saveConfig('clocked', { jwt });
    svc.clock.advance(31_000);
    const reply = await svc.call('POST', '/api/verifier/config', {
      token,
      body: { id: 'clocked', dcql_query: QUERY, registration_cert: { jwt } },
    });
    expectProblem(reply, 400);
    expect(problemOf(reply).errors).toEqual([{ field: 'body.registration_cert.jwt', message: expect.stringContaining('expired at') }]);
  });

  it('refuses a malformed request when the configuration is saved', async () => {
    for (const registration_cert of [
      { jwt: 'not a jwt' },
      { id: '' },
      { body: { privacy_policy: 'ftp://x' } },
      { body: { purpose: [] } },
    ]) {
      const reply = await svc.raw('POST', '/api/verifier/config', { token, body: { id: 'bad', dcql_query: QUERY, registration_cert } });
      expectProblem(reply, 400);
      expect(reply.body.errors[0].field).toMatch(/^body\.registration_cert\./);
    }
  });
});

describe('access', () => {
  it('needs presentation:manage for a reissue, and another tenant sees no configuration', async () => {
    const requester = await svc.client(token, 'requester', ['presentation:request']);
    expectProblem(await reissue('kyc', requester), 403);
    const other = (await svc.tenant('other', ['presentation:manage', 'presentation:request'])).token;
    expectProblem(await reissue('kyc', other), 404);
    const foreign = await offer('kyc', other);
    expectProblem(foreign, 400);
    expectProblem(await reissue('nope'), 404);
  });

  it('is a 409 when the tenant has no registrar', async () => {
    const other = (await svc.tenant('unregistered', ['presentation:manage', 'presentation:request'])).token;
    const reply = await svc.call('POST', '/api/verifier/config', {
      token: other,
      body: { id: 'kyc', dcql_query: QUERY, registration_cert: {} },
    });
    expect(reply.status, reply.text).toBe(201);
    const refused = await offer('kyc', other);
    expectProblem(refused, 409);
    expect(problemOf(refused).detail).toContain('no registrar configured');
    expectProblem(await reissue('kyc', other), 409);
  });
});
