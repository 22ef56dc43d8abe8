// Certificate profiles. Roots follow the ISO 18013-5 IACA profile and attestation leaves the
// document-signer profile (Annex B), so mdoc verifiers accept them; the same roots and leaves serve
// SD-JWT VC, status lists, trust lists and access certificates.
// Written as DER directly (platform/crypto/der.ts) rather than with a certificate library: a
// tenant's default key chains are made when it is created, and the library with its ASN.1 stack
// would then stay in memory for good. The profile is the one @peculiar/x509 produced before, so
// chains made then and now fit together (same key identifiers, same names).
import { randomBytes, type webcrypto, type X509Certificate } from 'node:crypto';
import type { ALGORITHM_PARAMS, SigningAlgorithm } from '../platform/crypto/algorithms.js';
import { cryptoWithDelegatedKeys } from '../platform/crypto/delegated-keys.js';
import {
  bitString,
  boolean,
  certificateSubject,
  type Der,
  ecdsaSignatureToDer,
  explicit,
  ia5String,
  implicit,
  namedBits,
  objectIdentifier,
  octetString,
  PRINTABLE,
  printableString,
  sequence,
  set,
  smallInteger,
  subjectPublicKey,
  time,
  toPem,
  unsignedInteger,
  utf8String,
} from '../platform/crypto/der.js';

/** id-mdl-kp-mdlDS, the extended key usage of an mdoc document signer (ISO 18013-5). */
export const MDL_DOCUMENT_SIGNER_EKU = '1.0.18013.5.1.2';
const DAY = 86_400_000;

export interface Subject {
  commonName: string;
  organization?: string;
  /** ISO 3166-1 alpha-2; mandatory in the IACA and document-signer profiles. */
  country: string;
}

/** RFC 5280 Appendix A: the upper bounds (ub-common-name, ub-organization-name, ub-country-name) of the attributes written, in characters. */
export const SUBJECT_UPPER_BOUNDS: Record<keyof Subject, number> = { commonName: 64, organization: 64, country: 2 };
/** What an internal chain's root CA adds to the chain's common name. */
export const ROOT_COMMON_NAME_SUFFIX = ' CA';
export const rootSubject = (subject: Subject): Subject => ({ ...subject, commonName: `${subject.commonName}${ROOT_COMMON_NAME_SUFFIX}` });
/** The longest common name of a chain: with a root CA, its name must fit too. */
export const maxCommonName = (withRoot: boolean) => SUBJECT_UPPER_BOUNDS.commonName - (withRoot ? ROOT_COMMON_NAME_SUFFIX.length : 0);

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
type Hash = (typeof ALGORITHM_PARAMS)[SigningAlgorithm]['hash'];

const OID = {
  countryName: '2.5.4.6',
  organizationName: '2.5.4.10',
  commonName: '2.5.4.3',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  issuerAltName: '2.5.29.18',
  basicConstraints: '2.5.29.19',
  crlDistributionPoints: '2.5.29.31',
  crlNumber: '2.5.29.20',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
} as const;

/** ecdsa-with-SHA256/384/512 (RFC 5758 3.2); their AlgorithmIdentifier has no parameters. */
const SIGNATURE_OID: Record<Hash, string> = {
  'SHA-256': '1.2.840.10045.4.3.2',
  'SHA-384': '1.2.840.10045.4.3.3',
  'SHA-512': '1.2.840.10045.4.3.4',
};

/** KeyUsage bit numbers (RFC 5280 4.2.1.3). */
const KEY_USAGE = { digitalSignature: 0, keyAgreement: 4, keyCertSign: 5, cRLSign: 6 } as const;

/** GeneralName choices (RFC 5280 4.2.1.6), both IA5String under an implicit tag. */
const dnsName = (value: string) => implicit(2, ia5String(value));
const uri = (value: string) => implicit(6, ia5String(value));

const signatureAlgorithm = (hash: Hash): Der => sequence(objectIdentifier(SIGNATURE_OID[hash]));

/** PrintableString when the value allows it, else UTF8String, as the earlier certificates had. */
const directoryString = (value: string) => (PRINTABLE.test(value) ? printableString(value) : utf8String(value));

