// Encryption at rest: AES-256-GCM under a key derived per purpose, stored as one text value.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deriveKey } from './derive.js';

const VERSION = 'v1';

export interface Sealer {
  seal(plaintext: string): string;
  open(sealed: string): string;
  sealJson(value: unknown): string;
  openJson<T>(sealed: string): T;
}

export function createSealer(masterSecret: string, purpose: string): Sealer {
  const key = deriveKey(masterSecret, `encryption/${purpose}`);
  const seal = (plaintext: string) => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
  };
  const open = (sealed: string) => {
    const [version, iv, body, tag] = sealed.split('.');
    if (version !== VERSION || iv === undefined || body === undefined || tag === undefined) {
      throw new Error('not a sealed value');
    }
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  };
  return {
    seal,
    open,
    sealJson: (value) => seal(JSON.stringify(value)),
    openJson: <T>(sealed: string) => JSON.parse(open(sealed)) as T,
  };
}
