// The issuer signature of an mdoc checked without the service's code: the IssuerSigned structure
// decoded with cbor-x, its COSE_Sign1 (issuerAuth) verified by node:crypto with the leaf of its
// x5chain, and that leaf with the chain's root.
import { verify, X509Certificate } from 'node:crypto';
import { Decoder, Encoder } from 'cbor-x';
import { expect } from 'vitest';

const CBOR = { mapsAsObjects: false, useRecords: false, tagUint8Array: false } as const;
const HASH_OF_ALGORITHM = new Map([
  [-7, 'sha256'],
  [-35, 'sha384'],
  [-36, 'sha512'],
]);

/** Verifies an mdoc (IssuerSigned as OpenID4VCI sends it, base64url) and returns the leaf that signed it. */
export function verifyMdocIssuerAuth(credential: string, root: X509Certificate): X509Certificate {
  const issuerSigned = new Decoder(CBOR).decode(Buffer.from(credential, 'base64url')) as Map<string, unknown>;
  const issuerAuth = issuerSigned.get('issuerAuth') as [Uint8Array, Map<number, Uint8Array | Uint8Array[]>, Uint8Array, Uint8Array];
  const [protectedHeader, unprotected, payload, signature] = issuerAuth;
  const x5chain = unprotected.get(33) as Uint8Array | Uint8Array[];
  const leaf = new X509Certificate(Buffer.from(Array.isArray(x5chain) ? (x5chain[0] as Uint8Array) : x5chain));
  expect(leaf.verify(root.publicKey)).toBe(true);
  const algorithm = (new Decoder(CBOR).decode(protectedHeader) as Map<number, number>).get(1) as number;
  const toBeSigned = new Encoder(CBOR).encode(['Signature1', protectedHeader, new Uint8Array(), payload]);
  const hash = HASH_OF_ALGORITHM.get(algorithm);
  expect(hash, `COSE algorithm ${algorithm}`).toBeDefined();
  expect(verify(hash as string, toBeSigned, { key: leaf.publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
  return leaf;
}
