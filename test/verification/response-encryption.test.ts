// Response encryption of the request objects (OpenID4VP 1.0 section 8.3; HAIP 1.0 section 5):
// client_metadata lists A128GCM and A256GCM in encrypted_response_enc_values_supported, and carries
// an ephemeral ECDH-ES P-256 key of this request only; the response endpoint takes a direct_post.jwt
// response encrypted with either. The request object is read and its signature checked with jose
// against the certificate in its x5c; the responses are encrypted with jose.
import { X509Certificate } from 'node:crypto';
import { CompactEncrypt, compactVerify, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PID, PID_ADULT_QUERY } from '../support/fixtures.js';
import { presentSdJwt, type ResolvedRequest } from '../support/presenter.js';
import { startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

let svc: TestService;
let admin: string;
let pid: { credential: string; holder: JWK };

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  expect((await svc.call('POST', '/api/issuer/credentials', { token: admin, body: PID })).status).toBe(201);
  const trust = await svc.call('POST', '/api/trust-list', {
    token: admin,
    body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
  });
  expect(trust.status, trust.text).toBe(201);
  const config = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id: 'adult', dcql_query: PID_ADULT_QUERY } });
  expect(config.status, config.text).toBe(201);
  pid = await issueCredential(svc, admin, 'pid', { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true });
});
afterAll(() => svc?.stop());

/** A new request, its request object fetched and its signature checked by the key of its x5c leaf. */
async function newRequest(body: Record<string, unknown> = {}) {
  const offer = await svc.call('POST', '/api/verifier/offer', {
    token: admin,
    body: { response_type: 'uri', requestId: 'adult', ...body },
  });
  expect(offer.status, offer.text).toBe(201);
  const jwt = await (await fetch(offer.body.requestUri as string)).text();
  const { x5c } = decodeProtectedHeader(jwt);
  const leaf = new X509Certificate(Buffer.from((x5c as string[])[0] as string, 'base64'));
  const { payload } = await compactVerify(jwt, leaf.publicKey);
  return { session: offer.body.session as string, payload: JSON.parse(new TextDecoder().decode(payload)) as Record<string, any> };
}

const resolvedOf = (payload: Record<string, any>): ResolvedRequest => ({
  clientId: payload.client_id,
  nonce: payload.nonce,
  responseUri: payload.response_uri,
  responseMode: payload.response_mode,
  dcqlQuery: payload.dcql_query,
  transactionData: [],
  payload,
});

describe('response encryption of direct_post.jwt requests', () => {
  it('lists A128GCM and A256GCM, with a fresh ECDH-ES P-256 key in each request', async () => {
    const requests = await Promise.all([newRequest(), newRequest(), newRequest()]);
    const keys = requests.map(({ payload }) => {
      expect(payload.response_mode).toBe('direct_post.jwt');
      expect(payload.client_metadata.encrypted_response_enc_values_supported).toEqual(['A128GCM', 'A256GCM']);
      const { keys: listed } = payload.client_metadata.jwks;
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({ kty: 'EC', crv: 'P-256', use: 'enc', alg: 'ECDH-ES', kid: expect.any(String) });
      expect(listed[0]).not.toHaveProperty('d');
      return `${listed[0].x}.${listed[0].y}`;
    });
    expect(new Set(keys).size).toBe(keys.length);
  });

  for (const enc of ['A128GCM', 'A256GCM'] as const) {
    it(`takes a response encrypted with ${enc}`, async () => {
      const { session, payload } = await newRequest();
      const presentation = await presentSdJwt(pid.credential, pid.holder, resolvedOf(payload), ['given_name', 'age_over_18']);
      const [key] = payload.client_metadata.jwks.keys as JWK[];
      const response = await new CompactEncrypt(
        new TextEncoder().encode(JSON.stringify({ vp_token: { pid: [presentation] }, state: payload.state })),
      )
        .setProtectedHeader({ alg: 'ECDH-ES', enc, kid: key?.kid })
        .encrypt(await importJWK(key as JWK, 'ECDH-ES'));
      const reply = await fetch(payload.response_uri, { method: 'POST', body: new URLSearchParams({ response }) });
      expect(reply.status, await reply.clone().text()).toBe(200);
      expect((await svc.running.services.sessions.get('acme', session)).status).toBe('completed');
    });
  }

  it('refuses a response encrypted with an enc the request does not list (A192GCM)', async () => {
    const { session, payload } = await newRequest();
    const [key] = payload.client_metadata.jwks.keys as JWK[];
    const response = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify({ vp_token: { pid: ['x'] }, state: payload.state })))
      .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A192GCM', kid: key?.kid })
      .encrypt(await importJWK(key as JWK, 'ECDH-ES'));
    const reply = await fetch(payload.response_uri, { method: 'POST', body: new URLSearchParams({ response }) });
    expect(reply.status).toBe(400);
    expect(await reply.json()).toMatchObject({
      error: 'invalid_request',
      error_description: 'the encrypted response could not be decrypted',
    });
    expect((await svc.running.services.sessions.get('acme', session)).status).toBe('failed');
  });

  it('a response encrypted to the key of another request is refused', async () => {
    const [first, second] = await Promise.all([newRequest(), newRequest()]);
    const presentation = await presentSdJwt(pid.credential, pid.holder, resolvedOf(second.payload), ['given_name', 'age_over_18']);
    const [otherKey] = first.payload.client_metadata.jwks.keys as JWK[];
    const response = await new CompactEncrypt(
      new TextEncoder().encode(JSON.stringify({ vp_token: { pid: [presentation] }, state: second.payload.state })),
    )
      .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A256GCM', kid: otherKey?.kid })
      .encrypt(await importJWK(otherKey as JWK, 'ECDH-ES'));
    const reply = await fetch(second.payload.response_uri, { method: 'POST', body: new URLSearchParams({ response }) });
    expect(reply.status).toBe(400);
    expect((await svc.running.services.sessions.get('acme', second.session)).status).toBe('failed');
  });
});
