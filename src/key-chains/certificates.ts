// Certificate profiles. Roots follow the ISO 18013-5 IACA profile and attestation leaves the
// document-signer profile (Annex B), so mdoc verifiers accept them; the same roots and leaves serve
// SD-JWT VC, status lists, trust lists and access certificates.
// Loaded on first use (material.ts): certificates are made when a key chain is created or rotated.
import { randomBytes, type webcrypto, type X509Certificate } from 'node:crypto';
import { x509 } from '../platform/crypto/x509-library.js';

/** id-mdl-kp-mdlDS, the extended key usage of an mdoc document signer (ISO 18013-5). */
export const MDL_DOCUMENT_SIGNER_EKU = '1.0.18013.5.1.2';
const DAY = 86_400_000;

export interface Subject {
  commonName: string;
  organization?: string;
  /** ISO 3166-1 alpha-2; mandatory in the IACA and document-signer profiles. */
  country: string;
}

export interface Links {
  /** Identifies the issuing authority (IssuerAltName, mandatory in the ISO profiles). */
  issuerUri: string;
  /** Where the issuing CA publishes its CRL (mandatory in the ISO profiles). */
  crlUri: string;
}

export interface LeafOptions {
  dnsName: string;
  uri: string;
  validityDays: number;
  /** Adds the document-signer extended key usage. */
  documentSigner: boolean;
  keyAgreement?: boolean;
}

type Key = webcrypto.CryptoKey;

function distinguishedName(subject: Subject): string {
  const escapeValue = (v: string) => v.replace(/([,+"\\<>;=])/g, '\\$1');
  const parts = [`C=${escapeValue(subject.country)}`];
  if (subject.organization) parts.push(`O=${escapeValue(subject.organization)}`);
  parts.push(`CN=${escapeValue(subject.commonName)}`);
  return parts.join(', ');
}

/** A positive serial of 16 random bytes (at most 20 octets, as RFC 5280 requires). */
const serialNumber = () => `01${randomBytes(15).toString('hex')}`;

const linkExtensions = (links: Links) => [
  new x509.IssuerAlternativeNameExtension([{ type: 'url', value: links.issuerUri }]),
  new x509.CRLDistributionPointsExtension([links.crlUri]),
];

/** What every certificate here shares: a random serial, a minute of clock-skew slack, ECDSA. */
async function generate(options: {
  subject: string;
  issuer: string;
  publicKey: Key;
  signingKey: Key;
  validityDays: number;
  hash: string;
  extensions: x509.Extension[];
}) {
  const now = Date.now();
  return x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: options.subject,
    issuer: options.issuer,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + options.validityDays * DAY),
    publicKey: options.publicKey,
    signingKey: options.signingKey,
    signingAlgorithm: { name: 'ECDSA', hash: options.hash },
    extensions: options.extensions,
  });
}

/** A self-signed CA (IACA profile): CA, path length 0, keyCertSign and cRLSign, ten years. */
export async function createRootCertificate(keys: { publicKey: Key; privateKey: Key }, subject: Subject, links: Links, hash: string) {
  const name = distinguishedName(subject);
  return generate({
    subject: name,
    issuer: name,
    publicKey: keys.publicKey,
    signingKey: keys.privateKey,
    validityDays: 3650,
    hash,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ...linkExtensions(links),
    ],
  });
}

function leafExtensions(options: LeafOptions) {
  const usage = options.keyAgreement ? x509.KeyUsageFlags.keyAgreement : x509.KeyUsageFlags.digitalSignature;
  return [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(usage, true),
    new x509.SubjectAlternativeNameExtension([
      { type: 'dns', value: options.dnsName },
      { type: 'url', value: options.uri },
    ]),
    ...(options.documentSigner ? [new x509.ExtendedKeyUsageExtension([MDL_DOCUMENT_SIGNER_EKU], true)] : []),
  ];
}

/** A leaf signed by `issuer` (document-signer profile when asked): AKI, SKI, SAN with the service's host. */
export async function createLeafCertificate(
  publicKey: Key,
  issuer: { certificate: X509Certificate; signingKey: Key },
  subject: Subject,
  links: Links,
  options: LeafOptions,
  hash: string,
) {
  const issuerCertificate = new x509.X509Certificate(issuer.certificate.raw);
  return generate({
    subject: distinguishedName(subject),
    issuer: issuerCertificate.subject,
    publicKey,
    signingKey: issuer.signingKey,
    validityDays: options.validityDays,
    hash,
    extensions: [
      ...leafExtensions(options),
      await x509.SubjectKeyIdentifierExtension.create(publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(issuerCertificate.publicKey),
      ...linkExtensions(links),
    ],
  });
}

/** A self-signed leaf: the certificate is its own trust anchor (standalone key chains). */
export async function createSelfSignedCertificate(
  keys: { publicKey: Key; privateKey: Key },
  subject: Subject,
  links: Links,
  options: LeafOptions,
  hash: string,
) {
  const name = distinguishedName(subject);
  return generate({
    subject: name,
    issuer: name,
    publicKey: keys.publicKey,
    signingKey: keys.privateKey,
    validityDays: options.validityDays,
    hash,
    extensions: [...leafExtensions(options), await x509.SubjectKeyIdentifierExtension.create(keys.publicKey), ...linkExtensions(links)],
  });
}

/** An empty CRL signed by the chain's CA: nothing is revoked, and verifiers that fetch it see so. */
export async function createCrl(issuer: { certificate: X509Certificate; signingKey: Key }, hash: string, validityDays = 7) {
  const now = Date.now();
  const issuerCertificate = new x509.X509Certificate(issuer.certificate.raw);
  return x509.X509CrlGenerator.create({
    issuer: issuerCertificate.subject,
    thisUpdate: new Date(now),
    nextUpdate: new Date(now + validityDays * DAY),
    entries: [],
    signingKey: issuer.signingKey,
    signingAlgorithm: { name: 'ECDSA', hash },
    extensions: [await x509.AuthorityKeyIdentifierExtension.create(issuerCertificate.publicKey)],
  });
}
