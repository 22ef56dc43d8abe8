// Validation of key material that comes from outside: imported JWKs and certificate chains.
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import type { JWK } from 'jose';
import { algorithmOfCurve, type SigningAlgorithm } from '../platform/crypto/algorithms.js';
import { parsePemChain, type x509 } from '../platform/crypto/x509.js';
import { badRequest } from '../platform/http/problem.js';
import { publicPart } from './providers.js';

/** Fields here are fields of the request body, named as schema validation names them. */
const invalid = (field: string, message: string) => badRequest(`body.${field}: ${message}`, [{ field: `body.${field}`, message }]);

/** Only db keys can be made here; another provider needs the id of the key it holds. */
export function checkProvider(kmsProvider: string, externalKeyId: string | null | undefined, available: string[]) {
  if (kmsProvider === 'db') return;
  if (!externalKeyId) throw invalid('externalKeyId', `required when kmsProvider is '${kmsProvider}' (not db)`);
  if (!available.includes(kmsProvider))
    throw invalid('kmsProvider', `'${kmsProvider}' is not configured here; available: ${available.join(', ')}`);
}

export function checkImportableJwk(jwk: JWK): SigningAlgorithm {
  if (jwk.kty !== 'EC') throw invalid('privateJwk', 'must be an EC key (kty EC)');
  const algorithm = algorithmOfCurve(jwk.crv);
  if (!algorithm) throw invalid('privateJwk', 'crv must be P-256, P-384 or P-521');
  if (!jwk.d) throw invalid('privateJwk', 'must contain the private key (d)');
  try {
    createPublicKey({ key: publicPart(jwk) as JsonWebKey, format: 'jwk' });
  } catch {
    throw invalid('privateJwk', 'is not a valid key on its curve');
  }
  return algorithm;
}

const sameKey = (a: JWK, b: JWK) => a.crv === b.crv && a.x === b.x && a.y === b.y;

/**
 * A PEM chain, leaf first, whose leaf certifies `jwk` and whose every certificate is signed by the
 * next. A self-signed last certificate of a longer chain is taken as the root (kept apart from x5c).
 */
export async function checkChainForKey(
  pem: string,
  jwk: JWK,
  field: string,
): Promise<{ active: x509.X509Certificate[]; root?: x509.X509Certificate }> {
  let chain: x509.X509Certificate[];
  try {
    chain = parsePemChain(pem);
  } catch {
    throw invalid(field, 'is not a PEM certificate chain');
  }
  const [leaf] = chain;
  if (!leaf) throw invalid(field, 'contains no PEM certificate');
  const leafKey = (await leaf.publicKey.export()) as CryptoKey;
  const leafJwk = (await crypto.subtle.exportKey('jwk', leafKey)) as JWK;
  if (!sameKey(leafJwk, jwk)) throw invalid(field, 'the first certificate does not certify this key');
  for (let i = 0; i + 1 < chain.length; i++) {
    const [child, parent] = [chain[i], chain[i + 1]] as [x509.X509Certificate, x509.X509Certificate];
    if (!(await child.verify({ publicKey: parent.publicKey, signatureOnly: true }))) {
      throw invalid(field, `certificate ${i + 1} is not signed by certificate ${i + 2}`);
    }
  }
  const last = chain[chain.length - 1] as x509.X509Certificate;
  if (chain.length > 1 && (await last.isSelfSigned())) return { active: chain.slice(0, -1), root: last };
  return { active: chain };
}
