// The crypto @owf/mdoc needs to verify mdocs (ISO 18013-5): node:crypto for digests and COSE_Sign1
// verification, @peculiar/x509 for certificates. Verification only: nothing here signs, and the
// MAC device authentication of proximity flows is refused (OpenID4VP uses device signatures).
//
// Importing @owf/mdoc registers its cbor-x extensions process-wide (tags 0, 17, 18, 24, 1004).
import { createHash, createPublicKey, type JsonWebKeyInput, X509Certificate as NodeX509, webcrypto } from 'node:crypto';
import { CoseKey, Curve, type DigestAlgorithm, KeyType, type MdocContext } from '@owf/mdoc';
import type { JWK } from 'jose';
import { MAX_CHAIN_LENGTH } from './certificate-chains.js';
import { verifyP1363 } from './ecdsa-signatures.js';
import { x509 } from './x509-library.js';

/** ISO 18013-5 B.1.4: the extended key usage of a document signer certificate (id-mdl-kp-mdlDS). */
export const MDL_DOCUMENT_SIGNER_EKU = '1.0.18013.5.1.2';

const NODE_HASH: Record<DigestAlgorithm, string> = { 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };
/** The COSE ECDSA algorithms accepted, each with its hash and the one curve it is used with. */
const ECDSA: Record<string, { hash: string; curve: string }> = {
  ES256: { hash: 'sha256', curve: 'P-256' },
  ES384: { hash: 'sha384', curve: 'P-384' },
  ES512: { hash: 'sha512', curve: 'P-521' },
};
const CURVE_NAME: Record<number, string> = { [Curve['P-256']]: 'P-256', [Curve['P-384']]: 'P-384', [Curve['P-521']]: 'P-521' };
const b64u = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/** DER as @peculiar/x509 wants it (a view over a plain ArrayBuffer). */
const parseDer = (der: Uint8Array) => new x509.X509Certificate(new Uint8Array(der));

/** The public part of an EC2 COSE key as a JWK; anything else is refused. */
export function cosePublicKeyToJwk(key: CoseKey): JWK {
  const crv = CURVE_NAME[key.curve as number];
  if (key.keyType !== KeyType.Ec || !crv || !key.x || !key.y) throw new Error('only EC2 keys on P-256, P-384 or P-521 are supported');
  return { kty: 'EC', crv, x: b64u(key.x), y: b64u(key.y) };
}

/**
 * Checks that the x5chain (leaf first, DER) leads to one of the trusted certificates: every
 * certificate valid at `now`, each signed by the next (or, for the last, by a trusted certificate
 * with its subject as issuer), every issuer a CA, and the leaf a document signer. A chain that holds
 * a trusted certificate itself ends there. Throws with the reason otherwise.
 */
export async function verifyCertificateChain({
  trustedCertificates,
  x5chain,
  // The mdoc library's context interface leaves now optional; every verification here passes the
  // presentation's time (verify.ts), so the system time is only a library caller's that gives none.
  now = new Date(),
}: {
  trustedCertificates: Uint8Array[];
  x5chain: Uint8Array[];
  now?: Date;
}) {
  if (x5chain.length === 0) throw new Error('the issuer presented no certificate');
  // The x5chain sits in the unprotected header, which nobody signs: its length is checked before any
  // certificate is parsed.
  if (x5chain.length > MAX_CHAIN_LENGTH) throw new Error(`the issuer presented more than ${MAX_CHAIN_LENGTH} certificates`);
  if (trustedCertificates.length === 0) throw new Error('no trusted certificates');
  const chain = x5chain.map(parseDer);
  const anchors = trustedCertificates.map(parseDer);
  const isCa = (cert: x509.X509Certificate) => cert.getExtension(x509.BasicConstraintsExtension)?.ca === true;
  const valid = (cert: x509.X509Certificate) => cert.notBefore <= now && now <= cert.notAfter;
  const signedBy = (cert: x509.X509Certificate, issuer: x509.X509Certificate) =>
    cert.verify({ publicKey: issuer.publicKey, signatureOnly: true });
  const leaf = chain[0] as x509.X509Certificate;
  if (!leaf.getExtension(x509.ExtendedKeyUsageExtension)?.usages.includes(MDL_DOCUMENT_SIGNER_EKU)) {
    throw new Error(`${leaf.subject} is not a document signer certificate (extended key usage ${MDL_DOCUMENT_SIGNER_EKU})`);
  }
  for (const [i, cert] of chain.entries()) {
    if (!valid(cert)) throw new Error(`${cert.subject} is not valid at ${now.toISOString()}`);
    if (anchors.some((a) => a.equal(cert))) return;
    const next = chain[i + 1];
    if (next) {
      if (next.subject !== cert.issuer) throw new Error(`${cert.subject} is not issued by ${next.subject}`);
      if (!isCa(next)) throw new Error(`${next.subject} is not a CA`);
      if (!(await signedBy(cert, next))) throw new Error(`${cert.subject} is not signed by ${next.subject}`);
      continue;
    }
    for (const anchor of anchors.filter((a) => a.subject === cert.issuer && isCa(a) && valid(a))) {
      if (await signedBy(cert, anchor)) return;
    }
    throw new Error(`no trusted issuer for ${cert.subject}`);
  }
}

