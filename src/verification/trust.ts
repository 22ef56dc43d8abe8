// Whether an issuer's certificate chain (x5c, leaf first) leads to a certificate the tenant trusts.
import { X509Certificate } from 'node:crypto';

/**
 * True when some certificate of the chain is trusted itself, or is signed by a trusted certificate,
 * with every link of the chain up to there signed by the next and valid now.
 */
export function chainsToTrusted(x5c: string[], trustedPems: string[], now = new Date()): boolean {
  let chain: X509Certificate[];
  try {
    chain = x5c.map((der) => new X509Certificate(Buffer.from(der, 'base64')));
  } catch {
    return false;
  }
  const trusted = trustedPems.map((pem) => new X509Certificate(pem));
  const valid = (c: X509Certificate) => Date.parse(c.validFrom) <= now.getTime() && now.getTime() <= Date.parse(c.validTo);
  for (let i = 0; i < chain.length; i++) {
    const cert = chain[i] as X509Certificate;
    if (!valid(cert)) return false;
    if (i > 0 && !(chain[i - 1] as X509Certificate).verify(cert.publicKey)) return false;
    if (trusted.some((t) => t.raw.equals(cert.raw))) return true;
    if (trusted.some((t) => valid(t) && cert.checkIssued(t) && cert.verify(t.publicKey))) return true;
  }
  return false;
}
