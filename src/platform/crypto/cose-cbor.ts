// COSE structures (RFC 9052: a status list's CWT, a signed mdoc) are CBOR. cbor-x, which probes for a
// native addon as it loads, is loaded by the first structure signed, not at start.
import { lazy } from '../lazy.js';

export interface CoseCbor {
  encode(value: unknown): Uint8Array;
  /** The value under a CBOR tag (COSE_Sign1 is tag 18). */
  tagged(value: unknown, tag: number): Uint8Array;
}

/** CBOR as COSE writes it: maps stay maps (integer labels), byte strings untagged, no record extension. */
export const coseCbor = lazy(async (): Promise<CoseCbor> => {
  const { Encoder, Tag } = await import('cbor-x');
  const encoder = new Encoder({ mapsAsObjects: false, useRecords: false, tagUint8Array: false });
  return {
    encode: (value) => encoder.encode(value),
    tagged: (value, tag) => new Uint8Array(encoder.encode(new Tag(value, tag))),
  };
});
