// OpenID4VP 1.0 over the W3C Digital Credentials API (appendix A): the offer carries the signed
// request (openid4vp-v1-signed, expected_origins, response_mode dc_api.jwt); the test wallet
// (@openid4vc/openid4vp's client) resolves it with the browser's origin and encrypts the response;
// the integrator's page posts { response, origin } to the dc-api response endpoint.
import 'reflect-metadata';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MDL_ADULT_QUERY, MDL_DOC_TYPE, MDL_NAMESPACE, mdl as mdlConfiguration, PID, PID_ADULT_QUERY } from '../support/fixtures.js';
import { presentMdoc } from '../support/mdoc-wallet.js';
import { type DcApiRequest, dcApiResponse, presentSdJwt, resolveDcApiRequest } from '../support/presenter.js';
import { startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

const ORIGIN = 'https://shop.example.com';
const DOC_TYPE = MDL_DOC_TYPE;
const NS = MDL_NAMESPACE;
const MDL = mdlConfiguration(['family_name', 'age_over_18']);
const PID_QUERY = PID_ADULT_QUERY;
const MDL_QUERY = MDL_ADULT_QUERY;

let svc: TestService;
let admin: string;
let pid: { credential: string; holder: import('jose').JWK };
let mdl: { credential: string; holder: import('jose').JWK };

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  for (const body of [PID, MDL]) expect((await svc.call('POST', '/api/issuer/credentials', { token: admin, body })).status).toBe(201);
  const trust = await svc.call('POST', '/api/trust-list', {
    token: admin,
    body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
  });
  expect(trust.status, trust.text).toBe(201);
  for (const [id, dcql_query] of [
    ['adult', PID_QUERY],
    ['mdl-check', MDL_QUERY],
  ] as const) {
    const config = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id, dcql_query } });
    expect(config.status, config.text).toBe(201);
  }
  pid = await issueCredential(svc, admin, 'pid', { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true });
  mdl = await issueCredential(svc, admin, 'mdl', { [NS]: { family_name: 'Mustermann', age_over_18: true } });
});
afterAll(() => svc.stop());

