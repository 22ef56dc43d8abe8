// A test wallet provider (a CA and the leaf certificate that signs client attestations) and a wallet
// instance key, with the JWTs of attestation-based client authentication: the client attestation the
// provider issues to the instance and the instance's proof of possession for one request.
import 'reflect-metadata';
import { KeyObject, randomUUID, sign, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';

x509.cryptoProvider.set(crypto); // the global Web Crypto (node:crypto webcrypto)

const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY_MS = 86_400_000;

export interface WalletProvider {
  name: string;
  /** The CA certificate, PEM: the trust anchor an issuer configures. */
  caPem: string;
  /** A client attestation for the instance's public key (any wallet's key will do). */
  attestation(instance: Pick<WalletInstance, 'publicJwk'>, claims?: JWTPayload): Promise<string>;
  /**
   * An OpenID4VCI 1.0 key attestation (typ key-attestation+jwt, x5c) for `attestedKeys`, valid for an
   * hour, with key_storage and user_authentication iso_18045_high unless `claims` say otherwise
   * (undefined drops a claim); `header` overrides header members.
   */
  keyAttestation(attestedKeys: Record<string, unknown>[], claims?: JWTPayload, header?: Record<string, unknown>): Promise<string>;
  /**
   * Any header and payload signed by the leaf key with the hash `hash` names (default SHA-256), as a
   * compact JWS: for what jose refuses to sign (an alg that does not fit the key, crit, no typ).
   */
  signed(header: Record<string, unknown>, payload: Record<string, unknown>, hash?: 'sha256' | 'sha384' | 'sha512'): string;
  /** The x5c header value: the leaf certificate, then the CA's (base64 DER). */
  x5c: string[];
}

export interface WalletInstance {
  publicJwk: Record<string, unknown>;
  pop(claims: JWTPayload): Promise<string>;
}

export async function walletProvider(name = 'Test Wallet Provider'): Promise<WalletProvider> {
  const caKeys = await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=${name} CA`,
    keys: caKeys,
    signingAlgorithm: EC,
    notBefore: new Date(Date.now() - DAY_MS),
    notAfter: new Date(Date.now() + 30 * DAY_MS),
    extensions: [new x509.BasicConstraintsExtension(true, 0, true)],
  });
  const leafKeys = await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']);
  const leaf = await x509.X509CertificateGenerator.create({
    subject: `CN=${name}`,
    issuer: ca.subject,
    publicKey: leafKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: EC,
    notBefore: new Date(Date.now() - DAY_MS),
    notAfter: new Date(Date.now() + 30 * DAY_MS),
  });
  const x5c = [leaf, ca].map((c) => Buffer.from(c.rawData).toString('base64'));
  const leafSigningKey = KeyObject.from(leafKeys.privateKey);
  return {
    name,
    caPem: ca.toString('pem'),
    x5c,
    signed: (header, payload, hash) => signedCompact(leafSigningKey, header, payload, hash),
    attestation: (instance, claims = {}) => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        iss: `https://${name.replace(/\W/g, '').toLowerCase()}.example`,
        iat: now,
        exp: now + 3600,
        cnf: { jwk: instance.publicJwk },
        ...claims,
      })
        .setProtectedHeader({ alg: 'ES256', typ: 'oauth-client-attestation+jwt', x5c })
        .sign(leafKeys.privateKey);
    },
    keyAttestation: (attestedKeys, claims = {}, header = {}) => {
      const now = Math.floor(Date.now() / 1000);
      const payload = Object.fromEntries(
        Object.entries({
          iss: `https://${name.replace(/\W/g, '').toLowerCase()}.example`,
          iat: now,
          exp: now + 3600,
          attested_keys: attestedKeys,
          key_storage: ['iso_18045_high'],
          user_authentication: ['iso_18045_high'],
          ...claims,
        }).filter(([, value]) => value !== undefined),
      );
      return new SignJWT(payload)
        .setProtectedHeader({ alg: 'ES256', typ: 'key-attestation+jwt', x5c, ...header })
        .sign(leafKeys.privateKey);
    },
  };
}

/** A compact JWS of any header and payload, signed by an EC `key` over `hash` whatever the header's alg says. */
export function signedCompact(
  key: KeyObject,
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  hash: 'sha256' | 'sha384' | 'sha512' = 'sha256',
): string {
  const input = [header, payload].map((part) => Buffer.from(JSON.stringify(part)).toString('base64url')).join('.');
  return `${input}.${sign(hash, Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

export async function walletInstance(): Promise<WalletInstance> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  return {
    publicJwk: (await exportJWK(publicKey)) as Record<string, unknown>,
    pop: (claims) =>
      new SignJWT({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims })
        .setProtectedHeader({ alg: 'ES256', typ: 'oauth-client-attestation-pop+jwt' })
        .sign(privateKey),
  };
}

/** The two headers of an attested request, for client `clientId` at authorization server `audience`. */
export async function attestationHeaders(
  provider: WalletProvider,
  instance: WalletInstance,
  clientId: string,
  audience: string,
  options: { attestation?: JWTPayload; pop?: JWTPayload } = {},
): Promise<Record<string, string>> {
  return {
    'oauth-client-attestation': await provider.attestation(instance, { sub: clientId, ...options.attestation }),
    'oauth-client-attestation-pop': await instance.pop({ iss: clientId, aud: audience, ...options.pop }),
  };
}