const refused = (what: string) => () => {
  throw new Error(`${what} is not supported by the mdoc verifier`);
};

/** The MdocContext for verifying mdocs: Verifier.verifyDeviceResponse, Holder.verifyIssuerSigned, session transcripts. */
export const mdocContext: MdocContext = {
  crypto: {
    random: (length) => new Uint8Array(webcrypto.getRandomValues(new Uint8Array(length))),
    digest: ({ digestAlgorithm, bytes }) => {
      const hash = NODE_HASH[digestAlgorithm];
      if (!hash) throw new Error(`unsupported digest algorithm ${String(digestAlgorithm)}`);
      return new Uint8Array(createHash(hash).update(bytes).digest());
    },
    calculateEphemeralMacKey: refused('MAC device authentication'),
  },
  cose: {
    sign1: {
      sign: refused('signing'),
      verify: ({ sign1, key }) => {
        const alg = sign1.signatureAlgorithmName;
        const ecdsa = ECDSA[alg];
        if (!ecdsa) throw new Error(`unsupported COSE signature algorithm ${alg}`);
        const jwk = cosePublicKeyToJwk(key);
        if (jwk.crv !== ecdsa.curve) throw new Error(`${alg} requires a ${ecdsa.curve} key, not ${jwk.crv}`);
        const publicKey = createPublicKey({ key: jwk as JsonWebKeyInput['key'], format: 'jwk' });
        return verifyP1363(ecdsa.hash, sign1.toBeSigned, publicKey, sign1.signature);
      },
    },
    mac0: { sign: refused('MAC device authentication'), verify: refused('MAC device authentication') },
  },
  x509: {
    getIssuerNameField: ({ certificate, field }) => parseDer(certificate).issuerName.getField(field),
    getPublicKey: ({ certificate }) => {
      const jwk = new NodeX509(Buffer.from(certificate)).publicKey.export({ format: 'jwk' });
      const curve = jwk.kty === 'EC' ? Curve[jwk.crv as 'P-256' | 'P-384' | 'P-521'] : undefined;
      if (curve === undefined || !jwk.x || !jwk.y) throw new Error('the certificate key is not an EC key on P-256, P-384 or P-521');
      return CoseKey.create({ keyType: KeyType.Ec, curve, x: Buffer.from(jwk.x, 'base64url'), y: Buffer.from(jwk.y, 'base64url') });
    },
    verifyCertificateChain,
    getCertificateData: ({ certificate }) => {
      const cert = parseDer(certificate);
      return {
        issuerName: cert.issuer,
        subjectName: cert.subject,
        serialNumber: cert.serialNumber,
        thumbprint: new NodeX509(Buffer.from(certificate)).fingerprint256,
        notBefore: cert.notBefore,
        notAfter: cert.notAfter,
        pem: cert.toString('pem'),
      };
    },
  },
};
