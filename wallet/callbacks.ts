// The cryptography the OpenID4VC and mdoc libraries ask their caller for, done with node:crypto and
// jose: hashes, randomness, JWT signatures by the wallet's keys, the verifier's request signature
// (x5c), response encryption, and COSE signatures by the holder key.
import { createHash, createPrivateKey, sign as nodeSign, randomBytes, X509Certificate } from 'node:crypto';
import { type CallbackContext, clientAuthenticationNone, type Jwk, type JwtSigner, type JwtSignerJwk } from '@openid4vc/oauth2';
import { setGlobalConfig } from '@openid4vc/utils';
import { CoseKey, Curve, type DigestAlgorithm, KeyType, type MdocContext, SignatureAlgorithm } from '@owf/mdoc';
import { CompactEncrypt, importJWK, type JWK, jwtVerify, SignJWT } from 'jose';
import type { HolderKey } from './store.js';

// The wallet's fetch (http.ts) decides which URLs may be plain HTTP; the libraries' own https-only
// check would refuse a service under development on localhost.
setGlobalConfig({ allowInsecureUrls: true });

const hash = (data: Uint8Array, alg: string) => new Uint8Array(createHash(alg.replace('-', '').toLowerCase()).update(data).digest());

/** The callbacks of an OpenID4VCI client whose JWTs (proofs, DPoP proofs) are signed by one of `keys`. */
export function issuanceCallbacks(keys: HolderKey[], clientId = 'svc-demo-wallet') {
  return {
    hash,
    generateRandom: (length: number) => new Uint8Array(randomBytes(length)),
    clientAuthentication: clientAuthenticationNone({ clientId }),
    signJwt: async (signer: JwtSigner, { header, payload }: Parameters<CallbackContext['signJwt']>[1]) => {
      const publicJwk = (signer as JwtSignerJwk).publicJwk;
      const key = keys.find((k) => k.publicJwk.x === publicJwk?.x && k.publicJwk.y === publicJwk?.y);
      if (!key) throw new Error('the wallet holds no such key');
      const jwt = await new SignJWT(payload as Record<string, unknown>)
        .setProtectedHeader(header as { alg: string })
        .sign(await importJWK(key.privateJwk, 'ES256'));
      return { jwt, signerJwk: key.publicJwk as Jwk };
    },
    verifyJwt: async () => ({ verified: false as const }),
    encryptJwe: notUsed('JWE encryption'),
    decryptJwe: notUsed('JWE decryption'),
  } satisfies Omit<CallbackContext, 'fetch'>;
}

function notUsed(what: string) {
  return async (): Promise<never> => {
    throw new Error(`${what} is not used by this wallet`);
  };
}

/**
 * Checks an x5c chain as far as the wallet can without trust anchors: every certificate valid now and
 * signed by the next one, so the subject the user is shown is the one whose key signed the request.
 */
export function checkChain(x5c: string[], now = new Date()): X509Certificate[] {
  const chain = x5c.map((der) => new X509Certificate(Buffer.from(der, 'base64')));
  for (const [i, cert] of chain.entries()) {
    if (new Date(cert.validFrom) > now || new Date(cert.validTo) < now)
      throw new Error(`certificate ${oneLine(cert.subject)} is not valid now`);
    const next = chain[i + 1];
    if (next && !cert.verify(next.publicKey))
      throw new Error(`certificate ${oneLine(cert.subject)} is not signed by ${oneLine(next.subject)}`);
  }
  return chain;
}

/** A certificate's subject or issuer on one line (node:crypto gives one attribute per line). */
export const oneLine = (name: string) => name.split('\n').join(', ');

/** The callbacks of an OpenID4VP client: the request must be signed by the key of its x5c leaf. */
export function presentationCallbacks() {
  return {
    hash,
    generateRandom: (length: number) => new Uint8Array(randomBytes(length)),
    clientAuthentication: clientAuthenticationNone({ clientId: 'svc-demo-wallet' }),
    verifyJwt: async (signer: JwtSigner, { compact, header }: Parameters<CallbackContext['verifyJwt']>[1]) => {
      if (signer.method !== 'x5c') return { verified: false as const };
      try {
        const [leaf] = checkChain(signer.x5c);
        await jwtVerify(compact, leaf!.publicKey, { algorithms: [header.alg] });
        return { verified: true as const, signerJwk: leaf!.publicKey.export({ format: 'jwk' }) as Jwk };
      } catch {
        return { verified: false as const };
      }
    },
    getX509CertificateMetadata: (certificate: string) => {
      const names = (new X509Certificate(Buffer.from(certificate, 'base64')).subjectAltName ?? '').split(', ');
      return {
        sanDnsNames: names.filter((n) => n.startsWith('DNS:')).map((n) => n.slice(4)),
        sanUriNames: names.filter((n) => n.startsWith('URI:')).map((n) => n.slice(4)),
      };
    },
    encryptJwe: async (encryptor: Parameters<CallbackContext['encryptJwe']>[0], data: string) => {
      const jwe = await new CompactEncrypt(new TextEncoder().encode(data))
        .setProtectedHeader({ alg: encryptor.alg, enc: encryptor.enc, ...(encryptor.publicJwk.kid && { kid: encryptor.publicJwk.kid }) })
        .encrypt(await importJWK(encryptor.publicJwk as JWK, encryptor.alg));
      return { jwe, encryptionJwk: encryptor.publicJwk };
    },
    decryptJwe: notUsed('JWE decryption'),
    signJwt: notUsed('signing requests'),
  } satisfies Omit<CallbackContext, 'fetch'>;
}

const DIGESTS: Record<DigestAlgorithm, string> = { 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };
const b64u = (bytes?: Uint8Array) => Buffer.from(bytes ?? new Uint8Array()).toString('base64url');

/** The holder key as a COSE key, for the device signature of an mdoc presentation. */
export const coseSigningKey = (jwk: JWK) =>
  CoseKey.create({
    keyType: KeyType.Ec,
    curve: Curve['P-256'],
    x: Buffer.from(jwk.x as string, 'base64url'),
    y: Buffer.from(jwk.y as string, 'base64url'),
    d: Buffer.from(jwk.d as string, 'base64url'),
    algorithm: SignatureAlgorithm.ES256,
  });

/** ES256 over COSE's to-be-signed bytes with a P-256 private COSE key. */
export function coseSign({ toBeSigned, key }: { toBeSigned: Uint8Array; key: CoseKey }): Uint8Array {
  const jwk = { kty: 'EC', crv: 'P-256', x: b64u(key.x), y: b64u(key.y), d: b64u(key.d) };
  return new Uint8Array(nodeSign('sha256', toBeSigned, { key: createPrivateKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' }));
}

const refused = (what: string) => () => {
  throw new Error(`${what} is not used by this wallet`);
};

/** What @owf/mdoc needs to build a DeviceResponse: digests for the session transcript and the device signature. */
export const holderMdocContext: MdocContext = {
  crypto: {
    random: (length) => new Uint8Array(randomBytes(length)),
    digest: ({ digestAlgorithm, bytes }) => new Uint8Array(createHash(DIGESTS[digestAlgorithm]).update(bytes).digest()),
    calculateEphemeralMacKey: refused('MAC device authentication'),
  },
  cose: {
    sign1: {
      sign: coseSign,
      verify: refused('COSE verification'),
    },
    mac0: { sign: refused('MAC device authentication'), verify: refused('MAC device authentication') },
  },
  x509: {
    getIssuerNameField: refused('certificate names'),
    getPublicKey: refused('certificate keys'),
    verifyCertificateChain: refused('certificate chains'),
    getCertificateData: refused('certificate data'),
  },
};
