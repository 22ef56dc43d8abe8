// ECDSA signatures as cloud KMSs give them (DER) turned into what JOSE and COSE carry (r || s).

/** AWS KMS and Google Cloud KMS give ECDSA signatures in DER (SEQUENCE of INTEGER r, INTEGER s); JOSE and COSE want r || s, each `size` bytes. */
export function derToRaw(der: Uint8Array, size: number): Uint8Array {
  const bytes = Buffer.from(der);
  let offset = 0;
  const length = () => {
    const first = bytes[offset++] as number;
    if (first < 0x80) return first;
    let value = 0;
    for (let i = 0; i < (first & 0x7f); i++) value = (value << 8) | (bytes[offset++] as number);
    return value;
  };
  if (bytes[offset++] !== 0x30) throw new Error('the signature is not a DER SEQUENCE');
  length();
  const integer = () => {
    if (bytes[offset++] !== 0x02) throw new Error('the signature does not hold two DER INTEGERs');
    const octets = length();
    const end = offset + octets;
    let value = bytes.subarray(offset, end);
    offset = end;
    while (value.length > size && value[0] === 0) value = value.subarray(1);
    if (value.length > size) throw new Error('an integer of the signature is longer than the curve');
    return Buffer.concat([Buffer.alloc(size - value.length), value]);
  };
  return Buffer.concat([integer(), integer()]);
}
