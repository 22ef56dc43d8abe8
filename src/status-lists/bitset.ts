// The Token Status List byte array and the secret permutation that spreads allocated indexes.
//
// Layout (draft-ietf-oauth-status-list, "Status List"): entry i of a list with `bits` bits per entry
// lives in byte floor(i * bits / 8), at bit offset (i * bits) % 8, least significant bits first.
import { createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';

export const STATUS_BITS = [1, 2, 4, 8] as const;
export type StatusBits = (typeof STATUS_BITS)[number];

export const byteLength = (capacity: number, bits: number) => Math.ceil((capacity * bits) / 8);

export function getStatus(bytes: Uint8Array, bits: number, index: number): number {
  const bit = index * bits;
  return ((bytes[bit >> 3] as number) >> (bit & 7)) & ((1 << bits) - 1);
}

/** Sets entry `index` to `value` in place. */
export function setStatus(bytes: Uint8Array, bits: number, index: number, value: number): void {
  const bit = index * bits;
  const mask = ((1 << bits) - 1) << (bit & 7);
  const at = bit >> 3;
  bytes[at] = ((bytes[at] as number) & ~mask) | ((value << (bit & 7)) & mask);
}

/** The largest value an entry of `bits` bits holds. */
export const maxStatus = (bits: number) => (1 << bits) - 1;

export const newPermutationKey = () => randomBytes(32).toString('hex');

/**
 * A keyed pseudorandom permutation of [0, size): slot n (the n-th allocation of a list) becomes index
 * permute(n). A balanced Feistel network over the smallest even power of two >= size, with HMAC-SHA256
 * rounds, and cycle walking back into the domain. Without the key, the next index cannot be predicted;
 * being a permutation, no index is handed out twice.
 */
export class IndexPermutation {
  private readonly halfBits: number;
  private readonly halfMask: number;
  private readonly key: KeyObject;

  constructor(
    keyHex: string,
    private readonly size: number,
  ) {
    if (!Number.isSafeInteger(size) || size < 1) throw new Error(`invalid permutation size ${size}`);
    let bits = 1;
    while (2 ** bits < size) bits++;
    this.halfBits = Math.max(1, Math.ceil(bits / 2));
    this.halfMask = 2 ** this.halfBits - 1;
    // A KeyObject: four HMACs per allocation, and node:crypto checks a Buffer key by a thrown exception.
    this.key = createSecretKey(Buffer.from(keyHex, 'hex'));
  }

  private round(round: number, value: number): number {
    const mac = createHmac('sha256', this.key).update(`${round}:${value}`).digest();
    return mac.readUInt32BE(0) & this.halfMask;
  }

  private encrypt(value: number): number {
    let left = Math.floor(value / 2 ** this.halfBits);
    let right = value & this.halfMask;
    for (let round = 0; round < 4; round++) {
      const next = (left ^ this.round(round, right)) & this.halfMask;
      left = right;
      right = next;
    }
    return left * 2 ** this.halfBits + right;
  }

  permute(slot: number): number {
    if (slot < 0 || slot >= this.size) throw new Error(`slot ${slot} is outside [0, ${this.size})`);
    let value = this.encrypt(slot);
    while (value >= this.size) value = this.encrypt(value);
    return value;
  }
}
