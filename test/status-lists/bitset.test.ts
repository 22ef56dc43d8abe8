// The status list byte array and the index permutation, as pure functions: the array's length for
// every entry width, entries at the edges read and written without touching their neighbours (checked
// against @sd-jwt/jwt-status-list's independent encoding), and the permutation staying a bijection of
// [0, capacity) that refuses slots outside it.
import { StatusList } from '@sd-jwt/jwt-status-list';
import { describe, expect, it } from 'vitest';
import {
  byteLength,
  getStatus,
  IndexPermutation,
  maxStatus,
  newPermutationKey,
  STATUS_BITS,
  type StatusBits,
  setStatus,
} from '../../src/status-lists/bitset.js';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('byte length', () => {
  it.each([
    [1, 1, 1],
    [7, 1, 1],
    [8, 1, 1],
    [9, 1, 2],
    [10_001, 1, 1251],
    [3, 2, 1],
    [4, 2, 1],
    [5, 2, 2],
    [1, 4, 1],
    [2, 4, 1],
    [3, 4, 2],
    [1, 8, 1],
    [3, 8, 3],
  ])('of %i entries of %i bits is %i bytes', (capacity, bits, expected) => {
    expect(byteLength(capacity, bits)).toBe(expected);
  });
});

describe('entries', () => {
  it.each([
    [1, 1],
    [2, 3],
    [4, 15],
    [8, 255],
  ])('of %i bits hold at most %i', (bits, max) => {
    expect(maxStatus(bits)).toBe(max);
  });

  // Capacities below, at and past a byte boundary, and not multiples of the entries a byte holds.
  const cases = STATUS_BITS.flatMap((bits) => [1, 3, 5, 8, 13, 16].map((capacity) => [bits, capacity] as const));

  it.each(cases)('of %i bits in a list of %i: the first and last written alone, neighbours untouched', (bits, capacity) => {
    const last = capacity - 1;
    for (const index of new Set([0, last])) {
      const bytes = new Uint8Array(byteLength(capacity, bits));
      setStatus(bytes, bits, index, maxStatus(bits));
      const expected = Array.from({ length: capacity }, (_, i) => (i === index ? maxStatus(bits) : 0));
      expect(hex(bytes)).toBe(hex(new StatusList(expected, bits as StatusBits).encodeStatusList()));
      expect(Array.from({ length: capacity }, (_, i) => getStatus(bytes, bits, i))).toEqual(expected);
    }
  });

  it.each(cases)('of %i bits in a list of %i: every entry its own value, and one cleared among full ones', (bits, capacity) => {
    const bytes = new Uint8Array(byteLength(capacity, bits));
    const values = Array.from({ length: capacity }, (_, i) => (i * 7 + 1) % (maxStatus(bits) + 1));
    values.forEach((value, i) => {
      setStatus(bytes, bits, i, value);
    });
    expect(hex(bytes)).toBe(hex(new StatusList(values, bits as StatusBits).encodeStatusList()));
    const read = StatusList.decompressStatusList(new StatusList(values, bits as StatusBits).compressStatusList(), bits as StatusBits);
    expect(Array.from({ length: capacity }, (_, i) => getStatus(bytes, bits, i))).toEqual(values.map((_, i) => read.getStatus(i)));

    const full = new Uint8Array(byteLength(capacity, bits)).fill(0xff);
    const middle = capacity >> 1;
    setStatus(full, bits, middle, 0);
    expect(Array.from({ length: capacity }, (_, i) => getStatus(full, bits, i))).toEqual(
      Array.from({ length: capacity }, (_, i) => (i === middle ? 0 : maxStatus(bits))),
    );
  });

  it.each([1, 2, 4] as const)('of %i bits: a value wider than the entry does not spill into the next one', (bits) => {
    const bytes = new Uint8Array(1);
    setStatus(bytes, bits, 0, maxStatus(bits) + 1);
    expect(getStatus(bytes, bits, 0)).toBe(0);
    expect(getStatus(bytes, bits, 1)).toBe(0);
  });

  it.each(STATUS_BITS)('of %i bits: an index one past a list that fills its bytes writes nothing', (bits) => {
    const capacity = 16;
    const bytes = new Uint8Array(byteLength(capacity, bits));
    setStatus(bytes, bits, capacity, maxStatus(bits));
    expect(bytes.length).toBe(byteLength(capacity, bits));
    expect(bytes.every((byte) => byte === 0)).toBe(true);
  });
});

describe('index permutation', () => {
  const all = (permutation: IndexPermutation, size: number) => Array.from({ length: size }, (_, slot) => permutation.permute(slot));
  const range = (size: number) => Array.from({ length: size }, (_, i) => i);

  it.each([1, 2, 3, 5, 7, 8, 9, 17, 100, 257, 1000])('of %i slots hands out every index of [0, size) once', (size) => {
    const indexes = all(new IndexPermutation(newPermutationKey(), size), size);
    expect([...indexes].sort((a, b) => a - b)).toEqual(range(size));
  });

  it('is fixed by its key, and unpredictable without it', () => {
    const key = newPermutationKey();
    const order = all(new IndexPermutation(key, 1000), 1000);
    expect(all(new IndexPermutation(key, 1000), 1000)).toEqual(order);
    expect(order).not.toEqual(range(1000));
    expect(all(new IndexPermutation(newPermutationKey(), 1000), 1000)).not.toEqual(order);
  });

  it.each([1, 7, 100])('of %i slots refuses the slot equal to the size and a negative one', (size) => {
    const permutation = new IndexPermutation(newPermutationKey(), size);
    expect(() => permutation.permute(size)).toThrow(`slot ${size} is outside [0, ${size})`);
    expect(() => permutation.permute(-1)).toThrow(/outside/);
    expect(permutation.permute(size - 1)).toBeLessThan(size);
  });

  it.each([0, -1, 1.5, Number.NaN, 2 ** 53])('refuses the size %d', (size) => {
    expect(() => new IndexPermutation(newPermutationKey(), size)).toThrow(/invalid permutation size/);
  });
});
