// EU trusted lists (ETSI TS 119 612): a LOTL pointing to two national lists, each signed in the test
// with xml-crypto's SignedXml (enveloped, exclusive c14n, RSA-SHA256) by a test CA's certificate and
// served by a small HTTP server; svc's source reads them through the real outbound client. What is
// trusted is read from the signed lists only: a withdrawn service, a badly signed list, an expired
// one and a wrapped one give nothing, and a server gone down leaves the last good copy in use.
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OutboundClient } from '../../src/platform/outbound/client.js';
import { readList, TrustedListRefused, verifiedList } from '../../src/trust/etsi-tsl/reader.js';
import { DEFAULT_PURPOSES, type EtsiTrustedListsSettings } from '../../src/trust/etsi-tsl/settings.js';
import { EtsiTrustedLists, GRACE_MS } from '../../src/trust/etsi-tsl/source.js';
import { TestClock } from '../support/clock.js';
import { type TestCertificate, testCertificate } from '../support/test-pki.js';
import {
  CA_QC,
  GRANTED,
  listServer,
  PID_PROVIDER,
  signList,
  type TestList,
  trustedListXml,
  WALLET_PROVIDER,
  WITHDRAWN,
} from '../support/trusted-lists.js';

const DAY = 86_400_000;
let lotlSigner: TestCertificate;
let atSigner: TestCertificate;
let deSigner: TestCertificate;
let stranger: TestCertificate;
let atIssuer: TestCertificate;
let deIssuer: TestCertificate;
let walletProvider: TestCertificate;
let server: Awaited<ReturnType<typeof listServer>>;
const warnings: { details: Record<string, unknown>; message: string }[] = [];

const pem = (certificate: TestCertificate) => new X509Certificate(certificate.pem).toString().trim();
const since = new Date(Date.now() - 30 * DAY);
const tomorrow = () => new Date(Date.now() + DAY);

beforeAll(async () => {
  const rsa = (name: string) => testCertificate(name, { alg: 'RS256' });
  const ca = (name: string) => testCertificate(name, { ca: true });
  lotlSigner = await rsa('EU LOTL signer');
  atSigner = await rsa('AT TL signer');
  deSigner = await rsa('DE TL signer');
  stranger = await rsa('Stranger');
  atIssuer = await ca('AT PID provider CA');
  deIssuer = await ca('DE QC CA');
  walletProvider = await ca('Wallet provider CA');
  server = await listServer();
});
afterAll(() => server?.close());

const atList = (overrides: Partial<TestList> = {}): TestList => ({
  territory: 'AT',
  nextUpdate: tomorrow(),
  services: [
    { name: 'AT PID', type: PID_PROVIDER, certificates: [atIssuer.der], statuses: [{ status: GRANTED, since }] },
    { name: 'AT wallet', type: WALLET_PROVIDER, certificates: [walletProvider.der], statuses: [{ status: GRANTED, since }] },
  ],
  ...overrides,
});
const deList = (overrides: Partial<TestList> = {}): TestList => ({
  territory: 'DE',
  nextUpdate: tomorrow(),
  services: [{ name: 'DE QC', type: CA_QC, certificates: [deIssuer.der], statuses: [{ status: GRANTED, since }] }],
  ...overrides,
});
const lotl = (): TestList => ({
  territory: 'EU',
  nextUpdate: tomorrow(),
  pointers: [
    { location: `${server.url}/AT.xml`, territory: 'AT', signers: [atSigner.der] },
    { location: `${server.url}/AT.pdf`, territory: 'AT', signers: [atSigner.der], mimeType: 'application/pdf' },
    { location: `${server.url}/DE.xml`, territory: 'DE', signers: [deSigner.der] },
  ],
});

async function serve(at = atList(), de = deList(), signers = { at: atSigner, de: deSigner }) {
  server.served.set('/lotl.xml', await signList(trustedListXml(lotl()), lotlSigner));
  server.served.set('/AT.xml', await signList(trustedListXml(at), signers.at));
  server.served.set('/DE.xml', await signList(trustedListXml(de), signers.de));
}

const settings = (): EtsiTrustedListsSettings => ({
  lotlUrl: `${server.url}/lotl.xml`,
  signerCertificates: [lotlSigner.pem],
  refreshHours: 24,
  purposes: DEFAULT_PURPOSES,
});

function source(clock = new TestClock()) {
  return new EtsiTrustedLists({
    outbound: new OutboundClient({ allowPrivate: true }),
    settingsOf: async (tenantId) => (tenantId === 'acme' ? settings() : null),
    clock,
    log: { warn: (details, message) => warnings.push({ details, message }) },
  });
}

beforeEach(() => {
  warnings.length = 0;
  server.state.down = false;
});

