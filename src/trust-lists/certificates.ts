// The certificates a trust list carries: a tenant key chain's anchors, or an outside PEM certificate.
import { X509Certificate } from 'node:crypto';
import type { KeyChain } from '../key-chains/model.js';
import { parsePemChain } from '../platform/crypto/x509.js';

/**
 * The certificates that stand for a key chain of the tenant: its root when it has one (it outlives
 * rotations), else its active certificate and, while still published, the previous one.
 */
export function anchorsOf(chain: KeyChain): X509Certificate[] {
  if (chain.rootCertificate) return parsePemChain(chain.rootCertificate);
  const [active] = parsePemChain(chain.activeCertificate);
  const [previous] = parsePemChain(chain.previousCertificate ?? '');
  return [active, previous].filter((c): c is X509Certificate => c !== undefined);
}

/** One PEM certificate, or why the text is not one. */
export function parseCertificate(pem: string): X509Certificate | string {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) return 'is not a PEM certificate (-----BEGIN CERTIFICATE----- ... -----END CERTIFICATE-----)';
  if (blocks.length > 1) return 'must hold exactly one certificate; give each certificate as its own item';
  try {
    return new X509Certificate(blocks[0] as string);
  } catch {
    return 'is not a valid X.509 certificate';
  }
}
