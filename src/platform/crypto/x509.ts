// Reading certificate chains with node:crypto: splitting PEM bundles and writing PEM and x5c.
// Certificates are made as DER (der.ts, key-chains/certificates.ts); only mdoc verification loads
// @peculiar/x509 (x509-library.ts), to read certificate extensions.
import { X509Certificate } from 'node:crypto';

/** Splits a PEM bundle into certificates, in the order given. */
export function parsePemChain(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => new X509Certificate(block));
}

export const toPem = (certs: X509Certificate[]) => certs.map((c) => c.toString().trim()).join('\n');

/** DER in base64 (not base64url), as the x5c header wants it. */
export const toX5c = (certs: X509Certificate[]) => certs.map((c) => c.raw.toString('base64'));

/**
 * Issued by itself and verified by its own key: a trust anchor, or a standalone certificate that acts
 * as one. (Not checkIssued: OpenSSL's issuer check also wants keyCertSign, which a self-signed leaf lacks.)
 */
export function isSelfSigned(cert: X509Certificate): boolean {
  if (cert.subject !== cert.issuer) return false;
  try {
    return cert.verify(cert.publicKey);
  } catch {
    // A signature or key algorithm OpenSSL cannot check: not shown to be self-signed.
    return false;
  }
}