describe('reading a signed trusted list', () => {
  it('reads a LOTL shaped like the EU one: scheme information, pointers with their signers and MIME types', async () => {
    const signed = await signList(trustedListXml(lotl()), lotlSigner);
    const list = readList(verifiedList(signed, [lotlSigner.pem]));
    expect(list.territory).toBe('EU');
    expect(list.sequenceNumber).toBe(1);
    expect(list.nextUpdate?.getTime()).toBeGreaterThan(Date.now());
    expect(list.pointers.map((p) => [p.territory, p.mimeType, p.location.endsWith('.xml')])).toEqual([
      ['AT', 'application/vnd.etsi.tsl+xml', true],
      ['AT', 'application/pdf', false],
      ['DE', 'application/vnd.etsi.tsl+xml', true],
    ]);
    expect(list.pointers[0]?.signers).toEqual([atSigner.der]);
  });

  it('reads services with their status history, and an Id reference to the root verifies as "" does', async () => {
    const withdrawnAt = new Date(Date.now() - DAY);
    const xml = trustedListXml(
      atList({
        services: [
          {
            name: 'Old',
            type: CA_QC,
            certificates: [atIssuer.der],
            statuses: [
              { status: WITHDRAWN, since: withdrawnAt },
              { status: GRANTED, since },
            ],
          },
        ],
      }),
    );
    const list = readList(verifiedList(await signList(xml, atSigner, '#TSL-AT'), [atSigner.der]));
    expect(list.services).toEqual([
      {
        provider: 'Provider of AT',
        type: CA_QC,
        name: 'Old',
        certificates: [atIssuer.der],
        statuses: [
          { status: WITHDRAWN, since: withdrawnAt },
          { status: GRANTED, since },
        ],
      },
    ]);
  });

  it('refuses a list signed by another key than the pinned, one changed after signing, and one with a DOCTYPE', async () => {
    const signed = await signList(trustedListXml(atList()), atSigner);
    expect(() => verifiedList(signed, [stranger.pem])).toThrow(TrustedListRefused);
    expect(() => verifiedList(signed.replace('AT PID', 'XX PID'), [atSigner.pem])).toThrow(/digest|signature/);
    expect(() => verifiedList(`<!DOCTYPE x [<!ENTITY a "b">]>${signed.replace(/^<\?xml[^>]*>/, '')}`, [atSigner.pem])).toThrow(/DOCTYPE/);
    expect(() => verifiedList(trustedListXml(atList()), [atSigner.pem])).toThrow(/exactly one XML signature/);
  });

  it('refuses a wrapping attack: an unsigned TrustServiceProviderList inserted beside the signed one', async () => {
    const signed = await signList(trustedListXml(atList()), atSigner, '#TSL-AT');
    const injected = `<tsl:TrustServiceProviderList><tsl:TrustServiceProvider><tsl:TSPServices><tsl:TSPService><tsl:ServiceInformation><tsl:ServiceTypeIdentifier>${CA_QC}</tsl:ServiceTypeIdentifier><tsl:ServiceDigitalIdentity><tsl:DigitalId><tsl:X509Certificate>${stranger.der}</tsl:X509Certificate></tsl:DigitalId></tsl:ServiceDigitalIdentity><tsl:ServiceStatus>${GRANTED}</tsl:ServiceStatus><tsl:StatusStartingTime>${since.toISOString()}</tsl:StatusStartingTime></tsl:ServiceInformation></tsl:TSPService></tsl:TSPServices></tsl:TrustServiceProvider></tsl:TrustServiceProviderList>`;
    // Inserted into the signed list: its digest no longer matches.
    const inside = signed.replace('</tsl:SchemeInformation>', `</tsl:SchemeInformation>${injected}`);
    expect(() => verifiedList(inside, [atSigner.pem])).toThrow(TrustedListRefused);
    // The signed list moved under a new root that carries the attacker's list: not a list whose signature covers it.
    const body = signed.replace(/^<\?xml[^>]*>\s*/, '');
    const wrapped = `<tsl:TrustServiceStatusList xmlns:tsl="http://uri.etsi.org/02231/v2#" Id="evil">${injected}<tsl:Wrapper>${body}</tsl:Wrapper></tsl:TrustServiceStatusList>`;
    expect(() => verifiedList(wrapped, [atSigner.pem])).toThrow(TrustedListRefused);
    // The signature moved to the new root, still naming the signed list nested inside: it does not cover the whole document.
    const signatureXml = body.match(/<ds:Signature[\s\S]*<\/ds:Signature>/)?.[0] ?? '';
    const nested = body.replace(signatureXml, '');
    const moved = `<tsl:TrustServiceStatusList xmlns:tsl="http://uri.etsi.org/02231/v2#" Id="evil">${injected}<tsl:Wrapper>${nested}</tsl:Wrapper>${signatureXml}</tsl:TrustServiceStatusList>`;
    expect(() => verifiedList(moved, [atSigner.pem])).toThrow(/one reference, to the whole list/);
    // Under the signed list's own Id: two elements of one Id are refused.
    expect(() => verifiedList(moved.replace('Id="evil"', 'Id="TSL-AT"'), [atSigner.pem])).toThrow(TrustedListRefused);
  });
});

