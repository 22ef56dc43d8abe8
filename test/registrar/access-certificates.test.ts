// Access certificates from the registrar: the relying party registered when there is none, a real
// certificate issued for the key chain's key and stored on it, and request objects signed under it
// (x5c, x509_hash client id), checked independently of the service and of the wallet library.
import { createHash, createPublicKey, X509Certificate } from 'node:crypto';
import { compactVerify, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveRequest } from '../support/presenter.js';
import { expectProblem, fieldsOf, problemOf } from '../support/problems.js';
import { type RegistrarFake, startRegistrarFake } from '../support/registrar-fake.js';
import { startService, type TestService } from '../support/service.js';

let svc: TestService;
let registrar: RegistrarFake;
let token: string;

const ACCOUNT = { username: 'rp-operator', password: 'correct horse battery staple', clientId: 'swagger' };
const QUERY = {
  credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] }, claims: [{ path: ['given_name'] }] }],
};

const issue = (body?: unknown, as = token) => svc.raw('POST', '/api/registrar/access-certificate', { token: as, body });
/** The service's calls (the fake's own test calls it without a valid token). */
const calls = (method: string, path: string) =>
  registrar.certificates.received.filter(
    (c) => c.method === method && c.path === path && registrar.tokens.has(c.authorization?.slice(7) ?? ''),
  );
const derOf = (pem: string) => Buffer.from(new X509Certificate(pem).raw);

beforeAll(async () => {
  svc = await startService();
  registrar = await startRegistrarFake(ACCOUNT);
  token = (await svc.tenant('rp')).token;
  const config = await svc.call('POST', '/api/registrar/config', {
    token,
    body: { registrarUrl: registrar.url, oidcUrl: registrar.oidcUrl, ...ACCOUNT },
  });
  expect(config.status, config.text).toBe(200);
  expect((await svc.call('POST', '/api/verifier/config', { token, body: { id: 'pid', dcql_query: QUERY } })).status).toBe(201);
});
afterAll(async () => {
  await svc.stop();
  await registrar.stop();
});

describe('the registrar fake', () => {
  it('refuses the authenticated certificate endpoints without a bearer token it issued', async () => {
    for (const authorization of [undefined, 'Bearer forged']) {
      const reply = await fetch(`${registrar.url}/access-certificates`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization && { authorization }) },
        body: '{}',
      });
      expect(reply.status).toBe(401);
    }
    expect((await fetch(`${registrar.url}/relying-parties`)).status).toBe(401);
  });
});

