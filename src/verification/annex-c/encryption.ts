// The encryption of an Annex C response. The request carries EncryptionInfo = ["dcapi",
// {"nonce": bstr, "recipientPublicKey": COSE_Key}]: a fresh P-256 key per session, whose private
// half stays sealed in the session. The wallet answers EncryptedResponse = ["dcapi", {"enc": bstr,
// "cipherText": bstr}], HPKE (RFC 9180) in base mode with DHKEM(P-256, HKDF-SHA256), HKDF-SHA256
// and AES-128-GCM, info = CBOR(SessionTranscript), no additional data; the plaintext is the
// DeviceResponse.
import { randomBytes, webcrypto } from 'node:crypto';
import { Aes128Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from '@hpke/core';
import { Decoder } from 'cbor-x';
import '../../platform/crypto/cbor-value-sharing.js';
import { PresentationRejected } from '../errors.js';
import { cbor, DCAPI } from './transcript.js';

const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() });

/** COSE_Key labels (RFC 9052/9053): kty EC2 (2), crv P-256 (1), x, y. */
const COSE = { kty: 1, crv: -1, x: -2, y: -3, EC2: 2, P256: 1 } as const;
/** The nonce of EncryptionParameters: at least 16 bytes of entropy. */
const NONCE_BYTES = 32;
/** An uncompressed P-256 point. */
const ENC_BYTES = 65;
/** The AES-GCM tag: no ciphertext is shorter. */
const TAG_BYTES = 16;

export interface RecipientKey {
  /** The private key as a JWK (d, x, y), kept sealed in the session. */
  privateJwk: webcrypto.JsonWebKey;
}

/** A fresh recipient key and the EncryptionInfo announcing it, as the base64url text the request carries. */
export async function newEncryptionInfo(): Promise<{ recipient: RecipientKey; encryptionInfo: string }> {
  const pair = (await webcrypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits'])) as webcrypto.CryptoKeyPair;
  const privateJwk = await webcrypto.subtle.exportKey('jwk', pair.privateKey);
  const coordinate = (value: string | undefined) => new Uint8Array(Buffer.from(value ?? '', 'base64url'));
  const recipientPublicKey = new Map<number, unknown>([
    [COSE.kty, COSE.EC2],
    [COSE.crv, COSE.P256],
    [COSE.x, coordinate(privateJwk.x)],
    [COSE.y, coordinate(privateJwk.y)],
  ]);
  const parameters = new Map<string, unknown>([
    ['nonce', new Uint8Array(randomBytes(NONCE_BYTES))],
    ['recipientPublicKey', recipientPublicKey],
  ]);
  const encryptionInfo = Buffer.from(cbor.encode([DCAPI, parameters])).toString('base64url');
  return { recipient: { privateJwk }, encryptionInfo };
}

const reject = (reason: string) => new PresentationRejected(`Annex C response: ${reason}`);

/** Strict decoding of the wallet's bytes: maps stay Maps, no records, no structured clones. */
const decoder = new Decoder({ mapsAsObjects: false, useRecords: false });

function bytesOf(value: unknown): Uint8Array | undefined {
  return value instanceof Uint8Array ? value : undefined;
}

/** The `enc` and `cipherText` of EncryptedResponse = ["dcapi", {enc, cipherText}], checked for shape and size. */
export function parseEncryptedResponse(response: string): { enc: Uint8Array; cipherText: Uint8Array } {
  if (!/^[A-Za-z0-9_-]+$/.test(response)) throw reject('`response` is not base64url');
  let decoded: unknown;
  try {
    decoded = decoder.decode(Buffer.from(response, 'base64url'));
  } catch {
    throw reject('`response` is not CBOR');
  }
  if (!Array.isArray(decoded) || decoded.length !== 2 || decoded[0] !== DCAPI || !(decoded[1] instanceof Map))
    throw reject('not an EncryptedResponse ["dcapi", {enc, cipherText}]');
  const data = decoded[1] as Map<unknown, unknown>;
  const enc = bytesOf(data.get('enc'));
  const cipherText = bytesOf(data.get('cipherText'));
  if (!enc || enc.length !== ENC_BYTES || enc[0] !== 0x04) throw reject('`enc` must be an uncompressed P-256 point (65 bytes)');
  if (!cipherText || cipherText.length <= TAG_BYTES) throw reject('`cipherText` must be a byte string longer than the AES-GCM tag');
  return { enc, cipherText };
}

/**
 * HPKE open with the session's recipient key and info = CBOR(SessionTranscript). A response sealed
 * to another key, over another transcript (another origin or another session's EncryptionInfo) or
 * altered on the way fails the AEAD check; which of these it was cannot be told apart, by design.
 */
export async function openResponse(
  recipient: RecipientKey,
  sealed: { enc: Uint8Array; cipherText: Uint8Array },
  sessionTranscript: Uint8Array,
): Promise<Uint8Array> {
  const recipientKey = await suite.kem.importKey('jwk', recipient.privateJwk as JsonWebKey, false);
  try {
    const plaintext = await suite.open({ recipientKey, enc: sealed.enc, info: sessionTranscript }, sealed.cipherText);
    return new Uint8Array(plaintext);
  } catch {
    throw reject(
      'the response could not be decrypted: it was not encrypted to this session’s key over this session’s transcript (origin and EncryptionInfo), or it was altered',
    );
  }
}
