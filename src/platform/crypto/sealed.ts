// Encryption at rest: AES-256-GCM under a key derived per purpose, stored as one text value.
// An optional context (for example the owning row's id) is bound as associated data, so a sealed
// value copied into another row does not open there.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deriveSecretKey } from './derive.js';

const VERSION = 'v1';

export interface Sealer {
  seal(plaintext: string, context?: string): string;
  open(sealed: string, context?: string): string;
  sealJson(value: unknown, context?: string): string;
  openJson<T>(sealed: string, context?: string): T;
}

export function createSealer(masterSecret: string, purpose: string): Sealer {
  const key = deriveSecretKey(masterSecret, `encryption/${purpose}`);
  const seal = (plaintext: string, context = '') => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
  };
  const open = (sealed: string, context = '') => {
    const [version, iv, body, tag] = sealed.split('.');
    if (version !== VERSION || iv === undefined || body === undefined || tag === undefined) {
      throw new Error('not a sealed value');
    }
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  };
  return {
    seal,
    open,
    sealJson: (value, context) => seal(JSON.stringify(value), context),
    openJson: <T>(sealed: string, context?: string) => JSON.parse(open(sealed, context)) as T,
  };
}