describe('POST /api/registrar/access-certificate', () => {
  it('is refused without registrar:manage, and checks its input before calling the registrar', async () => {
    const presentation = await svc.client(token, 'presentation-only', ['presentation:manage']);
    expectProblem(await issue(undefined, presentation), 403);
    const before = registrar.certificates.received.length;
    const unknown = await issue({ keyChainId: 'nope' });
    expectProblem(unknown, 400);
    expect(fieldsOf(unknown)).toEqual(['body.keyChainId']);
    const wrongUsage = await issue({ keyChainId: 'default-attestation' });
    expectProblem(wrongUsage, 400);
    expect(problemOf(wrongUsage).detail).toContain('usage type attestation');
    expect(fieldsOf(await issue({ keyChainId: 7 }))).toEqual(['body.keyChainId']);
    expect(fieldsOf(await issue({ other: true }))).toEqual(['body.other']);
    expect(registrar.certificates.received.length).toBe(before);
  });

  it('is a 409 for a tenant without a registrar', async () => {
    const other = (await svc.tenant('no-registrar', ['registrar:manage'])).token;
    const reply = await issue({}, other);
    expectProblem(reply, 409);
    expect(problemOf(reply).detail).toContain('no registrar configured');
  });

  it('registers the relying party, obtains a certificate for the default access key and stores it on the chain', async () => {
    const before = (await svc.call('GET', '/api/key-chain/default-access', { token })).body;
    const reply = await issue();
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.id).toBe('default-access');

    // What the registrar received: a relying party made (none existed), then the chain's public key.
    expect(calls('GET', '/relying-parties')).toHaveLength(1);
    expect(calls('POST', '/relying-parties').map((c) => c.body)).toEqual([{}]);
    const [request] = calls('POST', '/access-certificates');
    const [party] = registrar.certificates.relyingParties;
    expect(request?.authorization).toMatch(/^Bearer registrar-token-\d+$/);
    expect(request?.body).toEqual({
      publicKey: expect.stringContaining('-----BEGIN PUBLIC KEY-----'),
      dns: ['127.0.0.1'],
      rpId: party?.id,
    });
    const submitted = createPublicKey(String((request?.body as { publicKey?: string } | undefined)?.publicKey));
    expect(submitted.equals(createPublicKey({ key: before.activeJwk, format: 'jwk' }))).toBe(true);

    // Stored: the registrar's certificate, for the same key, issued by the registrar's CA.
    const [issued] = registrar.certificates.accessCertificates;
    expect(derOf(reply.body.activeCertificate)).toEqual(derOf(issued?.certificate as string));
    expect(reply.body.activeJwk).toEqual(before.activeJwk);
    const leaf = new X509Certificate(reply.body.activeCertificate);
    expect(leaf.verify(createPublicKey(registrar.certificates.ca.certificate.toString('pem')))).toBe(true);
    expect(leaf.subjectAltName).toBe('DNS:127.0.0.1');
    expect((await svc.call('GET', '/api/key-chain/default-access', { token })).body.activeCertificate).toBe(reply.body.activeCertificate);
  });

  it('signs request objects with the registrar-issued certificate: x5c carries it and the x509_hash client id is its hash', async () => {
    const chain = (await svc.raw('GET', '/api/key-chain/default-access', { token })).body;
    const der = derOf(chain.activeCertificate);
    const offer = await svc.raw('POST', '/api/verifier/offer', { token, body: { response_type: 'uri', requestId: 'pid' } });
    expect(offer.status, offer.text).toBe(201);
    const expectedClientId = `x509_hash:${createHash('sha256').update(der).digest('base64url')}`;
    expect(new URL(offer.body.uri).searchParams.get('client_id')).toBe(expectedClientId);

    const jwt = await (await fetch(offer.body.requestUri)).text();
    const header = decodeProtectedHeader(jwt);
    expect(header.x5c?.[0]).toBe(der.toString('base64'));
    // Independently of the service's and the wallet library's code: node:crypto reads the
    // certificate, jose checks the signature with its key.
    const { payload } = await compactVerify(jwt, new X509Certificate(der).publicKey);
    expect(JSON.parse(Buffer.from(payload).toString()).client_id).toBe(expectedClientId);

    // And a wallet library accepts it.
    const another = await svc.raw('POST', '/api/verifier/offer', { token, body: { response_type: 'uri', requestId: 'pid' } });
    expect((await resolveRequest(another.body.uri)).clientId).toBe(expectedClientId);
  });

  it('reuses the registered relying party for the next certificate, of a chain named in the body', async () => {
    const created = await svc.call('POST', '/api/key-chain', {
      token,
      body: { id: 'second-access', usageType: 'access', type: 'standalone' },
    });
    expect(created.status, created.text).toBe(201);
    const reply = await issue({ keyChainId: 'second-access' });
    expect(reply.status, reply.text).toBe(200);
    expect(calls('POST', '/relying-parties')).toHaveLength(1);
    expect(calls('POST', '/access-certificates')).toHaveLength(2);
    expect(new X509Certificate(reply.body.activeCertificate).issuer).toContain('Fake Registrar CA');
  });

  it('stores nothing and answers 502 when the certificate does not certify the key', async () => {
    const before = (await svc.call('GET', '/api/key-chain/second-access', { token })).body;
    registrar.certificates.certifyOtherKey = registrar.certificates.ca.keys.publicKey;
    try {
      const reply = await issue({ keyChainId: 'second-access' });
      expectProblem(reply, 502);
      expect(problemOf(reply).detail).toContain('does not certify this key');
    } finally {
      registrar.certificates.certifyOtherKey = undefined;
    }
    expect((await svc.call('GET', '/api/key-chain/second-access', { token })).body.activeCertificate).toBe(before.activeCertificate);
  });

  it("passes the registrar's refusal and its absence on as 502 with the reason", async () => {
    registrar.certificates.failures.set('POST /access-certificates', 400);
    registrar.certificates.failureMessage = 'publicKey is not an EC key we accept';
    try {
      const refused = await issue();
      expectProblem(refused, 502);
      expect(problemOf(refused).detail).toBe('the registrar answered 400: publicKey is not an EC key we accept');
    } finally {
      registrar.certificates.failures.clear();
    }
    const moved = await svc.call('PATCH', '/api/registrar/config', { token, body: { registrarUrl: 'http://127.0.0.1:9' } });
    expect(moved.status, moved.text).toBe(200);
    try {
      const down = await issue();
      expectProblem(down, 502);
      expect(problemOf(down).detail).toContain('the registrar could not be reached');
    } finally {
      await svc.call('PATCH', '/api/registrar/config', { token, body: { registrarUrl: registrar.url } });
    }
  });
});
