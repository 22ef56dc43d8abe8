// MASTER_KEY_PROVIDER=file: a 32-byte key in a file (a mounted Kubernetes or Docker secret, say),
// raw or in base64, that wraps the data key with AES-256-GCM here. Its name is the key's
// fingerprint rather than the path, so a file moved elsewhere still opens, and another key at the
// same path is told apart before anything is decrypted.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type MasterKeySource, MasterKeySourceError } from './source.js';

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Bound as associated data: a value wrapped for another use of the same key does not open here. */
const AAD = Buffer.from('svc/master-key', 'utf8');

/** `setting` names the configuration key that gave the path, for the one-line failure. */
export function fileSource(path: string, setting: string): MasterKeySource {
  const key = readKey(path, setting);
  const fingerprint = createHash('sha256').update(key).digest('hex').slice(0, 16);
  return {
    name: `file:${fingerprint}`,
    async wrap(dataKey) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(AAD);
      const body = Buffer.concat([cipher.update(dataKey), cipher.final()]);
      return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
    },
    async unwrap(wrapped) {
      const bytes = Buffer.from(wrapped, 'base64url');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES)).setAAD(AAD);
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
        return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
      } catch {
        throw new MasterKeySourceError(`${setting} ${path}: the key does not open the data key stored in the database`, 'config');
      }
    },
  };
}

/** 32 bytes as they are, or the text of a file in base64 (or base64url) that decodes to 32 bytes. */
function readKey(path: string, setting: string): Buffer {
  let content: Buffer;
  try {
    content = readFileSync(path);
  } catch (err) {
    throw new MasterKeySourceError(
      `${setting} ${path}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      'config',
    );
  }
  if (content.length === KEY_BYTES) return content;
  const text = content.toString('utf8').trim();
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) {
    const decoded = Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64');
    if (decoded.length === KEY_BYTES) return decoded;
  }
  throw new MasterKeySourceError(
    `${setting} ${path}: must hold a 32-byte key, raw or in base64 (such as openssl rand -base64 32 writes)`,
    'config',
  );
}
