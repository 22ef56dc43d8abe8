import { createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';

/** One key per purpose from MASTER_SECRET, so a key leaked for one use does not unlock another. */
export function deriveKey(masterSecret: string, purpose: string, length = 32): Buffer {
  return Buffer.from(hkdfSync('sha256', masterSecret, 'svc', `svc/${purpose}`, length));
}

/**
 * deriveKey's key as a KeyObject, for HMACs and ciphers made on every request: node:crypto checks
 * whether a key is a KeyObject by reading its private slots, and a Buffer fails that check by a
 * thrown (and caught) exception each time, which costs more than a short HMAC itself.
 */
export function deriveSecretKey(masterSecret: string, purpose: string, length = 32): KeyObject {
  return createSecretKey(deriveKey(masterSecret, purpose, length));
}
