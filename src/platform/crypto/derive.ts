import { hkdfSync } from 'node:crypto';

/** One key per purpose from MASTER_SECRET, so a key leaked for one use does not unlock another. */
export function deriveKey(masterSecret: string, purpose: string, length = 32): Buffer {
  return Buffer.from(hkdfSync('sha256', masterSecret, 'svc', `svc/${purpose}`, length));
}
