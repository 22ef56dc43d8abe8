// Validation of key material that comes from outside: imported JWKs and certificate chains, and the
// subject a generated certificate is given. Every defect is a 400 naming the member at fault, found
// before any crypto library sees the input.
import { createECDH, createPublicKey, type JsonWebKey, type KeyObject, type X509Certificate } from 'node:crypto';
import type { JWK } from 'jose';
import { algorithmOfCurve, type SigningAlgorithm } from '../platform/crypto/algorithms.js';
import { isSelfSigned, parsePemChain } from '../platform/crypto/x509.js';
import { badRequest, type FieldError, invalidFields } from '../platform/http/problem.js';
import { maxCommonName, ROOT_COMMON_NAME_SUFFIX, SUBJECT_UPPER_BOUNDS, type Subject } from './certificates.js';
import { KEY_NAME } from './providers/key-names.js';
import { publicPart } from './providers/key-provider.js';

/** Fields here are fields of the request body, named as schema validation names them. */
const invalid = (field: string, message: string) => badRequest(`body.${field}: ${message}`, [{ field: `body.${field}`, message }]);

/** Longer chains are not seen in practice; the cap bounds the parsing and signature checks one request can ask for. */
export const MAX_CHAIN_CERTIFICATES = 10;

/** Bytes of each coordinate and of the private scalar (RFC 7518 6.2.1.2: full length), and the curve's OpenSSL name. */
const CURVES: Record<string, { bytes: number; openssl: string }> = {
  'P-256': { bytes: 32, openssl: 'prime256v1' },
  'P-384': { bytes: 48, openssl: 'secp384r1' },
  'P-521': { bytes: 66, openssl: 'secp521r1' },
};

/**
 * Where a new chain's keys are to live, checked, naming every offending field: the provider must be
 * configured; one other than db needs the name of the key (given, or derived from the chain id when
 * the provider is the default one), in the letters every provider accepts in a name. Keys for
 * decryption stay in db.
 */
export function checkProvider(
  place: { kmsProvider: string; chosen: boolean; externalKeyId: string | null | undefined; usageType: string },
  available: string[],
) {
  const { kmsProvider, externalKeyId } = place;
  if (kmsProvider === 'db') return;
  const errors: FieldError[] = [];
  const error = (field: string, message: string) => errors.push({ field: `body.${field}`, message });
  if (!available.includes(kmsProvider))
    error('kmsProvider', `no provider '${kmsProvider}' is configured; configured: ${available.join(', ')}`);
  else if (place.usageType === 'encrypt')
    error('kmsProvider', `key chains of usage type encrypt keep their key in db: '${kmsProvider}' does not decrypt (ECDH-ES)`);
  if (!externalKeyId) {
    if (place.chosen) error('externalKeyId', `required when kmsProvider is '${kmsProvider}' (not db)`);
  } else if (!KEY_NAME.test(externalKeyId)) {
    error('externalKeyId', 'must be 1-100 letters, digits, _ or - (a name every key provider accepts)');
  }
  if (errors.length) throw invalidFields(errors);
}

/** One member of an EC JWK: unpadded base64url of exactly `bytes` octets, in its one canonical spelling. */
function octets(jwk: Record<string, unknown>, member: 'x' | 'y' | 'd', crv: string, bytes: number): Buffer {
  const field = `privateJwk.${member}`;
  const value = jwk[member];
  if (value === undefined) throw invalid(field, member === 'd' ? 'is missing: the private key is required' : 'is missing');
  const expected = `must be ${bytes} bytes (${crv}) in unpadded base64url`;
  if (typeof value !== 'string' || value.length !== Math.ceil((bytes * 4) / 3)) throw invalid(field, expected);
  const decoded = Buffer.from(value, 'base64url');
  if (decoded.length !== bytes || decoded.toString('base64url') !== value) throw invalid(field, expected);
  return decoded;
}

/**
 * An EC private JWK whose public point lies on its curve and belongs to its private scalar.
 * Returns the key reduced to its standard members, so nothing else from the input is kept.
 */
export function checkImportableJwk(privateJwk: JWK): { algorithm: SigningAlgorithm; jwk: JWK } {
  // Typed as a JWK, but arrives as any JSON object: every member is checked for its type.
  const input = privateJwk as Record<string, unknown>;
  if (input.kty !== 'EC') throw invalid('privateJwk.kty', 'must be EC');
  const crv = typeof input.crv === 'string' ? input.crv : undefined;
  const algorithm = algorithmOfCurve(crv);
  const curve = crv === undefined ? undefined : CURVES[crv];
  if (!algorithm || !crv || !curve) throw invalid('privateJwk.crv', 'must be P-256, P-384 or P-521');
  const [x, y, d] = (['x', 'y', 'd'] as const).map((member) => octets(input, member, crv, curve.bytes)) as [Buffer, Buffer, Buffer];
  const jwk: JWK = { kty: 'EC', crv, x: x.toString('base64url'), y: y.toString('base64url'), d: d.toString('base64url') };
  try {
    createPublicKey({ key: publicPart(jwk) as JsonWebKey, format: 'jwk' });
  } catch {
    throw invalid('privateJwk', `x and y are not a point on ${crv}`);
  }
  const ecdh = createECDH(curve.openssl);
  try {
    ecdh.setPrivateKey(d);
  } catch {
    throw invalid('privateJwk.d', `is not a private key on ${crv} (zero or not below the group order)`);
  }
  if (!ecdh.getPublicKey().equals(Buffer.concat([Buffer.from([4]), x, y]))) {
    throw invalid('privateJwk.d', 'is the private key of another public key than x and y');
  }
  return { algorithm, jwk };
}

