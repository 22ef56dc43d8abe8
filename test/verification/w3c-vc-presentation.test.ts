// jwt_vc_json presentations through the real OpenID4VP flow: credentials issued by the service
// (x5c, and did:web resolved through the service's outbound client), presented in a VP JWT that jose
// signs with the holder key, as VCDM 2.0 (enveloped credentials) and VCDM 1.1 (the vp claim) shape
// it; then each rule bent once: signatures, nonce, aud, holder, validity, type, issuer trust.
import { decodeJwt, importJWK, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BodyOf } from '../support/api-types.js';
import { type ResolvedRequest, resolveRequest, submit } from '../support/presenter.js';
import { startService, type TestService } from '../support/service.js';
import { holderKey, receiveCredentials } from '../support/wallet.js';

let svc: TestService;
let acme: string;

const TYPE = 'https://example.com/credentials/Diploma';
const diploma = (id: string, options: { vcIssuer?: 'did:web'; lifeTime?: number } = {}) =>
  ({
    id,
    vct: TYPE,
    config: { format: 'jwt_vc_json', ...(options.vcIssuer && { vcIssuer: options.vcIssuer }) },
    fields: [
      { path: ['given_name'], type: 'string', mandatory: true },
      { path: ['degree'], type: 'string' },
    ],
    ...(options.lifeTime && { lifeTime: options.lifeTime }),
  }) satisfies BodyOf<'/api/issuer/credentials', 'POST'>;
const CLAIMS = { given_name: 'Erika', degree: 'BSc' };

const query = (type: string) => ({
  credentials: [
    {
      id: 'diploma',
      format: 'jwt_vc_json',
      meta: { type_values: [[type]] },
      claims: [{ path: ['credentialSubject', 'given_name'] }, { path: ['credentialSubject', 'degree'], values: ['BSc'] }],
    },
  ],
});

interface Held {
  credential: string;
  holder: JWK;
}

async function issue(token: string, configurationId: string): Promise<Held> {
  const offer = await svc.call('POST', '/api/issuer/offer', {
    token,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: [configurationId],
      credentialClaims: { [configurationId]: { type: 'inline', claims: CLAIMS } },
    },
  });
  expect(offer.status, offer.text).toBe(201);
  const key = await holderKey();
  const { response } = await receiveCredentials(offer.body.uri, { keys: [key] });
  const [issued] = response.credentialResponse.credentials as { credential: string }[];
  return { credential: issued?.credential as string, holder: key.privateJwk };
}

let held: Held;

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  for (const body of [diploma('diploma'), diploma('diploma-did', { vcIssuer: 'did:web' }), diploma('short', { lifeTime: 1 })]) {
    const created = await svc.call('POST', '/api/issuer/credentials', { token: acme, body });
    expect(created.status, created.text).toBe(201);
  }
  const trust = await svc.call('POST', '/api/trust-list', {
    token: acme,
    body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
  });
  expect(trust.status, trust.text).toBe(201);
  for (const [id, type] of [
    ['diploma', TYPE],
    ['other-type', 'https://example.com/credentials/Licence'],
  ] as const) {
    const config = await svc.call('POST', '/api/verifier/config', { token: acme, body: { id, dcql_query: query(type) } });
    expect(config.status, config.text).toBe(201);
  }
  held = await issue(acme, 'diploma');
});
afterAll(() => svc.stop());

interface VpOptions {
  aud?: string;
  nonce?: string;
  signWith?: JWK;
  /** VCDM 1.1: the presentation in the vp claim, the credential as a JWT string. */
  v11?: boolean;
}

