// EU trusted lists through the server: a tenant with no trust list of its own points its trust
// settings (PUT /api/trust-config, etsiTrustedLists) at a LOTL served by the test, which points to two
// national lists (signed in the test with xml-crypto). An SD-JWT VC whose issuer chain leads to a
// granted service of one national list is accepted through the real OpenID4VP flow; once the national
// list withdraws that service, the same presentation is refused. A DCQL etsi_tl naming that national
// list reads its verified copy.
import type { JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PID, PID_ADULT_QUERY } from '../support/fixtures.js';
import { presentSdJwt, type ResolvedRequest, resolveRequest, submit } from '../support/presenter.js';
import { startService, type TestService } from '../support/service.js';
import { type TestCertificate, testCertificate } from '../support/test-pki.js';
import { CA_QC, GRANTED, listServer, PID_PROVIDER, signList, type TestList, trustedListXml, WITHDRAWN } from '../support/trusted-lists.js';
import { issueCredential } from '../support/wallet.js';

const DAY = 86_400_000;
let svc: TestService;
let admin: string;
let pid: { credential: string; holder: JWK };
/** The issuer chain's last certificate (base64 DER): what the national list names as the PID provider. */
let issuerAnchor: string;
let lotlSigner: TestCertificate;
let atSigner: TestCertificate;
let deSigner: TestCertificate;
let otherCa: TestCertificate;
let server: Awaited<ReturnType<typeof listServer>>;
const since = new Date(Date.now() - 30 * DAY);

const atList = (status: string, sequenceNumber: number): TestList => ({
  territory: 'AT',
  sequenceNumber,
  nextUpdate: new Date(Date.now() + DAY),
  services: [
    {
      name: 'AT PID provider',
      type: PID_PROVIDER,
      certificates: [issuerAnchor],
      statuses:
        status === GRANTED
          ? [{ status, since }]
          : [
              { status, since: new Date(Date.now() - 60_000) },
              { status: GRANTED, since },
            ],
    },
  ],
});

async function serve(status: string, sequenceNumber: number) {
  server.served.set(
    '/lotl.xml',
    await signList(
      trustedListXml({
        territory: 'EU',
        nextUpdate: new Date(Date.now() + DAY),
        pointers: [
          { location: `${server.url}/AT.xml`, territory: 'AT', signers: [atSigner.der] },
          { location: `${server.url}/DE.xml`, territory: 'DE', signers: [deSigner.der] },
        ],
      }),
      lotlSigner,
    ),
  );
  server.served.set('/AT.xml', await signList(trustedListXml(atList(status, sequenceNumber)), atSigner));
  server.served.set(
    '/DE.xml',
    await signList(
      trustedListXml({
        territory: 'DE',
        nextUpdate: new Date(Date.now() + DAY),
        services: [{ name: 'DE QC', type: CA_QC, certificates: [otherCa.der], statuses: [{ status: GRANTED, since }] }],
      }),
      deSigner,
    ),
  );
}

/** Saves the trust settings naming the LOTL (saved again: the kept lists are read again). */
async function followLotl() {
  const reply = await svc.call('PUT', '/api/trust-config', {
    token: admin,
    body: { federation: null, etsiTrustedLists: { lotlUrl: `${server.url}/lotl.xml`, signerCertificates: [lotlSigner.pem] } } as never,
  });
  expect(reply.status, reply.text).toBe(200);
  return reply;
}

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  expect((await svc.call('POST', '/api/issuer/credentials', { token: admin, body: PID })).status).toBe(201);
  pid = await issueCredential(svc, admin, 'pid', { given_name: 'Erika', family_name: 'Mustermann', age_over_18: true });
  const { x5c } = JSON.parse(Buffer.from(pid.credential.split('.')[0] as string, 'base64url').toString()) as { x5c: string[] };
  issuerAnchor = x5c.at(-1) as string;
  lotlSigner = await testCertificate('EU LOTL signer', { alg: 'RS256' });
  atSigner = await testCertificate('AT TL signer', { alg: 'RS256' });
  deSigner = await testCertificate('DE TL signer', { alg: 'RS256' });
  otherCa = await testCertificate('DE QC CA', { ca: true });
  server = await listServer();
});
afterAll(async () => {
  await server?.close();
  await svc?.stop();
});

async function request(id: string, dcql_query: Record<string, unknown>) {
  const config = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id, dcql_query } as never });
  expect(config.status, config.text).toBe(201);
  const offer = await svc.call('POST', '/api/verifier/offer', { token: admin, body: { response_type: 'uri', requestId: id } });
  expect(offer.status, offer.text).toBe(201);
  return { session: offer.body.session as string, resolved: await resolveRequest(offer.body.uri as string) };
}
const present = async (resolved: ResolvedRequest) =>
  submit(resolved, { pid: [await presentSdJwt(pid.credential, pid.holder, resolved, ['given_name', 'age_over_18'])] });
const sessionOf = (id: string) => svc.running.services.sessions.get('acme', id);

describe('EU trusted lists as a trust source', () => {
  it('the settings are saved, with their defaults, and a bad one is refused naming the field', async () => {
    await serve(GRANTED, 1);
    const reply = await followLotl();
    expect(reply.body.etsiTrustedLists).toMatchObject({ lotlUrl: `${server.url}/lotl.xml`, refreshHours: 24 });
    expect(reply.body.etsiTrustedLists?.purposes.credentials).toContain(PID_PROVIDER);
    const bad = await svc.call('PUT', '/api/trust-config', {
      token: admin,
      body: {
        federation: null,
        etsiTrustedLists: { lotlUrl: `${server.url}/lotl.xml`, signerCertificates: ['not a certificate'] },
      } as never,
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('etsiTrustedLists.signerCertificates.0');
    const other = (await svc.tenant('globex')).token;
    expect((await svc.call('GET', '/api/trust-config', { token: other })).body.etsiTrustedLists).toBeNull();
  });

  it('accepts a presentation whose issuer chain leads to a granted service of a national list', async () => {
    await serve(GRANTED, 1);
    await followLotl();
    const { session, resolved } = await request('pid-eu', PID_ADULT_QUERY);
    const reply = await present(resolved);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((await sessionOf(session)).status).toBe('completed');
  });

  it('a DCQL etsi_tl naming the national list matches through its verified copy', async () => {
    const query = {
      credentials: [{ ...PID_ADULT_QUERY.credentials[0], trusted_authorities: [{ type: 'etsi_tl', values: [`${server.url}/AT.xml`] }] }],
    };
    const { session, resolved } = await request('pid-eu-tl', query);
    const reply = await present(resolved);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const [kept] = ((await sessionOf(session)).private?.credentials ?? []) as Record<string, unknown>[];
    expect(kept?.authority).toEqual({ type: 'etsi_tl', values: [`${server.url}/AT.xml`] });
  });

  it('refuses the same presentation once the national list withdraws the service', async () => {
    await serve(WITHDRAWN, 2);
    await followLotl();
    const { session, resolved } = await request('pid-eu-withdrawn', PID_ADULT_QUERY);
    const reply = await present(resolved);
    expect(reply.status, JSON.stringify(reply.body)).toBe(400);
    expect(reply.body.error_description).toMatch(/untrusted issuer/);
    expect((await sessionOf(session)).status).toBe('failed');
  });
});