/** Whether the certificate's subject key is `key`; a key of a kind Node cannot read is not it. */
function certifies(certificate: X509Certificate, key: KeyObject): boolean {
  try {
    return certificate.publicKey.equals(key);
  } catch {
    return false;
  }
}

/** Whether `parent`'s key signed `child`; a signature or key algorithm OpenSSL cannot check counts as not signed. */
function signedBy(child: X509Certificate, parent: X509Certificate): boolean {
  try {
    return child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

/**
 * Whether the leaf of a PEM chain (a key chain's active certificate) is self-signed: what HAIP 1.0
 * forbids in every x5c a wallet or verifier sees (sections 4.1, 5, 6.1, 6.1.1).
 */
export function leafIsSelfSigned(pem: string): boolean {
  const [leaf] = parsePemChain(pem);
  return leaf !== undefined && isSelfSigned(leaf);
}

function readChain(pem: string, field: string): X509Certificate[] {
  let chain: X509Certificate[];
  try {
    chain = parsePemChain(pem);
  } catch {
    throw invalid(field, 'is not a PEM certificate chain');
  }
  if (chain.length === 0) throw invalid(field, 'contains no PEM certificate');
  if (chain.length > MAX_CHAIN_CERTIFICATES)
    throw invalid(field, `has ${chain.length} certificates; at most ${MAX_CHAIN_CERTIFICATES} are accepted`);
  return chain;
}

/**
 * A PEM chain, leaf first, whose leaf certifies `jwk` and whose every certificate is signed by the
 * next. A self-signed last certificate of a longer chain is taken as the root (kept apart from x5c).
 */
export async function checkChainForKey(
  pem: string,
  jwk: JWK,
  field: string,
): Promise<{ active: X509Certificate[]; root?: X509Certificate }> {
  const chain = readChain(pem, field);
  const key = createPublicKey({ key: publicPart(jwk) as JsonWebKey, format: 'jwk' });
  if (!certifies(chain[0] as X509Certificate, key)) throw invalid(field, 'the first certificate does not certify this key');
  for (let i = 0; i + 1 < chain.length; i++) {
    if (!signedBy(chain[i] as X509Certificate, chain[i + 1] as X509Certificate)) {
      throw invalid(field, `certificate ${i + 1} is not signed by certificate ${i + 2}`);
    }
  }
  const last = chain[chain.length - 1] as X509Certificate;
  if (chain.length > 1 && isSelfSigned(last)) return { active: chain.slice(0, -1), root: last };
  return { active: chain };
}

/**
 * A chain's root certificate must certify the chain's root key where the service holds one (an
 * internal chain): later leaves are signed by that key under this certificate, and the CRL too.
 */
export function checkRootForKey(root: X509Certificate, rootJwk: JWK, field: string) {
  if (!certifies(root, createPublicKey({ key: publicPart(rootJwk) as JsonWebKey, format: 'jwk' }))) {
    throw invalid(field, "the last (self-signed) certificate does not certify the key chain's root key");
  }
}

/**
 * Subject attributes longer than RFC 5280 allows (Appendix A), named as the request names them. An
 * internal chain's root CA is named after the chain with ROOT_COMMON_NAME_SUFFIX, so its common name
 * has that much less room.
 */
export function subjectErrors(subject: Subject, withRoot: boolean): FieldError[] {
  return (Object.keys(SUBJECT_UPPER_BOUNDS) as (keyof Subject)[]).flatMap((name) => {
    const value = subject[name];
    const max = name === 'commonName' ? maxCommonName(withRoot) : SUBJECT_UPPER_BOUNDS[name];
    if (value === undefined || [...value].length <= max) return [];
    const why =
      max < SUBJECT_UPPER_BOUNDS[name]
        ? `RFC 5280 allows ${SUBJECT_UPPER_BOUNDS[name]}, and the root CA of an internal chain adds '${ROOT_COMMON_NAME_SUFFIX}'`
        : 'RFC 5280 Appendix A';
    return [{ field: `body.subject.${name}`, message: `must be at most ${max} characters (${why})` }];
  });
}
