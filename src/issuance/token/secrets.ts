import { timingSafeEqual } from 'node:crypto';

/** Compares two secrets (or their hashes) in time independent of where they differ. */
export const sameSecret = (a: string, b: string) => {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
};
