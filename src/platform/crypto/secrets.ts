// Hashing of client secrets and passwords (scrypt), and generation of random secrets.
import { createHash, randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

const PARAMS = { N: 16384, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

function scryptAsync(secret: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(secret, salt, KEY_LENGTH, { ...options, maxmem: 64 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** A fresh secret with 256 bits of entropy, URL-safe. */
export function generateSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** `scrypt$N$r$p$salt$hash`, so the parameters can be raised later without breaking old hashes. */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(secret, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Compares two secrets (or their hashes) in time independent of where they differ. */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptAsync(secret, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * scrypt costs tens of milliseconds by design, too slow to pay on every token request of a busy
 * client. After one successful check we remember a SHA-256 of (stored hash, secret): a later request
 * with the same secret against the same stored hash is accepted on a hash comparison. Rotating the
 * secret changes the stored hash, which invalidates the entry. Process-local on purpose: it is only
 * a cache, and an instance that misses it falls back to scrypt.
 */
export class SecretVerifier {
  private readonly verified = new Map<string, Buffer>();
  constructor(private readonly maxEntries = 10_000) {}

  async verify(id: string, secret: string, stored: string): Promise<boolean> {
    const digest = createHash('sha256').update(stored).update('\0').update(secret).digest();
    const known = this.verified.get(id);
    if (known && timingSafeEqual(known, digest)) return true;
    if (!(await verifySecret(secret, stored))) return false;
    if (this.verified.size >= this.maxEntries) this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(id, digest);
    return true;
  }
}