describe('the LOTL trust source', () => {
  it('follows the LOTL to both national lists (XML ones only) and trusts their granted services by purpose', async () => {
    await serve();
    const lists = source();
    const before = server.state.requests;
    const [issuers, wallets] = await Promise.all([
      lists.certificates('acme', 'credentials'),
      lists.certificates('acme', 'walletAttestations'),
    ]);
    expect(issuers.sort()).toEqual([pem(atIssuer), pem(deIssuer)].sort());
    expect(wallets).toEqual([pem(walletProvider)]);
    // One shared refresh: the LOTL and the two XML lists, not the PDF one, fetched once.
    expect(server.state.requests - before).toBe(3);
    // Later questions read the kept copy.
    await lists.certificates('acme', 'credentials');
    expect(server.state.requests - before).toBe(3);
    expect(lists.summary('acme').map((kept) => kept.territory)).toEqual(['EU', 'AT', 'DE']);
    expect(await lists.certificates('globex', 'credentials')).toEqual([]);
    expect(lists.verifiedCertificates(`${server.url}/DE.xml`)).toEqual([pem(deIssuer)]);
  });

  it('a withdrawn service stops counting from its StatusStartingTime', async () => {
    const clock = new TestClock();
    const withdrawnFrom = new Date(Date.now() + 2 * 3_600_000);
    await serve(
      atList(),
      deList({
        services: [
          {
            name: 'DE QC',
            type: CA_QC,
            certificates: [deIssuer.der],
            statuses: [
              { status: WITHDRAWN, since: withdrawnFrom },
              { status: GRANTED, since },
            ],
          },
        ],
      }),
    );
    const lists = source(clock);
    expect(await lists.certificates('acme', 'credentials')).toContain(pem(deIssuer));
    clock.advance(3 * 3_600_000);
    expect(await lists.certificates('acme', 'credentials')).toEqual([pem(atIssuer)]);
  });

  it('skips a national list with a bad signature and still uses the other', async () => {
    await serve(atList(), deList(), { at: atSigner, de: stranger });
    const lists = source();
    expect(await lists.certificates('acme', 'credentials')).toEqual([pem(atIssuer)]);
    expect(warnings.map((w) => w.details.url)).toEqual([`${server.url}/DE.xml`]);
    expect(String(warnings[0]?.details.err)).toMatch(/signed by none|does not verify/);
  });

  it('an expired list counts through its grace period, then no more', async () => {
    const clock = new TestClock();
    await serve(atList({ nextUpdate: new Date(Date.now() + 60_000) }));
    const lists = source(clock);
    expect(await lists.certificates('acme', 'credentials')).toContain(pem(atIssuer));
    server.state.down = true;
    clock.advance(GRACE_MS / 2);
    expect(await lists.certificates('acme', 'credentials')).toContain(pem(atIssuer));
    clock.advance(GRACE_MS);
    expect(await lists.certificates('acme', 'credentials')).toEqual([pem(deIssuer)]);
  });

  it('keeps the last good copy when the server goes down, and takes a new one when it is back', async () => {
    await serve();
    const lists = source();
    expect(await lists.certificates('acme', 'credentials')).toHaveLength(2);
    server.state.down = true;
    await lists.refreshNow('acme');
    expect(await lists.certificates('acme', 'credentials')).toHaveLength(2);
    expect(warnings[0]?.message).toMatch(/LOTL was not refreshed/);
    server.state.down = false;
    await serve(atList({ sequenceNumber: 2, services: [] }));
    await lists.refreshNow('acme');
    expect(await lists.certificates('acme', 'credentials')).toEqual([pem(deIssuer)]);
  });

  it('refuses an older list replayed after a newer one', async () => {
    await serve(atList({ sequenceNumber: 5 }));
    const lists = source();
    await lists.certificates('acme', 'credentials');
    await serve(atList({ sequenceNumber: 4, services: [] }));
    await lists.refreshNow('acme');
    expect(await lists.certificates('acme', 'credentials')).toContain(pem(atIssuer));
    expect(String(warnings[0]?.details.err)).toMatch(/TSLSequenceNumber 4 is older/);
  });

  it('trusts nothing when the LOTL is not signed by a pinned certificate', async () => {
    await serve();
    server.served.set('/lotl.xml', await signList(trustedListXml(lotl()), stranger));
    expect(await source().certificates('acme', 'credentials')).toEqual([]);
    expect(warnings[0]?.details.url).toBe(`${server.url}/lotl.xml`);
  });
});
