// The certificates and CRLs the service writes as DER (src/platform/crypto/der.ts), read back by two
// independent implementations, @peculiar/x509 and the openssl command: the ISO 18013-5 profile
// extension by extension, the chain and CRL signatures, and key identifiers that match roots made
// earlier by @peculiar/x509 itself.
import 'reflect-metadata';
import { spawnSync } from 'node:child_process';
import { createHash, X509Certificate as NodeX509, webcrypto } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createCrl,
  createLeafCertificate,
  createSelfSignedCertificate,
  MDL_DOCUMENT_SIGNER_EKU,
} from '../../src/key-chains/certificates.js';
import { startService, type TestService } from '../support/service.js';

x509.cryptoProvider.set(crypto); // the global Web Crypto (node:crypto webcrypto)

const PUBLIC_URL = 'https://issuer.example.com';
const ISSUER_URI = `${PUBLIC_URL}/issuers/acme`;
const crlUri = (keyChainId: string) => `${ISSUER_URI}/key-chains/${keyChainId}/crl`;
const DAY = 86_400_000;

const OID = {
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  extKeyUsage: '2.5.29.37',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  issuerAltName: '2.5.29.18',
  crlDistributionPoints: '2.5.29.31',
  crlNumber: '2.5.29.20',
};

let svc: TestService;
let token: string;
let dir: string;
let startedAt: number;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'certificate-profile-'));
  startedAt = Date.now();
  svc = await startService({ PUBLIC_URL, CERTIFICATE_COUNTRY: 'DE' });
  token = (await svc.tenant('acme')).token;
});
afterAll(async () => {
  await svc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let fileCount = 0;
function tempFile(content: string | Uint8Array): string {
  const path = join(dir, `${fileCount++}`);
  writeFileSync(path, content);
  return path;
}

/** Runs openssl; its verdicts ("OK", "verify OK") go to stdout or stderr depending on the command. */
function openssl(...args: string[]): string {
  const run = spawnSync('openssl', args, { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${run.stderr}`);
  return `${run.stdout}${run.stderr}`;
}

const opensslText = (pem: string) => openssl('x509', '-noout', '-text', '-nameopt', 'multiline,show_type', '-in', tempFile(pem));
const opensslVerify = (pem: string, anchor: string) => openssl('verify', '-x509_strict', '-CAfile', tempFile(anchor), tempFile(pem));

/** The text openssl prints under an extension's heading, whitespace collapsed. */
function opensslExtension(text: string, heading: string): string {
  const match = new RegExp(`${heading}:( critical)? *\\n((?:\\s{16}.*\\n)+)`).exec(text);
  if (!match) throw new Error(`no ${heading} in\n${text}`);
  return `${match[1] ? 'critical ' : ''}${(match[2] as string).replace(/\s+/g, ' ').trim()}`;
}

const keyChain = async (id: string) => {
  const reply = await svc.raw('GET', `/api/key-chain/${id}`, { token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body as { rootCertificate?: string; activeCertificate: string };
};

const hex = (bytes: ArrayBuffer | Uint8Array) => Buffer.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)).toString('hex');
const ski = (cert: x509.X509Certificate) => cert.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
const aki = (item: x509.X509Certificate | x509.X509Crl) => item.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId;

/** SHA-1 of the subjectPublicKey BIT STRING's value, read by @peculiar/x509 (RFC 5280 4.2.1.2, method 1). */
async function expectedKeyId(cert: x509.X509Certificate) {
  return hex(await cert.publicKey.getKeyIdentifier('SHA-1', crypto));
}

function expectExtensions(cert: x509.X509Certificate, expected: [string, boolean][]) {
  expect(cert.extensions.map((e) => [e.type, e.critical])).toEqual(expected);
}

/** ecdsa-with-SHA256's AlgorithmIdentifier: the OID alone, no NULL parameters. */
const ECDSA_WITH_SHA256 = '300a06082a8648ce3d040302';
/** In the TBS and around the signature: twice. */
const occurrences = (text: string, part: string) => text.split(part).length - 1;

function expectCommonFields(cert: x509.X509Certificate, pem: string, validityDays: number) {
  expect(cert.serialNumber).toMatch(/^01[0-9a-f]{30}$/);
  const notBefore = cert.notBefore.getTime();
  expect(notBefore).toBeGreaterThanOrEqual(Math.floor((startedAt - 61_000) / 1000) * 1000);
  expect(notBefore).toBeLessThanOrEqual(Date.now() - 59_000);
  expect(cert.notAfter.getTime() - notBefore).toBe(validityDays * DAY + 60_000);
  const text = opensslText(pem);
  expect(text).toContain('Version: 3 (0x2)');
  expect(text).toContain('Signature Algorithm: ecdsa-with-SHA256');
  return text;
}

describe('the internal chain of the default attestation key chain', () => {
  it('has a root in the IACA profile, self-signed, that openssl accepts as a CA', async () => {
    const pem = (await keyChain('default-attestation')).rootCertificate as string;
    const root = new x509.X509Certificate(pem);
    const text = expectCommonFields(root, pem, 3650);
    expect(occurrences(hex(new Uint8Array(root.rawData)), ECDSA_WITH_SHA256)).toBe(2);
    expect(root.subject).toBe('C=DE, O=acme, CN=acme attestation CA');
    expect(root.issuer).toBe(root.subject);
    expect(text).toMatch(/countryName\s+= PRINTABLESTRING:DE/);
    expect(text).toMatch(/commonName\s+= PRINTABLESTRING:acme attestation CA/);
    expect(await root.verify({ signatureOnly: true })).toBe(true);
    expect(opensslVerify(pem, pem)).toContain(': OK');

    expectExtensions(root, [
      [OID.basicConstraints, true],
      [OID.keyUsage, true],
      [OID.subjectKeyIdentifier, false],
      [OID.issuerAltName, false],
      [OID.crlDistributionPoints, false],
    ]);
    const constraints = root.getExtension(x509.BasicConstraintsExtension);
    expect([constraints?.ca, constraints?.pathLength]).toEqual([true, 0]);
    expect(root.getExtension(x509.KeyUsagesExtension)?.usages).toBe(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);
    expect(ski(root)).toBe(await expectedKeyId(root));
    expect(opensslExtension(text, 'X509v3 Basic Constraints')).toBe('critical CA:TRUE, pathlen:0');
    expect(opensslExtension(text, 'X509v3 Key Usage')).toBe('critical Certificate Sign, CRL Sign');
    expect(opensslExtension(text, 'X509v3 Issuer Alternative Name')).toBe(`URI:${ISSUER_URI}`);
    expect(opensslExtension(text, 'X509v3 CRL Distribution Points')).toBe(`Full Name: URI:${crlUri('default-attestation')}`);
  });

  it('has a document-signer leaf that verifies against the root and names it byte for byte', async () => {
    const chain = await keyChain('default-attestation');
    const root = new x509.X509Certificate(chain.rootCertificate as string);
    const leaf = new x509.X509Certificate(chain.activeCertificate);
    const text = expectCommonFields(leaf, chain.activeCertificate, 365);
    expect(leaf.subject).toBe('C=DE, O=acme, CN=acme attestation');
    expect(hex(leaf.issuerName.toArrayBuffer())).toBe(hex(root.subjectName.toArrayBuffer()));
    expect(await leaf.verify({ publicKey: root.publicKey, signatureOnly: true })).toBe(true);
    expect(opensslVerify(chain.activeCertificate, chain.rootCertificate as string)).toContain(': OK');
    expect(new NodeX509(chain.activeCertificate).checkIssued(new NodeX509(chain.rootCertificate as string))).toBe(true);

    expectExtensions(leaf, [
      [OID.basicConstraints, true],
      [OID.keyUsage, true],
      [OID.subjectAltName, false],
      [OID.extKeyUsage, true],
      [OID.subjectKeyIdentifier, false],
      [OID.authorityKeyIdentifier, false],
      [OID.issuerAltName, false],
      [OID.crlDistributionPoints, false],
    ]);
    expect(leaf.getExtension(x509.BasicConstraintsExtension)?.ca).toBe(false);
    expect(leaf.getExtension(x509.KeyUsagesExtension)?.usages).toBe(x509.KeyUsageFlags.digitalSignature);
    expect(leaf.getExtension(x509.ExtendedKeyUsageExtension)?.usages).toEqual([MDL_DOCUMENT_SIGNER_EKU]);
    expect(ski(leaf)).toBe(await expectedKeyId(leaf));
    expect(aki(leaf)).toBe(ski(root));
    expect(opensslExtension(text, 'X509v3 Basic Constraints')).toBe('critical CA:FALSE');
    expect(opensslExtension(text, 'X509v3 Key Usage')).toBe('critical Digital Signature');
    expect(opensslExtension(text, 'X509v3 Subject Alternative Name')).toBe(`DNS:issuer.example.com, URI:${ISSUER_URI}`);
    expect(opensslExtension(text, 'X509v3 Extended Key Usage')).toBe(`critical ${MDL_DOCUMENT_SIGNER_EKU}`);
    expect(opensslExtension(text, 'X509v3 Authority Key Identifier')).toBe(
      opensslExtension(opensslText(chain.rootCertificate as string), 'X509v3 Subject Key Identifier'),
    );
  });

  it('is served as one PEM file, leaf then root, each block on its own lines', async () => {
    const chain = await keyChain('default-attestation');
    const reply = await svc.raw('GET', '/api/key-chain/default-attestation/certificate', { token });
    expect(reply.status).toBe(200);
    // RFC 7468 text: a block ends with its own line break and the next begins on the following line.
    const block = '-----BEGIN CERTIFICATE-----\n(?:[A-Za-z0-9+/=]{1,64}\n)+-----END CERTIFICATE-----\n';
    expect(reply.text).toMatch(new RegExp(`^${block}${block}$`));
    const [leaf, root] = reply.text.split(/(?<=-----END CERTIFICATE-----\n)/);
    expect(new NodeX509(leaf as string).raw).toEqual(new NodeX509(chain.activeCertificate).raw);
    expect(new NodeX509(root as string).raw).toEqual(new NodeX509(chain.rootCertificate as string).raw);
  });

  it('publishes a v2 CRL that the root signed, with the root as authority key', async () => {
    const chain = await keyChain('default-attestation');
    const reply = await fetch(`${svc.url}/issuers/acme/key-chains/default-attestation/crl`);
    expect(reply.status).toBe(200);
    const der = new Uint8Array(await reply.arrayBuffer());
    const crl = new x509.X509Crl(der);
    const root = new x509.X509Certificate(chain.rootCertificate as string);
    expect(await crl.verify({ publicKey: root.publicKey })).toBe(true);
    expect(crl.version).toBe(1);
    expect(crl.issuer).toBe(root.subject);
    expect(crl.entries).toEqual([]);
    expect(crl.extensions.map((e) => [e.type, e.critical])).toEqual([
      [OID.authorityKeyIdentifier, false],
      [OID.crlNumber, false],
    ]);
    // cRLNumber grows with time: the CRL's thisUpdate in seconds.
    const crlNumber = crl.extensions.find((e) => e.type === OID.crlNumber);
    const crlNumberContent = Buffer.from(crlNumber?.value ?? new ArrayBuffer(0)).subarray(2); // the INTEGER past its tag and length
    expect(crlNumberContent.readUIntBE(0, crlNumberContent.length)).toBe(Math.floor(crl.thisUpdate.getTime() / 1000));
    expect(aki(crl)).toBe(ski(root));
    expect((crl.nextUpdate?.getTime() ?? 0) - crl.thisUpdate.getTime()).toBe(7 * DAY);

    const text = openssl(
      'crl',
      '-inform',
      'DER',
      '-in',
      tempFile(der),
      '-CAfile',
      tempFile(chain.rootCertificate as string),
      '-noout',
      '-text',
    );
    expect(text).toContain('verify OK');
    expect(text).toContain('Version 2 (0x1)');
    expect(text).toContain('No Revoked Certificates.');
    expect(opensslExtension(text, 'X509v3 CRL Number')).toBe(String(Math.floor(crl.thisUpdate.getTime() / 1000)));
    expect(opensslExtension(text, 'X509v3 Authority Key Identifier')).toBe(
      opensslExtension(opensslText(chain.rootCertificate as string), 'X509v3 Subject Key Identifier'),
    );
  });
});

describe('the default encryption key chain', () => {
  it('has a key-agreement leaf issued by its root CA, verified by openssl against that root alone', async () => {
    const chain = await keyChain('default-encrypt');
    const pem = chain.activeCertificate;
    const cert = new x509.X509Certificate(pem);
    const root = new x509.X509Certificate(chain.rootCertificate as string);
    const text = expectCommonFields(cert, pem, 365);
    expect(cert.issuer).toBe(root.subject);
    expect(cert.issuer).not.toBe(cert.subject);
    expect(await cert.verify({ publicKey: root.publicKey, signatureOnly: true })).toBe(true);
    expect(opensslVerify(pem, chain.rootCertificate as string)).toContain(': OK');
    expect(aki(cert)).toBe(ski(root));
    expect(cert.getExtension(x509.KeyUsagesExtension)?.usages).toBe(x509.KeyUsageFlags.keyAgreement);
    expect(opensslExtension(text, 'X509v3 Key Usage')).toBe('critical Key Agreement');
  });
});

describe('standalone key chains', () => {
  it('make a self-signed key-agreement certificate for an encryption key chain', async () => {
    const created = await svc.raw('POST', '/api/key-chain', {
      token,
      body: { id: 'encrypt-standalone', usageType: 'encrypt', type: 'standalone' },
    });
    expect(created.status, created.text).toBe(201);
    const pem = created.body.activeCertificate as string;
    const cert = new x509.X509Certificate(pem);
    const text = expectCommonFields(cert, pem, 365);
    expect(cert.issuer).toBe(cert.subject);
    expect(await cert.verify({ signatureOnly: true })).toBe(true);
    expect(opensslVerify(pem, pem)).toContain(': OK');
    expectExtensions(cert, [
      [OID.basicConstraints, true],
      [OID.keyUsage, true],
      [OID.subjectAltName, false],
      [OID.subjectKeyIdentifier, false],
      [OID.issuerAltName, false],
      [OID.crlDistributionPoints, false],
    ]);
    expect(cert.getExtension(x509.KeyUsagesExtension)?.usages).toBe(x509.KeyUsageFlags.keyAgreement);
    expect(ski(cert)).toBe(await expectedKeyId(cert));
    expect(opensslExtension(text, 'X509v3 Key Usage')).toBe('critical Key Agreement');
  });

  it('sign with SHA-384 and SHA-512 for ES384 and ES512, and write UTF8String only where PrintableString cannot hold the name', async () => {
    for (const [algorithm, name, algorithmIdentifier] of [
      ['ES384', 'ecdsa-with-SHA384', '300a06082a8648ce3d040303'],
      ['ES512', 'ecdsa-with-SHA512', '300a06082a8648ce3d040304'],
    ] as const) {
      const reply = await svc.raw('POST', '/api/key-chain', {
        token,
        body: {
          usageType: 'access',
          type: 'standalone',
          algorithm,
          certValidityDays: 30,
          subject: { commonName: 'Zoë & Co', organization: "Acme (Europe), O'Neil", country: 'NL' },
        },
      });
      expect(reply.status, reply.text).toBe(201);
      const pem = reply.body.activeCertificate as string;
      const cert = new x509.X509Certificate(pem);
      expect(cert.signatureAlgorithm).toMatchObject({ name: 'ECDSA', hash: { name: algorithm.replace('ES', 'SHA-') } });
      const text = opensslText(pem);
      expect(text).toContain(`Signature Algorithm: ${name}`);
      expect(text).toMatch(/organizationName\s+= PRINTABLESTRING:Acme \(Europe\), O'Neil/);
      expect(text).toMatch(/commonName\s+= UTF8STRING:/);
      expect(cert.subjectName.getField('CN')).toEqual(['Zoë & Co']);
      expect(opensslVerify(pem, pem)).toContain(': OK');
      expect(occurrences(hex(new Uint8Array(cert.rawData)), algorithmIdentifier)).toBe(2);
    }
  });

  it('publish a CRL signed by the self-signed certificate', async () => {
    const created = await svc.raw('POST', '/api/key-chain', {
      token,
      body: { id: 'access-standalone', usageType: 'access', type: 'standalone' },
    });
    expect(created.status, created.text).toBe(201);
    const pem = created.body.activeCertificate as string;
    const reply = await fetch(`${svc.url}/issuers/acme/key-chains/access-standalone/crl`);
    const der = new Uint8Array(await reply.arrayBuffer());
    const cert = new x509.X509Certificate(pem);
    const crl = new x509.X509Crl(der);
    expect(await crl.verify({ publicKey: cert.publicKey })).toBe(true);
    expect(aki(crl)).toBe(ski(cert));
    expect(openssl('crl', '-inform', 'DER', '-in', tempFile(der), '-CAfile', tempFile(pem), '-noout')).toContain('verify OK');
  });
});

describe('a subject without an organization', () => {
  // The service always names one (the tenant id by default); the writer leaves the RDN out when it is not given.
  it('is C and CN alone, and the certificate verifies', async () => {
    const keys = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
    const pem = await createSelfSignedCertificate(
      keys,
      { commonName: 'No Org', country: 'NL' },
      { issuerUri: ISSUER_URI, crlUri: crlUri('no-org') },
      { dnsName: 'issuer.example.com', uri: ISSUER_URI, validityDays: 30, documentSigner: false },
      'SHA-256',
      new Date(),
    );
    const cert = new x509.X509Certificate(pem);
    expect(cert.subject).toBe('C=NL, CN=No Org');
    expect(cert.issuer).toBe(cert.subject);
    expect(await cert.verify({ signatureOnly: true })).toBe(true);
    expect(opensslVerify(pem, pem)).toContain(': OK');
  });
});

describe('a leaf under a root that @peculiar/x509 made (chains from before DER)', () => {
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256' };
  const links = { issuerUri: ISSUER_URI, crlUri: crlUri('old') };

  /** The root as the earlier generator made it, with @peculiar/x509's own key identifier. */
  async function oldRoot() {
    const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
    const now = Date.now();
    const certificate = await x509.X509CertificateGenerator.create({
      serialNumber: '01020304',
      subject: 'C=DE, O=Old Org, CN=Old CA',
      issuer: 'C=DE, O=Old Org, CN=Old CA',
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + 3650 * DAY),
      publicKey: keys.publicKey,
      signingKey: keys.privateKey,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
        new x509.IssuerAlternativeNameExtension([{ type: 'url', value: links.issuerUri }]),
        new x509.CRLDistributionPointsExtension([links.crlUri]),
      ],
    });
    return { keys, certificate, pem: certificate.toString('pem') };
  }

  it('carries the old root SKI as its AKI, by @peculiar/x509 and by openssl, and verifies under it', async () => {
    const root = await oldRoot();
    const leafKeys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
    const pem = await createLeafCertificate(
      leafKeys.publicKey,
      { certificate: new NodeX509(root.pem), signingKey: root.keys.privateKey },
      { commonName: 'New leaf', organization: 'Old Org', country: 'DE' },
      links,
      { dnsName: 'issuer.example.com', uri: ISSUER_URI, validityDays: 365, documentSigner: true },
      'SHA-256',
      new Date(),
    );
    const leaf = new x509.X509Certificate(pem);
    expect(aki(leaf)).toBe(ski(root.certificate));
    // The same value from the raw key, with node:crypto alone: SHA-1 over the uncompressed EC point.
    const jwk = await webcrypto.subtle.exportKey('jwk', root.keys.publicKey);
    const point = Buffer.concat([Buffer.of(4), Buffer.from(jwk.x as string, 'base64url'), Buffer.from(jwk.y as string, 'base64url')]);
    expect(aki(leaf)).toBe(createHash('sha1').update(point).digest('hex'));
    expect(opensslExtension(opensslText(pem), 'X509v3 Authority Key Identifier')).toBe(
      opensslExtension(opensslText(root.pem), 'X509v3 Subject Key Identifier'),
    );
    expect(hex(leaf.issuerName.toArrayBuffer())).toBe(hex(root.certificate.subjectName.toArrayBuffer()));
    expect(await leaf.verify({ publicKey: root.certificate.publicKey, signatureOnly: true })).toBe(true);
    expect(opensslVerify(pem, root.pem)).toContain(': OK');

    const crl = new x509.X509Crl(
      new Uint8Array(await createCrl({ certificate: new NodeX509(root.pem), signingKey: root.keys.privateKey }, 'SHA-256', new Date())),
    );
    expect(await crl.verify({ publicKey: root.certificate.publicKey })).toBe(true);
    expect(aki(crl)).toBe(ski(root.certificate));
  });
});
