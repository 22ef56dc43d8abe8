// Certificates made for one test: a CA and what it issues (CAs or end entities), each with its
// P-256 key and a validity window of its own, so that tests of chain building can bend one link of
// a chain (expired, not yet valid, not a CA, signed by another key) and leave the rest intact.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { Signer } from '../../src/key-chains/signing.js';

x509.cryptoProvider.set(crypto); // the global Web Crypto (node:crypto webcrypto)

const RSA = { modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) };
/** The Web Crypto parameters of each JWS algorithm: to generate the key and to sign with it. */
const ALGORITHMS = {
  ES256: { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' },
  ES384: { name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-384' },
  ES512: { name: 'ECDSA', namedCurve: 'P-521', hash: 'SHA-512' },
  EdDSA: { name: 'Ed25519' },
  RS256: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', ...RSA },
  RS384: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-384', ...RSA },
  PS256: { name: 'RSA-PSS', hash: 'SHA-256', saltLength: 32, ...RSA },
  PS384: { name: 'RSA-PSS', hash: 'SHA-384', saltLength: 48, ...RSA },
  PS512: { name: 'RSA-PSS', hash: 'SHA-512', saltLength: 64, ...RSA },
};
export type JwsAlgorithm = keyof typeof ALGORITHMS;
export const DAY_MS = 86_400_000;

export interface TestCertificate {
  certificate: x509.X509Certificate;
  keys: CryptoKeyPair;
  /** The JWS algorithm of its key. */
  alg: JwsAlgorithm;
  /** Base64 DER, as in an x5c header. */
  der: string;
  pem: string;
}

export interface CertificateOptions {
  /** Signs the certificate; without one it is self-signed. */
  issuer?: TestCertificate;
  /** Signs instead of the issuer's key while naming the issuer (a forged link). */
  signingKey?: CryptoKey;
  /** Has basicConstraints cA true. */
  ca?: boolean;
  notBefore?: Date;
  notAfter?: Date;
  /** Its key's algorithm (default ES256). */
  alg?: JwsAlgorithm;
  /** Extensions besides basicConstraints (key usage, extended key usage, ...). */
  extensions?: x509.Extension[];
}

export async function testCertificate(name: string, options: CertificateOptions = {}): Promise<TestCertificate> {
  const alg = options.alg ?? 'ES256';
  const keys = (await webcrypto.subtle.generateKey(ALGORITHMS[alg], true, ['sign', 'verify'])) as CryptoKeyPair;
  const validity = {
    notBefore: options.notBefore ?? new Date(Date.now() - DAY_MS),
    notAfter: options.notAfter ?? new Date(Date.now() + 30 * DAY_MS),
  };
  const extensions = [...(options.ca ? [new x509.BasicConstraintsExtension(true, undefined, true)] : []), ...(options.extensions ?? [])];
  // A name with '=' is a whole distinguished name; else it is the common name.
  const subject = name.includes('=') ? name : `CN=${name}`;
  const certificate = options.issuer
    ? await x509.X509CertificateGenerator.create({
        subject,
        issuer: options.issuer.certificate.subject,
        publicKey: keys.publicKey,
        signingKey: options.signingKey ?? options.issuer.keys.privateKey,
        signingAlgorithm: ALGORITHMS[options.issuer.alg],
        extensions,
        ...validity,
      })
    : await x509.X509CertificateGenerator.createSelfSigned({
        name: subject,
        keys,
        signingAlgorithm: ALGORITHMS[alg],
        extensions,
        ...validity,
      });
  return { certificate, keys, alg, der: Buffer.from(certificate.rawData).toString('base64'), pem: certificate.toString('pem') };
}

/** ISO 18013-5 extended key usage of an mdoc document signer certificate. */
export const MDOC_DOCUMENT_SIGNER_EKU = '1.0.18013.5.1.2';

/**
 * The service's Signer over a test certificate's key (ES256/384/512), x5c as given (leaf first): so that a test
 * can issue with the service's own issuance code, without a key chain or a running service.
 */
export function testSigner(certificate: TestCertificate, x5c: TestCertificate[] = [certificate]): Signer {
  const algorithm = certificate.alg;
  if (algorithm !== 'ES256' && algorithm !== 'ES384' && algorithm !== 'ES512')
    throw new Error(`testSigner: ${algorithm} is not an issuance algorithm`);
  return {
    keyChainId: `test-${certificate.certificate.subject}`,
    algorithm,
    kid: 'test-signer',
    x5c: x5c.map((c) => c.der),
    selfSigned: certificate.certificate.subject === certificate.certificate.issuer,
    sign: async (data) =>
      new Uint8Array(await webcrypto.subtle.sign(ALGORITHMS[algorithm], certificate.keys.privateKey, data as Uint8Array<ArrayBuffer>)),
  };
}
