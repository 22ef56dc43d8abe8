// Signed credential issuer metadata (OpenID4VCI 1.0 section 12.2.3; HAIP 1.0 section 4.1), read as a
// wallet reads it: the JWT verified by jose with the key of its x5c leaf, and the chain checked by
// @peculiar/x509 (the leaf issued by the tenant's root, which x5c leaves out; never self-signed).
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { Openid4vciClient } from '@openid4vc/openid4vci';
import * as x509 from '@peculiar/x509';
import { decodeProtectedHeader, importX509, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issuanceCallbacks, presentationCallbacks } from '../../wallet/callbacks.js';
import { startService, type TestService } from '../support/service.js';

x509.cryptoProvider.set(webcrypto as Crypto);

let svc: TestService;
let acme: string;
let globex: string;

const configuration = (id: string) => ({
  id,
  config: { format: 'dc+sd-jwt', display: [{ name: `Card ${id}`, locale: 'en' }] },
  vct: `urn:example:${id}`,
  fields: [{ path: ['name'], type: 'string' }],
});

beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
  globex = (await svc.tenant('globex')).token;
  for (const [token, id] of [
    [acme, 'pid'],
    [globex, 'badge'],
  ] as const) {
    const reply = await svc.raw('POST', '/api/issuer/credentials', { token, body: configuration(id) });
    expect(reply.status, reply.text).toBe(201);
  }
});
afterAll(() => svc.stop());

const WELL_KNOWN = (tenant: string) => `/.well-known/openid-credential-issuer/issuers/${tenant}`;

async function fetchMetadata(path: string, accept?: string) {
  const response = await fetch(`${svc.url}${path}`, { headers: accept === undefined ? {} : { accept } });
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    vary: response.headers.get('vary'),
    text: await response.text(),
  };
}

const jsonMetadata = async (tenant: string) => JSON.parse((await fetchMetadata(WELL_KNOWN(tenant))).text);

async function rootOf(token: string) {
  const chain = await svc.raw('GET', '/api/key-chain/default-attestation', { token });
  expect(chain.status, chain.text).toBe(200);
  return new x509.X509Certificate(chain.body.rootCertificate);
}

/** The signed metadata verified as a wallet would: the x5c leaf's key, typ checked; its claims and header. */
async function verifiedSignedMetadata(jwt: string) {
  const header = decodeProtectedHeader(jwt);
  const x5c = header.x5c as string[];
  expect(x5c.length).toBeGreaterThan(0);
  const leafPem = new x509.X509Certificate(Buffer.from(x5c[0] as string, 'base64')).toString('pem');
  const { payload } = await jwtVerify(jwt, await importX509(leafPem, header.alg as string), { typ: 'openidvci-issuer-metadata+jwt' });
  return {
    header,
    payload: payload as Record<string, unknown>,
    chain: x5c.map((der) => new x509.X509Certificate(Buffer.from(der, 'base64'))),
  };
}

