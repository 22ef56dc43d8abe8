// @peculiar/x509 needs reflect-metadata loaded first and a WebCrypto provider; both are set here once.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export { x509 };

/** Splits a PEM bundle into certificates, in the order given. */
export function parsePemChain(pem: string): x509.X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => new x509.X509Certificate(block));
}

export const toPem = (certs: x509.X509Certificate[]) => certs.map((c) => c.toString('pem')).join('\n');

/** DER in base64 (not base64url), as the x5c header wants it. */
export const toX5c = (certs: x509.X509Certificate[]) => certs.map((c) => Buffer.from(c.rawData).toString('base64'));
