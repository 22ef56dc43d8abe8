// Issuance with a second holder implementation, Sphereon's oid4vci-client 0.20.1, through a recording
// proxy: discovery through the compatibility locations, and the deviations from OpenID4VCI 1.0 it
// sends (user_pin beside tx_code, a singular `proof`), each accepted or refused on purpose. An issuer
// in the haip-1.0 profile requires wallet attestation, which this client cannot send: it is refused.
import 'reflect-metadata';
import { X509Certificate } from 'node:crypto';
import { IssuerSigned } from '@owf/mdoc';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, importJWK, importX509, type JWK, jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../support/service.js';
import { holderKey } from '../support/wallet.js';
import { walletProvider } from '../support/wallet-provider.js';
import { type RecordingProxy, recordingProxy } from './recording-proxy.js';
import { sphereonReceive } from './sphereon-holder.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const NS = 'org.iso.18013.5.1';
const PID = {
  id: 'pid',
  config: { format: 'dc+sd-jwt' },
  vct: 'urn:eudi:pid:1',
  fields: [
    { path: ['given_name'], type: 'string' },
    { path: ['family_name'], type: 'string' },
  ],
};
const MDL = {
  id: 'mdl',
  config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
  fields: [{ path: ['family_name'], type: 'string', namespace: NS }],
};

let proxy: RecordingProxy;
let svc: TestService;
let admin: string;

beforeAll(async () => {
  proxy = await recordingProxy();
  svc = await startService({ PUBLIC_URL: proxy.url });
  proxy.target = svc.url;
  admin = (await svc.tenant('acme')).token;
  for (const config of [PID, MDL]) {
    const created = await svc.raw('POST', '/api/issuer/credentials', { token: admin, body: config });
    expect(created.status, created.text).toBe(201);
  }
});
afterAll(async () => {
  await svc.stop();
  await proxy.close();
});