/** C, O (when given), CN: one attribute per RDN, in that order. */
function distinguishedName(subject: Subject): Der {
  const attribute = (oid: string, value: string) => set(sequence(objectIdentifier(oid), directoryString(value)));
  return sequence(
    attribute(OID.countryName, subject.country),
    ...(subject.organization ? [attribute(OID.organizationName, subject.organization)] : []),
    attribute(OID.commonName, subject.commonName),
  );
}

function extension(oid: string, critical: boolean, value: Der): Der {
  return sequence(objectIdentifier(oid), ...(critical ? [boolean(true)] : []), octetString(value));
}

/** A positive serial of 16 random bytes (at most 20 octets, as RFC 5280 requires). */
const serialNumber = () => unsignedInteger(Buffer.concat([Uint8Array.of(0x01), randomBytes(15)]));

async function spkiOf(publicKey: Key): Promise<Uint8Array> {
  return new Uint8Array(await cryptoWithDelegatedKeys.subtle.exportKey('spki', publicKey));
}

/** SHA-1 of the subjectPublicKey bits (RFC 5280 4.2.1.2, method 1), as the earlier certificates computed it. */
async function keyIdentifier(spki: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await cryptoWithDelegatedKeys.subtle.digest('SHA-1', subjectPublicKey(spki)));
}

const subjectKeyIdentifier = async (spki: Uint8Array) => extension(OID.subjectKeyIdentifier, false, octetString(await keyIdentifier(spki)));

/** AuthorityKeyIdentifier with only keyIdentifier ([0] IMPLICIT KeyIdentifier). */
const authorityKeyIdentifier = async (issuerSpki: Uint8Array) =>
  extension(OID.authorityKeyIdentifier, false, sequence(implicit(0, octetString(await keyIdentifier(issuerSpki)))));

const linkExtensions = (links: Links) => [
  extension(OID.issuerAltName, false, sequence(uri(links.issuerUri))),
  // One DistributionPoint: distributionPoint [0] { fullName [0] { uri } }.
  extension(OID.crlDistributionPoints, false, sequence(sequence(explicit(0, implicit(0, sequence(uri(links.crlUri))))))),
];

/** Signs `tbs` through the delegating WebCrypto (the key may live in an HSM or KMS) and wraps it. */
async function signed(tbs: Der, signingKey: Key, hash: Hash): Promise<Der> {
  const raw = await cryptoWithDelegatedKeys.subtle.sign({ name: 'ECDSA', hash }, signingKey, tbs);
  return sequence(tbs, signatureAlgorithm(hash), bitString(ecdsaSignatureToDer(new Uint8Array(raw))));
}

/** What every certificate here shares: v3, a random serial, a minute of clock-skew slack, ECDSA. */
async function generate(options: {
  subject: Der;
  issuer: Der;
  spki: Uint8Array;
  signingKey: Key;
  validityDays: number;
  hash: Hash;
  extensions: Der[];
  /** The issuance time: valid from a minute before it. */
  now: Date;
}): Promise<string> {
  const now = options.now.getTime();
  const tbs = sequence(
    explicit(0, smallInteger(2)),
    serialNumber(),
    signatureAlgorithm(options.hash),
    options.issuer,
    sequence(time(new Date(now - 60_000)), time(new Date(now + options.validityDays * DAY))),
    options.subject,
    options.spki,
    explicit(3, sequence(...options.extensions)),
  );
  return toPem(await signed(tbs, options.signingKey, options.hash), 'CERTIFICATE');
}

/** A self-signed CA (IACA profile): CA, path length 0, keyCertSign and cRLSign, ten years. PEM. */
export async function createRootCertificate(
  keys: { publicKey: Key; privateKey: Key },
  subject: Subject,
  links: Links,
  hash: Hash,
  now: Date,
) {
  const name = distinguishedName(subject);
  const spki = await spkiOf(keys.publicKey);
  return generate({
    now,
    subject: name,
    issuer: name,
    spki,
    signingKey: keys.privateKey,
    validityDays: 3650,
    hash,
    extensions: [
      extension(OID.basicConstraints, true, sequence(boolean(true), smallInteger(0))),
      extension(OID.keyUsage, true, namedBits([KEY_USAGE.keyCertSign, KEY_USAGE.cRLSign])),
      await subjectKeyIdentifier(spki),
      ...linkExtensions(links),
    ],
  });
}

