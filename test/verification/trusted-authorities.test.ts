// DCQL trusted_authorities (OpenID4VP 1.0 section 6.1.1.1; HAIP 1.0 section 5 makes `aki` mandatory):
// the request object carries the query unchanged, and a presented credential is accepted only when
// its issuer chain matches one of the authorities its query names: `aki` (the raw
// AuthorityKeyIdentifier of a certificate of the chain), for SD-JWT VC and mdoc, and `etsi_tl` (a
// trusted list fetched by URL through the outbound client: ETSI TS 119 612 XML, or svc's own LoTE).
// The AKIs and certificates the tests expect are read with @peculiar/x509 and @owf/mdoc, not svc's code.
import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { IssuerSigned } from '@owf/mdoc';
import { AuthorityKeyIdentifierExtension, X509Certificate, X509CertificateGenerator } from '@peculiar/x509';
import type { JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MDL_ADULT_QUERY, MDL_DOC_TYPE, MDL_NAMESPACE, mdl, PID, PID_ADULT_QUERY } from '../support/fixtures.js';
import { presentMdoc } from '../support/mdoc-wallet.js';
import { presentSdJwt, type ResolvedRequest, resolveRequest, submit } from '../support/presenter.js';
import { problemOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

let svc: TestService;
let admin: string;
let pid: { credential: string; holder: JWK };
let mdoc: { credential: string; holder: JWK };
/** The issuer chains the credentials carry (x5c of the SD-JWT VC, x5chain of the mdoc), base64 DER. */
let pidChain: string[];
let mdocChain: string[];
let lists: Server;
let listsUrl: string;
/** What the trusted list server answers, by path. */
const served = new Map<string, { status: number; body: string }>();

const akiOf = (der: string) => {
  const keyId = new X509Certificate(Buffer.from(der, 'base64')).getExtension(AuthorityKeyIdentifierExtension)?.keyId;
  if (!keyId) throw new Error('the certificate has no AuthorityKeyIdentifier with a keyIdentifier');
  return Buffer.from(keyId, 'hex').toString('base64url');
};
const otherAki = () => randomBytes(20).toString('base64url');

/** An ETSI TS 119 612 trusted list, reduced to what is read: the service digital identities. */
const xmlTrustedList = (certificates: string[]) => `<?xml version="1.0" encoding="UTF-8"?>
<tsl:TrustServiceStatusList xmlns:tsl="http://uri.etsi.org/02231/v2#" Id="TrustServiceStatusList">
  <tsl:TrustServiceProviderList><tsl:TrustServiceProvider><tsl:TSPServices><tsl:TSPService><tsl:ServiceInformation>
    <tsl:ServiceTypeIdentifier>http://uri.etsi.org/TrstSvc/Svctype/EDS/Q</tsl:ServiceTypeIdentifier>
    <tsl:ServiceDigitalIdentity>${certificates
      .map((c) => `<tsl:DigitalId><tsl:X509Certificate>\n${c.match(/.{1,64}/g)?.join('\n')}\n</tsl:X509Certificate></tsl:DigitalId>`)
      .join('')}</tsl:ServiceDigitalIdentity>
  </tsl:ServiceInformation></tsl:TSPService></tsl:TSPServices></tsl:TrustServiceProvider></tsl:TrustServiceProviderList>
</tsl:TrustServiceStatusList>`;

/** A CA certificate that has nothing to do with svc's keys. */
async function strangerCertificate(): Promise<string> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await webcrypto.subtle.generateKey(alg, false, ['sign', 'verify']);
  const cert = await X509CertificateGenerator.createSelfSigned(
    { name: 'CN=Stranger CA', keys, signingAlgorithm: alg, notAfter: new Date(Date.now() + 86_400_000) },
    webcrypto as Crypto,
  );
  return Buffer.from(cert.rawData).toString('base64');
}

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  for (const body of [PID, mdl(['family_name', 'age_over_18'])])
    expect((await svc.call('POST', '/api/issuer/credentials', { token: admin, body })).status).toBe(201);
  const trust = await svc.call('POST', '/api/trust-list', {
    token: admin,
    body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
  });
  expect(trust.status, trust.text).toBe(201);
  pid = await issueCredential(svc, admin, 'pid', { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true });
  mdoc = await issueCredential(svc, admin, 'mdl', { [MDL_NAMESPACE]: { family_name: 'Mustermann', age_over_18: true } });
  pidChain = (JSON.parse(Buffer.from(pid.credential.split('.')[0] as string, 'base64url').toString()) as { x5c: string[] }).x5c;
  mdocChain = IssuerSigned.fromEncodedForOid4Vci(mdoc.credential).issuerAuth.certificateChain.map((der) =>
    Buffer.from(der).toString('base64'),
  );
  lists = createServer((req, res) => {
    const answer = served.get(req.url ?? '') ?? { status: 404, body: 'not here' };
    res.writeHead(answer.status, { 'content-type': 'application/xml' }).end(answer.body);
  });
  await new Promise<void>((resolve) => lists.listen(0, '127.0.0.1', resolve));
  listsUrl = `http://127.0.0.1:${(lists.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => (lists ? lists.close(() => resolve()) : resolve()));
  await svc?.stop();
});

const withAuthorities = (query: { credentials: Record<string, unknown>[] }, trusted_authorities: unknown[]) => ({
  credentials: [{ ...query.credentials[0], trusted_authorities }],
});

/** Saves the configuration, offers it, and resolves the request as a wallet (the signed request object checked by @openid4vc/openid4vp). */
async function requestFor(id: string, dcql_query: Record<string, unknown>) {
  const config = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id, dcql_query } as never });
  expect(config.status, config.text).toBe(201);
  const offer = await svc.call('POST', '/api/verifier/offer', { token: admin, body: { response_type: 'uri', requestId: id } });
  expect(offer.status, offer.text).toBe(201);
  return { session: offer.body.session, resolved: await resolveRequest(offer.body.uri as string) };
}
const sessionOf = (id: string) => svc.running.services.sessions.get('acme', id);

const presentPid = async (resolved: ResolvedRequest) => ({
  pid: [await presentSdJwt(pid.credential, pid.holder, resolved, ['given_name', 'age_over_18'])],
});
const presentMdl = async (resolved: ResolvedRequest) =>
  (
    await presentMdoc(resolved, {
      docType: MDL_DOC_TYPE,
      namespace: MDL_NAMESPACE,
      elements: ['family_name', 'age_over_18'],
      holder: mdoc.holder,
      credential: mdoc.credential,
    })
  ).vpToken;

async function expectAccepted(session: string, reply: { status: number; body: Record<string, unknown> }, authority: unknown) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  const done = await sessionOf(session);
  expect(done.status).toBe('completed');
  const [kept] = (done.private?.credentials ?? []) as Record<string, unknown>[];
  expect(kept?.authority).toEqual(authority);
  // The chain served the matching only: the result holds the claims, not the issuer's certificates.
  expect(kept).not.toHaveProperty('issuerChain');
}

async function expectRefused(session: string, reply: { status: number; body: Record<string, unknown> }, reason: RegExp) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(400);
  expect(reply.body.error).toBe('invalid_request');
  expect(reply.body.error_description).toMatch(reason);
  const failed = await sessionOf(session);
  expect(failed.status).toBe('failed');
  expect(failed.errorReason).toMatch(reason);
  expect(failed.private?.credentials).toBeUndefined();
}

describe('trusted_authorities of type aki', () => {
  it('the chain of every issued credential has an AuthorityKeyIdentifier to match', () => {
    expect(pidChain.length).toBeGreaterThan(0);
    expect(mdocChain.length).toBeGreaterThan(0);
    expect(akiOf(pidChain[0] as string)).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(akiOf(mdocChain[0] as string)).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('SD-JWT VC: the request object carries the query unchanged, and a credential whose chain has the AKI is accepted', async () => {
    const aki = akiOf(pidChain[0] as string);
    const query = withAuthorities(PID_ADULT_QUERY, [{ type: 'aki', values: [otherAki(), aki] }]);
    const { session, resolved } = await requestFor('pid-aki', query);
    expect(resolved.payload.dcql_query).toEqual(query);
    await expectAccepted(session, await submit(resolved, await presentPid(resolved)), { type: 'aki', values: [aki] });
  });

  it('SD-JWT VC: a credential whose chain has none of the AKIs is refused, naming the query', async () => {
    const { session, resolved } = await requestFor(
      'pid-aki-other',
      withAuthorities(PID_ADULT_QUERY, [{ type: 'aki', values: [otherAki()] }]),
    );
    await expectRefused(session, await submit(resolved, await presentPid(resolved)), /trusted_authorities: .*'pid' matches none .*\(aki\)/);
  });

  it('mdoc: the request object carries the query unchanged, and a credential whose x5chain has the AKI is accepted', async () => {
    const aki = akiOf(mdocChain[0] as string);
    const query = withAuthorities(MDL_ADULT_QUERY, [{ type: 'aki', values: [aki] }]);
    const { session, resolved } = await requestFor('mdl-aki', query);
    expect(resolved.payload.dcql_query).toEqual(query);
    await expectAccepted(session, await submit(resolved, await presentMdl(resolved)), { type: 'aki', values: [aki] });
  });

  it('mdoc: a credential whose x5chain has none of the AKIs is refused', async () => {
    const { session, resolved } = await requestFor(
      'mdl-aki-other',
      withAuthorities(MDL_ADULT_QUERY, [{ type: 'aki', values: [otherAki()] }]),
    );
    await expectRefused(session, await submit(resolved, await presentMdl(resolved)), /trusted_authorities: .*'mdl' matches none/);
  });

  it('an AKI value that is not base64url is refused when the configuration is saved, naming the field', async () => {
    const reply = await svc.call('POST', '/api/verifier/config', {
      token: admin,
      body: { id: 'bad-aki', dcql_query: withAuthorities(PID_ADULT_QUERY, [{ type: 'aki', values: ['not base64url!'] }]) } as never,
    });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.text).toContain('body.dcql_query.credentials.0.trusted_authorities.0.values.0');
  });
});

describe('trusted_authorities of type etsi_tl', () => {
  it('a list URL the outbound client would refuse (cloud metadata) is refused when the configuration is saved, naming it', async () => {
    const query = withAuthorities(PID_ADULT_QUERY, [
      { type: 'aki', values: [otherAki()] },
      { type: 'etsi_tl', values: [`${listsUrl}/tl.xml`, 'http://169.254.169.254/tl.xml'] },
    ]);
    const reply = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id: 'metadata-tl', dcql_query: query } as never });
    expect(reply.status, reply.text).toBe(400);
    expect(problemOf(reply).errors).toEqual([
      {
        field: 'body.dcql_query.credentials.0.trusted_authorities.1.values.1',
        message: expect.stringMatching(/^etsi_tl: the trusted list URL refused: 169\.254\.169\.254 is .*always refused/),
      },
    ]);
    expect((await svc.raw('GET', '/api/verifier/config/metadata-tl', { token: admin })).status).toBe(404);
  });

  it("SD-JWT VC: accepted when an ETSI TS 119 612 list holds a certificate of the issuer's chain", async () => {
    served.set('/tl.xml', { status: 200, body: xmlTrustedList([await strangerCertificate(), pidChain.at(-1) as string]) });
    const url = `${listsUrl}/tl.xml`;
    const { session, resolved } = await requestFor('pid-tl', withAuthorities(PID_ADULT_QUERY, [{ type: 'etsi_tl', values: [url] }]));
    await expectAccepted(session, await submit(resolved, await presentPid(resolved)), { type: 'etsi_tl', values: [url] });
  });

  it('mdoc: accepted through the LoTE (ETSI TS 119 602) that svc serves for a trust list', async () => {
    const url = `${svc.url}/issuers/acme/trust-lists/issuers`;
    const { session, resolved } = await requestFor('mdl-tl', withAuthorities(MDL_ADULT_QUERY, [{ type: 'etsi_tl', values: [url] }]));
    await expectAccepted(session, await submit(resolved, await presentMdl(resolved)), { type: 'etsi_tl', values: [url] });
  });

  it("refused when the list holds no certificate of the issuer's chain", async () => {
    served.set('/stranger.xml', { status: 200, body: xmlTrustedList([await strangerCertificate()]) });
    const query = withAuthorities(PID_ADULT_QUERY, [{ type: 'etsi_tl', values: [`${listsUrl}/stranger.xml`] }]);
    const { session, resolved } = await requestFor('pid-tl-stranger', query);
    await expectRefused(
      session,
      await submit(resolved, await presentPid(resolved)),
      /trusted_authorities: .*'pid' matches none .*\(etsi_tl\)$/,
    );
  });

  it('refused, saying why, when the list cannot be read', async () => {
    const missing = `${listsUrl}/missing.xml`;
    const { session, resolved } = await requestFor(
      'pid-tl-missing',
      withAuthorities(PID_ADULT_QUERY, [{ type: 'etsi_tl', values: [missing] }]),
    );
    await expectRefused(
      session,
      await submit(resolved, await presentPid(resolved)),
      new RegExp(`the trusted list ${missing} was not read: it answered HTTP 404`),
    );
  });

  it('one matching authority among several is enough (an unreadable list, a wrong AKI, then the right list)', async () => {
    served.set('/issuer.xml', { status: 200, body: xmlTrustedList([pidChain.at(-1) as string]) });
    const url = `${listsUrl}/issuer.xml`;
    const query = withAuthorities(PID_ADULT_QUERY, [
      { type: 'etsi_tl', values: [`${listsUrl}/missing-too.xml`] },
      { type: 'aki', values: [otherAki()] },
      { type: 'etsi_tl', values: [url] },
    ]);
    const { session, resolved } = await requestFor('pid-several', query);
    await expectAccepted(session, await submit(resolved, await presentPid(resolved)), { type: 'etsi_tl', values: [url] });
  });
});