const offer = async (configurationId: string, claims: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
  const reply = await svc.call('POST', '/api/issuer/offer', {
    token: admin,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: [configurationId],
      credentialClaims: { [configurationId]: { type: 'inline', claims } },
      ...extra,
    },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as { uri: string; session: string; credentialOffer: any };
};
const session = (id: string) => svc.running.services.sessions.get('acme', id);
/** What the wallet sent to `path` since `from` (an index into the proxy's log). */
const sentTo = (path: string, from: number) => proxy.requests.slice(from).filter((r) => r.path === path);

describe("Sphereon's oid4vci-client 0.20.1", () => {
  it('discovers the metadata under the issuer identifier and receives an SD-JWT VC with tx_code and DPoP', async () => {
    const from = proxy.requests.length;
    const created = await offer('pid', { given_name: 'Erika', family_name: 'Mustermann' }, { tx_code: '493817' });
    const received = await sphereonReceive(created.uri, { txCode: '493817', dpop: true });

    // The draft-15 locations it asks, in its order: openid-configuration is not served (svc is no
    // OpenID Provider), so it falls back to oauth-authorization-server.
    expect(proxy.seen(/\.well-known/).slice(-3)).toEqual([
      'GET /issuers/acme/.well-known/openid-credential-issuer 200',
      'GET /issuers/acme/.well-known/openid-configuration 404',
      'GET /issuers/acme/.well-known/oauth-authorization-server 200',
    ]);
    const [token] = sentTo('/issuers/acme/token', from);
    const form = new URLSearchParams(token?.body);
    expect([form.get('tx_code'), form.get('user_pin')]).toEqual(['493817', '493817']);
    expect(token?.headers.dpop).toEqual(expect.any(String));
    expect(received.tokenType).toBe('DPoP');
    const [request] = sentTo('/issuers/acme/credential', from);
    const body = JSON.parse(request?.body ?? '{}');
    expect(Object.keys(body).sort()).toEqual(['credential_configuration_id', 'proof']);
    expect(body.proof.proof_type).toBe('jwt');
    expect(request?.headers.authorization).toMatch(/^DPoP /);

    const [credential] = received.credentials;
    const signed = (credential as string).split('~')[0] as string;
    const leaf = new X509Certificate(Buffer.from((decodeProtectedHeader(signed).x5c as string[])[0] as string, 'base64'));
    const { payload } = await jwtVerify(signed, await importX509(leaf.toString(), 'ES256'));
    expect(payload).toMatchObject({ iss: `${proxy.url}/issuers/acme`, vct: 'urn:eudi:pid:1' });
    expect((payload.cnf as { jwk: JWK }).jwk).toMatchObject({ x: received.holder.x, y: received.holder.y });
    expect(await session(created.session)).toMatchObject({ status: 'completed', consumed: true });
  });

  it('receives an mdoc bound to its key', async () => {
    const created = await offer('mdl', { [NS]: { family_name: 'Mustermann' } });
    const received = await sphereonReceive(created.uri);
    expect(received.tokenType).toBe('Bearer');
    const mso = IssuerSigned.fromEncodedForOid4Vci(received.credentials[0] as string).issuerAuth.mobileSecurityObject;
    expect(mso.docType).toBe('org.iso.18013.5.1.mDL');
    expect(Buffer.from(mso.deviceKeyInfo.deviceKey.x as Uint8Array).toString('base64url')).toBe(received.holder.x);
    expect(await session(created.session)).toMatchObject({ status: 'completed' });
  });
});

describe('tolerated and refused deviations at issuance', () => {
  const tokenFor = (created: { credentialOffer: any }, form: Record<string, string>) =>
    svc.raw('POST', '/issuers/acme/token', {
      form: { grant_type: GRANT, 'pre-authorized_code': created.credentialOffer.grants[GRANT]['pre-authorized_code'], ...form },
    });

  it('reads tx_code only: user_pin beside it is ignored, user_pin alone is refused without counting an attempt', async () => {
    const created = await offer('pid', { given_name: 'Erika' }, { tx_code: '493817' });
    const alone = await tokenFor(created, { user_pin: '493817' });
    expect(alone.status).toBe(400);
    expect(alone.body).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('tx_code') });
    expect((await session(created.session)).txCodeFailedAttempts).toBe(0);
    // A right user_pin does not make up for a wrong tx_code: the attempt counts.
    const wrong = await tokenFor(created, { user_pin: '493817', tx_code: '000000' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');
    expect((await session(created.session)).txCodeFailedAttempts).toBe(1);
    const right = await tokenFor(created, { user_pin: '000000', tx_code: '493817' });
    expect(right.status, right.text).toBe(200);
  });

  it('takes a singular proof through the same checks as proofs, and refuses both at once', async () => {
    const created = await offer('pid', { given_name: 'Erika' });
    const token = await tokenFor(created, {});
    expect(token.status, token.text).toBe(200);
    const key = await holderKey();
    const nonce = async () => (await svc.raw('POST', '/issuers/acme/nonce')).body.c_nonce as string;
    const proof = async (aud: string, c_nonce: string) =>
      new SignJWT({ aud, nonce: c_nonce, iat: Math.floor(Date.now() / 1000) })
        .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: key.publicJwk })
        .sign(await importJWK(key.privateJwk, 'ES256'));
    const credential = (body: Record<string, unknown>) =>
      svc.raw('POST', '/issuers/acme/credential', {
        headers: { authorization: `Bearer ${token.body.access_token}` },
        body: { credential_configuration_id: 'pid', ...body },
      });
    const issuer = `${proxy.url}/issuers/acme`;
    const jwt = await proof(issuer, await nonce());

    const both = await credential({ proof: { proof_type: 'jwt', jwt }, proofs: { jwt: [jwt] } });
    expect(both.status).toBe(400);
    expect(both.body).toMatchObject({ error: 'invalid_credential_request', error_description: 'send proofs or proof, not both' });
    const otherType = await credential({ proof: { proof_type: 'cwt', cwt: jwt } });
    expect(otherType.body).toMatchObject({ error: 'invalid_proof', error_description: 'proof_type must be jwt' });
    const wrongAudience = await credential({ proof: { proof_type: 'jwt', jwt: await proof('https://elsewhere.example', await nonce()) } });
    expect(wrongAudience.body).toMatchObject({ error: 'invalid_proof', error_description: expect.stringContaining('aud') });
    const unknownNonce = await credential({ proof: { proof_type: 'jwt', jwt: await proof(issuer, 'made-up') } });
    expect(unknownNonce.body).toMatchObject({ error: 'invalid_nonce' });

    const issued = await credential({ proof: { proof_type: 'jwt', jwt } });
    expect(issued.status, issued.text).toBe(200);
    const cnf = decodeJwt(issued.body.credentials[0].credential.split('~')[0]).cnf as { jwk: JWK };
    expect(await calculateJwkThumbprint(cnf.jwk)).toBe(await calculateJwkThumbprint(key.publicJwk));
  });
});

describe("Sphereon's oid4vci-client 0.20.1 and an issuer in the haip-1.0 profile", () => {
  it('is refused at the token endpoint: it sends no wallet (client) attestation, which HAIP section 4.4.1 requires', async () => {
    const { token } = await svc.tenant('haip');
    const configuration = { ...PID, config: { ...PID.config, keyAttestationsRequired: {} }, lifeTime: 3600 };
    const created = await svc.raw('POST', '/api/issuer/credentials', { token, body: configuration });
    expect(created.status, created.text).toBe(201);
    const walletProviders = [{ name: 'Wallet Provider', certificates: [(await walletProvider()).caPem] }];
    const body = { profile: 'haip-1.0', dpopRequired: true, walletAttestationRequired: true, walletProviders };
    const settings = await svc.raw('PUT', '/api/issuer/config', { token, body });
    expect(settings.status, settings.text).toBe(200);
    const offered = await svc.call('POST', '/api/issuer/offer', {
      token,
      body: {
        response_type: 'uri',
        flow: 'pre_authorized_code',
        credentialConfigurationIds: ['pid'],
        credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika' } } },
      },
    });
    expect(offered.status, offered.text).toBe(201);
    const from = proxy.requests.length;
    const failure = await sphereonReceive(offered.body.uri, { dpop: true }).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(failure?.message).toMatch(/^Retrieving an access token from .* failed with status: 401$/);
    const [tokenRequest] = sentTo('/issuers/haip/token', from);
    expect(tokenRequest).toBeDefined();
    expect(tokenRequest?.headers['oauth-client-attestation']).toBeUndefined();
    expect(sentTo('/issuers/haip/credential', from)).toEqual([]);
  });
});