/** A VP JWT of the credentials for the request, signed by the holder key with jose. */
async function presentVp(credentials: string[], holder: JWK, request: ResolvedRequest, options: VpOptions = {}) {
  const did = (decodeJwt(credentials[0] as string).credentialSubject as { id: string }).id;
  const binding = { aud: options.aud ?? request.clientId, nonce: options.nonce ?? request.nonce, iat: Math.floor(Date.now() / 1000) };
  const presentation = options.v11
    ? {
        ...binding,
        iss: did,
        vp: { '@context': ['https://www.w3.org/2018/credentials/v1'], type: ['VerifiablePresentation'], verifiableCredential: credentials },
      }
    : {
        ...binding,
        '@context': ['https://www.w3.org/ns/credentials/v2'],
        type: ['VerifiablePresentation'],
        holder: did,
        verifiableCredential: credentials.map((jwt) => ({
          '@context': ['https://www.w3.org/ns/credentials/v2'],
          id: `data:application/vc+jwt,${jwt}`,
          type: 'EnvelopedVerifiableCredential',
        })),
      };
  return new SignJWT(presentation)
    .setProtectedHeader({ alg: 'ES256', typ: 'vp+jwt', kid: `${did}#0` })
    .sign(await importJWK(options.signWith ?? holder, 'ES256'));
}

async function attempt(present: (request: ResolvedRequest) => Promise<string>, requestId = 'diploma', token = acme) {
  const offer = await svc.call('POST', '/api/verifier/offer', { token, body: { response_type: 'uri', requestId } });
  expect(offer.status, offer.text).toBe(201);
  const resolved = await resolveRequest(offer.body.uri as string);
  const reply = await submit(resolved, { diploma: [await present(resolved)] });
  const session = await svc.running.services.sessions.get(token === acme ? 'acme' : 'globex', offer.body.session);
  return { reply, session };
}

const expectRejected = ({ reply, session }: Awaited<ReturnType<typeof attempt>>, reason: RegExp) => {
  expect(reply.status, JSON.stringify(reply.body)).toBe(400);
  expect(reply.body.error).toBe('invalid_request');
  expect(session.status).toBe('failed');
  expect(session.errorReason).toMatch(reason);
  expect(session.private?.credentials).toBeUndefined();
};

const expectVerified = ({ reply, session }: Awaited<ReturnType<typeof attempt>>, issuer: string) => {
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  expect(session.status).toBe('completed');
  expect(session.private?.credentials).toEqual([
    expect.objectContaining({
      queryId: 'diploma',
      format: 'jwt_vc_json',
      types: ['VerifiableCredential', TYPE],
      issuer,
      claims: expect.objectContaining({ type: ['VerifiableCredential', TYPE], credentialSubject: expect.objectContaining(CLAIMS) }),
    }),
  ]);
};

describe('jwt_vc_json presentations', () => {
  it('the request offers jwt_vc_json in vp_formats_supported', async () => {
    const offer = await svc.call('POST', '/api/verifier/offer', { token: acme, body: { response_type: 'uri', requestId: 'diploma' } });
    const resolved = await resolveRequest(offer.body.uri as string);
    expect(resolved.payload.client_metadata.vp_formats_supported.jwt_vc_json).toEqual({ alg_values: ['ES256', 'ES384', 'ES512'] });
  });

  it('verifies a VCDM 2.0 VP JWT (enveloped credential) end to end', async () => {
    expectVerified(await attempt((r) => presentVp([held.credential], held.holder, r)), `${svc.url}/issuers/acme`);
  });

  it('verifies a VCDM 1.1 VP JWT (vp claim)', async () => {
    expectVerified(await attempt((r) => presentVp([held.credential], held.holder, r, { v11: true })), `${svc.url}/issuers/acme`);
  });

  it('verifies a credential whose issuer is the tenant did:web (resolved, its key trusted through its x5c)', async () => {
    const didHeld = await issue(acme, 'diploma-did');
    const did = `did:web:${encodeURIComponent(new URL(svc.url).host)}:issuers:acme`;
    expectVerified(await attempt((r) => presentVp([didHeld.credential], didHeld.holder, r)), did);
  });
});