function leafExtensions(options: LeafOptions) {
  const usage = options.keyAgreement ? KEY_USAGE.keyAgreement : KEY_USAGE.digitalSignature;
  return [
    // cA FALSE is the default, so DER leaves it out: an empty SEQUENCE.
    extension(OID.basicConstraints, true, sequence()),
    extension(OID.keyUsage, true, namedBits([usage])),
    extension(OID.subjectAltName, false, sequence(dnsName(options.dnsName), uri(options.uri))),
    ...(options.documentSigner ? [extension(OID.extKeyUsage, true, sequence(objectIdentifier(MDL_DOCUMENT_SIGNER_EKU)))] : []),
  ];
}

/** A leaf signed by `issuer` (document-signer profile when asked): AKI, SKI, SAN with the service's host. PEM. */
export async function createLeafCertificate(
  publicKey: Key,
  issuer: { certificate: X509Certificate; signingKey: Key },
  subject: Subject,
  links: Links,
  options: LeafOptions,
  hash: Hash,
  now: Date,
) {
  // The issuer's Name is copied as its certificate holds it, so chain building matches it byte for byte.
  const issuerFields = certificateSubject(new Uint8Array(issuer.certificate.raw));
  const spki = await spkiOf(publicKey);
  return generate({
    now,
    subject: distinguishedName(subject),
    issuer: issuerFields.subject,
    spki,
    signingKey: issuer.signingKey,
    validityDays: options.validityDays,
    hash,
    extensions: [
      ...leafExtensions(options),
      await subjectKeyIdentifier(spki),
      await authorityKeyIdentifier(issuerFields.subjectPublicKeyInfo),
      ...linkExtensions(links),
    ],
  });
}

/** A self-signed leaf: the certificate is its own trust anchor (standalone key chains). PEM. */
export async function createSelfSignedCertificate(
  keys: { publicKey: Key; privateKey: Key },
  subject: Subject,
  links: Links,
  options: LeafOptions,
  hash: Hash,
  now: Date,
) {
  const name = distinguishedName(subject);
  const spki = await spkiOf(keys.publicKey);
  return generate({
    now,
    subject: name,
    issuer: name,
    spki,
    signingKey: keys.privateKey,
    validityDays: options.validityDays,
    hash,
    extensions: [...leafExtensions(options), await subjectKeyIdentifier(spki), ...linkExtensions(links)],
  });
}

/**
 * cRLNumber (RFC 5280 5.2.3, which a conforming CRL issuer must include): it must grow with each CRL
 * the CA issues. The CA's CRLs are made on demand by any instance, with no counter shared between
 * them, so the number is the CRL's thisUpdate in seconds: later CRLs carry larger numbers.
 */
const crlNumber = (thisUpdate: number) => extension(OID.crlNumber, false, smallInteger(Math.floor(thisUpdate / 1000)));

/** An empty v2 CRL signed by the chain's CA, as DER: nothing is revoked, and verifiers that fetch it see so. */
export async function createCrl(issuer: { certificate: X509Certificate; signingKey: Key }, hash: Hash, at: Date, validityDays = 7) {
  const now = at.getTime();
  const issuerFields = certificateSubject(new Uint8Array(issuer.certificate.raw));
  // TBSCertList: version v2 (1), signature, issuer, thisUpdate, nextUpdate, no revokedCertificates, [0] crlExtensions.
  const tbs = sequence(
    smallInteger(1),
    signatureAlgorithm(hash),
    issuerFields.subject,
    time(new Date(now)),
    time(new Date(now + validityDays * DAY)),
    explicit(0, sequence(await authorityKeyIdentifier(issuerFields.subjectPublicKeyInfo), crlNumber(now))),
  );
  return signed(tbs, issuer.signingKey, hash);
}