describe('signed credential issuer metadata', () => {
  it('answers Accept: application/jwt with a JWT of typ openidvci-issuer-metadata+jwt carrying every metadata parameter, sub, iat and exp', async () => {
    const before = Math.floor(Date.now() / 1000);
    const served = await fetchMetadata(WELL_KNOWN('acme'), 'application/jwt');
    expect(served.status, served.text).toBe(200);
    expect(served.type).toMatch(/^application\/jwt\b/);
    expect(served.vary?.toLowerCase()).toContain('accept');
    const { header, payload } = await verifiedSignedMetadata(served.text);
    expect(header).toMatchObject({ typ: 'openidvci-issuer-metadata+jwt', alg: 'ES256' });
    const metadata = await jsonMetadata('acme');
    const { iss, sub, iat, exp, ...parameters } = payload;
    expect(parameters).toEqual(metadata);
    expect(sub).toBe(`${svc.url}/issuers/acme`);
    expect(sub).toBe(metadata.credential_issuer);
    expect(iss).toBe(metadata.credential_issuer);
    expect(iat).toBeGreaterThanOrEqual(before - 1);
    expect(iat).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 1);
    expect(exp).toBe((iat as number) + 86_400);
    expect(Object.keys(parameters)).toEqual(
      expect.arrayContaining(['credential_issuer', 'credential_endpoint', 'credential_configurations_supported']),
    );
  });

  it("signs with a CA-issued leaf: never self-signed, issued by the tenant's root, which x5c leaves out", async () => {
    const { chain } = await verifiedSignedMetadata((await fetchMetadata(WELL_KNOWN('acme'), 'application/jwt')).text);
    const root = await rootOf(acme);
    const leaf = chain[0] as x509.X509Certificate;
    expect(await leaf.isSelfSigned()).toBe(false);
    expect(leaf.issuer).toBe(root.subject);
    expect(await leaf.verify({ publicKey: root.publicKey, signatureOnly: true })).toBe(true);
    for (const certificate of chain) {
      expect(await certificate.isSelfSigned()).toBe(false);
      expect(certificate.equal(root)).toBe(false);
    }
  });

  it('stays JSON by default: no Accept, */*, application/json, or application/jwt weighed 0', async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'application/jwt;q=0, application/json', 'text/html']) {
      const served = await fetchMetadata(WELL_KNOWN('acme'), accept);
      expect(served.status, String(accept)).toBe(200);
      expect(served.type, String(accept)).toMatch(/^application\/json\b/);
      expect(served.vary?.toLowerCase(), String(accept)).toContain('accept');
      expect(JSON.parse(served.text).credential_issuer).toBe(`${svc.url}/issuers/acme`);
    }
  });

  it('follows the weights of the Accept header, then the more specific range, then the order written', async () => {
    const cases: [string, 'json' | 'jwt'][] = [
      ['application/json;q=0.5, application/jwt', 'jwt'],
      ['application/jwt;q=0.4, application/json;q=0.9', 'json'],
      ['application/jwt, application/json', 'jwt'],
      ['application/json, application/jwt', 'json'],
      ['*/*;q=0.8, application/jwt', 'jwt'],
      ['application/*, application/jwt;q=0.9', 'json'],
    ];
    for (const [accept, expected] of cases) {
      const served = await fetchMetadata(WELL_KNOWN('acme'), accept);
      expect(served.type, accept).toMatch(expected === 'jwt' ? /^application\/jwt\b/ : /^application\/json\b/);
    }
  });

  it('is accepted by a wallet library that asks for it (oid4vc-ts, checking the x5c chain and the signature)', async () => {
    const accepting: typeof fetch = (input, init) =>
      fetch(input, { ...init, headers: { ...init?.headers, accept: 'application/jwt, application/json;q=0.5' } });
    // The client's options type leaves verifyJwt out, but the library calls it for signed metadata: passed as a variable.
    const callbacks = { ...issuanceCallbacks([]), verifyJwt: presentationCallbacks().verifyJwt, fetch: accepting };
    const client = new Openid4vciClient({ callbacks });
    const resolved = await client.resolveIssuerMetadata(`${svc.url}/issuers/acme`);
    expect(resolved.signedCredentialIssuer?.jwt.header.typ).toBe('openidvci-issuer-metadata+jwt');
    expect(resolved.credentialIssuer.credential_configurations_supported).toHaveProperty('pid');
    // A wallet that sends no Accept header (as the library does by default) reads the JSON document.
    const plain = await new Openid4vciClient({ callbacks: { ...issuanceCallbacks([]), fetch } }).resolveIssuerMetadata(
      `${svc.url}/issuers/acme`,
    );
    expect(plain.signedCredentialIssuer).toBeUndefined();
    expect(plain.credentialIssuer).toEqual(await jsonMetadata('acme'));
  });

  it('is served at the compatibility location for draft-era clients alike', async () => {
    const served = await fetchMetadata('/issuers/acme/.well-known/openid-credential-issuer', 'application/jwt');
    expect(served.type).toMatch(/^application\/jwt\b/);
    const { payload } = await verifiedSignedMetadata(served.text);
    expect(payload.sub).toBe(`${svc.url}/issuers/acme`);
  });

  it("shows a configuration change at once, and each tenant's metadata is signed by its own key chain", async () => {
    const created = await svc.raw('POST', '/api/issuer/credentials', { token: acme, body: configuration('late') });
    expect(created.status, created.text).toBe(201);
    const acmeSigned = await verifiedSignedMetadata((await fetchMetadata(WELL_KNOWN('acme'), 'application/jwt')).text);
    expect(Object.keys(acmeSigned.payload.credential_configurations_supported as object).sort()).toEqual(['late', 'pid']);

    const globexSigned = await verifiedSignedMetadata((await fetchMetadata(WELL_KNOWN('globex'), 'application/jwt')).text);
    expect(globexSigned.payload.sub).toBe(`${svc.url}/issuers/globex`);
    expect(Object.keys(globexSigned.payload.credential_configurations_supported as object)).toEqual(['badge']);
    const globexRoot = await rootOf(globex);
    const globexLeaf = globexSigned.chain[0] as x509.X509Certificate;
    expect(await globexLeaf.verify({ publicKey: globexRoot.publicKey, signatureOnly: true })).toBe(true);
    expect(await globexLeaf.verify({ publicKey: (await rootOf(acme)).publicKey, signatureOnly: true })).toBe(false);
  });
});