describe('rejected jwt_vc_json presentations fail the session', () => {
  it('a tampered issuer signature', async () => {
    const [h, p, s] = held.credential.split('.') as [string, string, string];
    const forged = [h, p, `${s.slice(0, -4)}AAAA`].join('.');
    expectRejected(await attempt((r) => presentVp([forged], held.holder, r)), /issuer signature does not verify/);
  });

  it('a tampered claim', async () => {
    const [h, p, s] = held.credential.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    payload.credentialSubject.degree = 'PhD';
    const forged = [h, Buffer.from(JSON.stringify(payload)).toString('base64url'), s].join('.');
    expectRejected(await attempt((r) => presentVp([forged], held.holder, r)), /issuer signature does not verify/);
  });

  it('a VP JWT signed by another key than the credential subject', async () => {
    const stranger = (await holderKey()).privateJwk;
    expectRejected(await attempt((r) => presentVp([held.credential], held.holder, r, { signWith: stranger })), /holder binding/);
  });

  it('a wrong nonce', async () => {
    expectRejected(await attempt((r) => presentVp([held.credential], held.holder, r, { nonce: 'guessed' })), /nonce/);
  });

  it('a wrong audience', async () => {
    expectRejected(await attempt((r) => presentVp([held.credential], held.holder, r, { aud: 'x509_hash:someone-else' })), /aud/);
  });

  it('a type the query does not ask for', async () => {
    expectRejected(await attempt((r) => presentVp([held.credential], held.holder, r), 'other-type'), /DCQL/);
  });

  it('an issuer no trust list of the tenant names', async () => {
    const globex = (await svc.tenant('globex')).token;
    expect((await svc.call('POST', '/api/issuer/credentials', { token: globex, body: diploma('diploma') })).status).toBe(201);
    const foreign = await issue(globex, 'diploma');
    expectRejected(await attempt((r) => presentVp([foreign.credential], foreign.holder, r)), /untrusted issuer/);
  });

  it('a credential its holder issued itself as did:jwk (resolved locally, but no trust list names its key)', async () => {
    const self = await holderKey();
    const did = `did:jwk:${Buffer.from(JSON.stringify({ kty: 'EC', crv: 'P-256', x: self.publicJwk.x, y: self.publicJwk.y })).toString('base64url')}`;
    const now = Math.floor(Date.now() / 1000);
    const forged = await new SignJWT({
      '@context': ['https://www.w3.org/ns/credentials/v2'],
      type: ['VerifiableCredential', TYPE],
      issuer: did,
      validFrom: new Date().toISOString(),
      credentialSubject: { id: did, ...CLAIMS },
      iat: now,
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'vc+jwt', kid: `${did}#0` })
      .sign(await importJWK(self.privateJwk, 'ES256'));
    expectRejected(await attempt((r) => presentVp([forged], self.privateJwk, r)), /untrusted issuer: the key of did:jwk:/);
  });

  it('a did:web issuer whose document the outbound policy does not fetch', async () => {
    const self = await holderKey();
    const holderDid = (decodeJwt(held.credential).credentialSubject as { id: string }).id;
    const forged = await new SignJWT({
      '@context': ['https://www.w3.org/ns/credentials/v2'],
      type: ['VerifiableCredential', TYPE],
      issuer: 'did:web:169.254.169.254',
      credentialSubject: { id: holderDid, ...CLAIMS },
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'vc+jwt', kid: 'did:web:169.254.169.254#key-1' })
      .sign(await importJWK(self.privateJwk, 'ES256'));
    expectRejected(await attempt((r) => presentVp([forged], held.holder, r)), /did:web:169\.254\.169\.254 does not resolve: refused/);
  });

  it("another tenant cannot answer this tenant's request, nor see its session", async () => {
    const globex = (await svc.tenant('globex-viewer')).token;
    const offer = await svc.call('POST', '/api/verifier/offer', { token: acme, body: { response_type: 'uri', requestId: 'diploma' } });
    expect((await svc.raw('GET', `/api/session/${offer.body.session}`, { token: globex })).status).toBe(404);
  });

  it('an expired credential', async () => {
    const expiring = await issue(acme, 'short');
    svc.clock.advance(2100);
    expectRejected(await attempt((r) => presentVp([expiring.credential], expiring.holder, r)), /expired/);
  });
});