interface DcApiOffer {
  session: string;
  uri: string;
  dcApiRequest: DcApiRequest;
  responseUri: string;
}
const offer = async (body: Record<string, unknown> = {}) => {
  const reply = await svc.call('POST', '/api/verifier/offer', {
    token: admin,
    body: { response_type: 'dc-api', requestId: 'adult', expected_origin: ORIGIN, ...body },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as DcApiOffer;
};
const session = (id: string) => svc.running.services.sessions.get('acme', id);
/** What the integrator's page does with the DigitalCredential's data. */
const postBack = (made: DcApiOffer, body: Record<string, unknown>) => svc.raw('POST', new URL(made.responseUri).pathname, { body });

describe('the dc-api offer', () => {
  it('is a signed request for navigator.credentials.get, already fetched', async () => {
    const made = await offer();
    expect(made.dcApiRequest.protocol).toBe('openid4vp-v1-signed');
    expect(made.responseUri).toMatch(/\/presentations\/[\w-]+\/dc-api-response$/);
    const payload = decodeJwt(made.dcApiRequest.data.request);
    expect(payload).toMatchObject({ expected_origins: [ORIGIN], response_mode: 'dc_api.jwt', response_type: 'vp_token' });
    expect(payload.client_id).toMatch(/^x509_hash:/);
    expect(payload).not.toHaveProperty('response_uri');
    expect(payload).not.toHaveProperty('state');
    expect((payload.client_metadata as { jwks: { keys: unknown[] } }).jwks.keys).toHaveLength(1);
    expect(await session(made.session)).toMatchObject({
      status: 'fetched',
      public: { useDcApi: true, dcApiProtocol: 'oid4vp', browserOrigin: ORIGIN, responseMode: 'dc_api.jwt' },
    });
    // never by request_uri
    const requestUri = new URLSearchParams(made.uri.slice('openid4vp://?'.length)).get('request_uri') as string;
    expect((await svc.raw('GET', new URL(requestUri).pathname)).status).toBe(400);
  });

  it('needs expected_origin, an https origin (http outside production)', async () => {
    for (const expected_origin of [undefined, 'https://shop.example.com/page', 'javascript:alert(1)', 'shop.example.com']) {
      const reply = await svc.call('POST', '/api/verifier/offer', {
        token: admin,
        body: { response_type: 'dc-api', requestId: 'adult', ...(expected_origin && { expected_origin }) },
      });
      expect(reply.status, reply.text).toBe(400);
      expect(reply.text).toContain('body.expected_origin');
    }
    await offer({ expected_origin: 'http://localhost:3000' });
  });
});

describe('SD-JWT VC over the DC API', () => {
  it('round trip: the wallet answers the origin, the page posts the response back', async () => {
    const made = await offer();
    const resolved = await resolveDcApiRequest(made.dcApiRequest, ORIGIN);
    const presentation = await presentSdJwt(pid.credential, pid.holder, resolved, ['given_name', 'age_over_18']);
    expect(decodeJwt(presentation.slice(presentation.lastIndexOf('~') + 1)).aud).toBe(`origin:${ORIGIN}`);
    const { response, payload } = await dcApiResponse(resolved, { pid: [presentation] });
    expect(payload.state).toBeUndefined();
    const reply = await postBack(made, { response, origin: ORIGIN });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    const done = await session(made.session);
    expect(done).toMatchObject({ status: 'completed', consumed: true });
    expect(done.private?.credentials).toEqual([
      expect.objectContaining({ queryId: 'pid', format: 'dc+sd-jwt', claims: { given_name: 'Erika', age_over_18: true } }),
    ]);
    // replayed
    expect((await postBack(made, { response, origin: ORIGIN })).status).toBe(400);
  });

  it('the wallet refuses a page at another origin (expected_origins)', async () => {
    const made = await offer();
    await expect(resolveDcApiRequest(made.dcApiRequest, 'https://evil.example.com')).rejects.toThrow(/expected_origins/);
  });

  it('a response posted from another origin is rejected', async () => {
    const made = await offer();
    const resolved = await resolveDcApiRequest(made.dcApiRequest, ORIGIN);
    const presentation = await presentSdJwt(pid.credential, pid.holder, resolved, ['given_name', 'age_over_18']);
    const { response } = await dcApiResponse(resolved, { pid: [presentation] });
    const reply = await postBack(made, { response, origin: 'https://evil.example.com' });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('invalid_request');
    expect(await session(made.session)).toMatchObject({ status: 'failed', errorReason: expect.stringMatching(/origin/) });
  });

  it('a KB-JWT bound to the client_id instead of the origin is rejected', async () => {
    const made = await offer();
    const resolved = await resolveDcApiRequest(made.dcApiRequest, ORIGIN);
    const presentation = await presentSdJwt(pid.credential, pid.holder, resolved, ['given_name', 'age_over_18'], {
      aud: resolved.clientId,
    });
    const { response } = await dcApiResponse(resolved, { pid: [presentation] });
    expect((await postBack(made, { response })).status).toBe(400);
    expect(await session(made.session)).toMatchObject({ status: 'failed', errorReason: expect.stringMatching(/aud/) });
  });

  it('refuses a post without a response, or with an origin that is not a string, naming the field, and leaves the session waiting', async () => {
    const made = await offer();
    for (const [body, field] of [
      [{}, 'response'],
      [{ response: '' }, 'response'],
      [{ response: 'x.y.z.a.b', origin: 42 }, 'origin'],
    ] as const) {
      const reply = await postBack(made, body);
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({
        error: 'invalid_request',
        error_description: expect.stringMatching(new RegExp(`^body\\.${field}: `)),
      });
    }
    expect((await session(made.session)).status).toBe('fetched');
  });

  it('the two endpoints do not mix flows', async () => {
    const made = await offer();
    const resolved = await resolveDcApiRequest(made.dcApiRequest, ORIGIN);
    const presentation = await presentSdJwt(pid.credential, pid.holder, resolved, ['given_name', 'age_over_18']);
    const { response } = await dcApiResponse(resolved, { pid: [presentation] });
    const wrong = await svc.raw('POST', new URL(made.responseUri).pathname.replace(/dc-api-response$/, 'response'), {
      body: { response },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error_description).toBe(
      'this presentation request does not answer here: it was made for the Digital Credentials API (OpenID4VP); post its response to the dc-api-response endpoint',
    );
    expect((await session(made.session)).status).toBe('fetched');
  });
});

describe('mdoc over the DC API', () => {
  it('round trip with the OpenID4VPDCAPIHandover session transcript', async () => {
    const made = await offer({ requestId: 'mdl-check' });
    const resolved = await resolveDcApiRequest(made.dcApiRequest, ORIGIN);
    const { vpToken } = await presentMdoc(resolved, {
      docType: DOC_TYPE,
      namespace: NS,
      elements: ['family_name', 'age_over_18'],
      credential: mdl.credential,
      holder: mdl.holder,
    });
    const { response } = await dcApiResponse(resolved, vpToken);
    const reply = await postBack(made, { response, origin: ORIGIN });
    expect(reply.status, reply.text).toBe(200);
    const done = await session(made.session);
    expect(done.status).toBe('completed');
    expect(done.private?.credentials).toEqual([
      expect.objectContaining({ format: 'mso_mdoc', claims: { [NS]: { family_name: 'Mustermann', age_over_18: true } } }),
    ]);
  });

  it('a device signature over the redirect transcript (client_id, response_uri) is rejected', async () => {
    const made = await offer({ requestId: 'mdl-check' });
    const resolved = await resolveDcApiRequest(made.dcApiRequest, ORIGIN);
    const { vpToken } = await presentMdoc(
      { ...resolved, origin: undefined, responseUri: made.responseUri },
      { docType: DOC_TYPE, namespace: NS, elements: ['family_name', 'age_over_18'], credential: mdl.credential, holder: mdl.holder },
    );
    const { response } = await dcApiResponse(resolved, vpToken);
    expect((await postBack(made, { response, origin: ORIGIN })).status).toBe(400);
    expect(await session(made.session)).toMatchObject({
      status: 'failed',
      errorReason: expect.stringMatching(/device authentication/),
    });
  });
});

describe('CORS for the page that posts the response', () => {
  it('answers the preflight and the post for the session origin only', async () => {
    const created = await offer();
    const preflight = (origin: string) =>
      fetch(created.responseUri, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
    const allowed = await preflight(ORIGIN);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(allowed.headers.get('access-control-allow-methods')).toBe('POST');
    const other = await preflight('https://evil.example.com');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    // A handle of no session: the same answer without CORS, no server error.
    const unknown = await fetch(created.responseUri.replace(/\/presentations\/[^/]+\//, '/presentations/no-such-handle/'), {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
    });
    expect(unknown.status).toBe(204);
    expect(unknown.headers.get('access-control-allow-origin')).toBeNull();
    const posted = await fetch(created.responseUri, {
      method: 'POST',
      headers: { origin: ORIGIN, 'content-type': 'application/json' },
      body: JSON.stringify({ response: 'not-a-jwe' }),
    });
    expect(posted.status).toBe(400);
    expect(posted.headers.get('access-control-allow-origin')).toBe(ORIGIN);
  });
});
