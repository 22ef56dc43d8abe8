// A minimal DER (X.690) writer and reader: enough to make X.509 certificates and CRLs
// (key-chains/certificates.ts) without an ASN.1 library, whose weight the service would otherwise
// carry from the first tenant on. Only definite lengths and low tag numbers (< 31) are supported:
// nothing the certificate profile uses needs more.

export type Der = Uint8Array;

const UNIVERSAL = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  objectIdentifier: 0x06,
  utf8String: 0x0c,
  sequence: 0x30,
  set: 0x31,
  printableString: 0x13,
  ia5String: 0x16,
  utcTime: 0x17,
  generalizedTime: 0x18,
} as const;

const CONTEXT_PRIMITIVE = 0x80;
const CONTEXT_CONSTRUCTED = 0xa0;

const concat = (parts: readonly Uint8Array[]): Uint8Array => Buffer.concat(parts);

/** A non-negative whole number big-endian in the fewest bytes (none for 0). */
function bigEndian(value: number): number[] {
  const bytes: number[] = [];
  for (let rest = value; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return bytes;
}

/** Short form below 128; else 0x80 | count, then the length big-endian in the fewest bytes. */
function encodeLength(length: number): Uint8Array {
  if (length < 0x80) return Uint8Array.of(length);
  const bytes = bigEndian(length);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

/** One tag-length-value; `content` is the already encoded value (or the concatenation of children). */
export const tlv = (tag: number, ...content: Uint8Array[]): Der => {
  const value = concat(content);
  return concat([Uint8Array.of(tag), encodeLength(value.length), value]);
};

export const sequence = (...children: Der[]): Der => tlv(UNIVERSAL.sequence, ...children);

/** A SET OF; DER wants its elements sorted by encoding, which the one-element sets of a Name are. */
export const set = (...children: Der[]): Der => tlv(UNIVERSAL.set, ...sortedByEncoding(children));

function sortedByEncoding(children: Der[]): Der[] {
  return [...children].sort((a, b) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
    return a.length - b.length;
  });
}

/**
 * A non-negative INTEGER from its big-endian bytes: leading zeros dropped (minimal encoding), and a
 * zero put back in front when the first byte has its high bit set, which would otherwise read as negative.
 */
export function unsignedInteger(bytes: Uint8Array): Der {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const magnitude = bytes.length === 0 ? Uint8Array.of(0) : bytes.subarray(start);
  const needsPad = (magnitude[0] as number) >= 0x80;
  return tlv(UNIVERSAL.integer, needsPad ? Uint8Array.of(0) : new Uint8Array(), magnitude);
}

/** A small non-negative INTEGER (versions, path lengths). */
export const smallInteger = (value: number): Der => unsignedInteger(Uint8Array.from(bigEndian(value)));

/** Base-128 with the continuation bit on every byte but the last. */
function base128(value: number): number[] {
  const bytes = [value % 128];
  for (let rest = Math.floor(value / 128); rest > 0; rest = Math.floor(rest / 128)) bytes.unshift(0x80 | (rest % 128));
  return bytes;
}

/** An OBJECT IDENTIFIER from its dotted form; the first two arcs share one subidentifier (40·a + b). */
export function objectIdentifier(dotted: string): Der {
  const arcs = dotted.split('.').map((arc) => {
    if (!/^\d+$/.test(arc)) throw new Error(`not an object identifier: ${dotted}`);
    return Number(arc);
  });
  const [first, second, ...rest] = arcs;
  if (first === undefined || second === undefined || first > 2 || (first < 2 && second > 39)) {
    throw new Error(`not an object identifier: ${dotted}`);
  }
  return tlv(UNIVERSAL.objectIdentifier, Uint8Array.from([first * 40 + second, ...rest].flatMap(base128)));
}

export const boolean = (value: boolean): Der => tlv(UNIVERSAL.boolean, Uint8Array.of(value ? 0xff : 0x00));

export const octetString = (bytes: Uint8Array): Der => tlv(UNIVERSAL.octetString, bytes);

/** A BIT STRING of whole bytes, or with `unusedBits` (0–7) trailing bits of the last byte unused. */
export const bitString = (bytes: Uint8Array, unusedBits = 0): Der => tlv(UNIVERSAL.bitString, Uint8Array.of(unusedBits), bytes);

/**
 * A named-bit BIT STRING (KeyUsage): bit 0 is the first byte's high bit, and DER drops the trailing
 * zero bits (X.690 11.2.2), so the length is set by the highest bit that is on.
 */
export function namedBits(bits: readonly number[]): Der {
  if (bits.length === 0) return bitString(new Uint8Array());
  const highest = Math.max(...bits);
  const bytes = new Uint8Array(Math.floor(highest / 8) + 1);
  for (const bit of bits) bytes[Math.floor(bit / 8)] = (bytes[Math.floor(bit / 8)] as number) | (0x80 >> (bit % 8));
  return bitString(bytes, 7 - (highest % 8));
}

const text = new TextEncoder();
const ascii = (value: string, kind: string, allowed: RegExp) => {
  if (!allowed.test(value)) throw new Error(`${JSON.stringify(value)} is not a valid ${kind}`);
  return text.encode(value);
};

/** The characters a PrintableString may hold (X.680 41.4). */
export const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

export const printableString = (value: string): Der => tlv(UNIVERSAL.printableString, ascii(value, 'PrintableString', PRINTABLE));
export const utf8String = (value: string): Der => tlv(UNIVERSAL.utf8String, text.encode(value));
export const ia5String = (value: string): Der => tlv(UNIVERSAL.ia5String, ascii(value, 'IA5String', /^\p{ASCII}*$/u));

const twoDigits = (n: number) => String(n).padStart(2, '0');

/**
 * A certificate or CRL time, to the second in UTC: UTCTime (two-digit year) through 2049,
 * GeneralizedTime from 2050 on, as RFC 5280 4.1.2.5 requires.
 */
export function time(date: Date): Der {
  const year = date.getUTCFullYear();
  const rest = [date.getUTCMonth() + 1, date.getUTCDate(), date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds()]
    .map(twoDigits)
    .join('');
  if (year < 1950 || year > 9999) throw new Error(`no certificate time for the year ${year}`);
  return year < 2050
    ? tlv(UNIVERSAL.utcTime, text.encode(`${twoDigits(year % 100)}${rest}Z`))
    : tlv(UNIVERSAL.generalizedTime, text.encode(`${year}${rest}Z`));
}

/** [n] EXPLICIT: a constructed context tag around the whole inner encoding. */
export const explicit = (tagNumber: number, inner: Der): Der => tlv(CONTEXT_CONSTRUCTED | tagNumber, inner);

/** [n] IMPLICIT: the inner value's tag replaced by the context tag, constructed when the inner one was. */
export function implicit(tagNumber: number, inner: Der): Der {
  const element = readElement(inner, 0);
  const constructed = ((inner[0] as number) & 0x20) !== 0;
  return tlv((constructed ? CONTEXT_CONSTRUCTED : CONTEXT_PRIMITIVE) | tagNumber, inner.subarray(element.contentStart, element.end));
}

// --- Reading -----------------------------------------------------------------------------------

/** Where one TLV sits in its buffer. */
export interface Element {
  tag: number;
  start: number;
  contentStart: number;
  end: number;
}

export function readElement(der: Uint8Array, offset: number): Element {
  const tag = der[offset];
  const first = der[offset + 1];
  if (tag === undefined || first === undefined) throw new Error('DER: truncated');
  if ((tag & 0x1f) === 0x1f) throw new Error('DER: high tag numbers are not supported');
  let contentStart = offset + 2;
  let length = first;
  if (first >= 0x80) {
    const count = first & 0x7f;
    if (count === 0 || count > 4) throw new Error('DER: unsupported length');
    length = 0;
    for (let i = 0; i < count; i++) {
      const byte = der[contentStart + i];
      if (byte === undefined) throw new Error('DER: truncated');
      length = length * 256 + byte;
    }
    contentStart += count;
  }
  const end = contentStart + length;
  if (end > der.length) throw new Error('DER: truncated');
  return { tag, start: offset, contentStart, end };
}

/** The TLVs directly inside a constructed element. */
export function childrenOf(der: Uint8Array, parent: Element): Element[] {
  const children: Element[] = [];
  for (let offset = parent.contentStart; offset < parent.end; ) {
    const child = readElement(der, offset);
    // readElement bounds a child by the buffer only: one longer than its parent would read its siblings' bytes.
    if (child.end > parent.end) throw new Error('DER: truncated');
    children.push(child);
    offset = child.end;
  }
  return children;
}

function expectTag(element: Element | undefined, tag: number, what: string): Element {
  if (!element || element.tag !== tag) throw new Error(`DER: expected ${what}`);
  return element;
}

/**
 * The subject Name and SubjectPublicKeyInfo of a certificate, as the bytes it holds them in.
 * TBSCertificate: [0] version (optional), serialNumber, signature, issuer, validity, subject, spki, …
 */
export function certificateSubject(certificate: Uint8Array): { subject: Der; subjectPublicKeyInfo: Der } {
  const outer = expectTag(readElement(certificate, 0), UNIVERSAL.sequence, 'Certificate');
  const tbs = expectTag(childrenOf(certificate, outer)[0], UNIVERSAL.sequence, 'TBSCertificate');
  const fields = childrenOf(certificate, tbs);
  const afterVersion = fields[0]?.tag === (CONTEXT_CONSTRUCTED | 0) ? fields.slice(1) : fields;
  const subject = expectTag(afterVersion[4], UNIVERSAL.sequence, 'subject Name');
  const spki = expectTag(afterVersion[5], UNIVERSAL.sequence, 'SubjectPublicKeyInfo');
  return {
    subject: certificate.slice(subject.start, subject.end),
    subjectPublicKeyInfo: certificate.slice(spki.start, spki.end),
  };
}

const AUTHORITY_KEY_IDENTIFIER = Buffer.from(objectIdentifier('2.5.29.35'));

/**
 * The keyIdentifier of a certificate's AuthorityKeyIdentifier extension (RFC 5280 section 4.2.1.1),
 * its raw bytes; undefined when the certificate has no such extension or the extension names its
 * authority only by issuer and serial number. TBSCertificate ends with [3] EXPLICIT Extensions, each
 * Extension a SEQUENCE { extnID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING } whose value
 * here is SEQUENCE { [0] IMPLICIT KeyIdentifier OPTIONAL, [1] ..., [2] ... }.
 */
export function authorityKeyIdentifier(certificate: Uint8Array): Uint8Array | undefined {
  const outer = expectTag(readElement(certificate, 0), UNIVERSAL.sequence, 'Certificate');
  const tbs = expectTag(childrenOf(certificate, outer)[0], UNIVERSAL.sequence, 'TBSCertificate');
  const extensions = childrenOf(certificate, tbs).find((field) => field.tag === (CONTEXT_CONSTRUCTED | 3));
  if (!extensions) return undefined;
  const list = expectTag(childrenOf(certificate, extensions)[0], UNIVERSAL.sequence, 'Extensions');
  for (const extension of childrenOf(certificate, list)) {
    const [id, ...rest] = childrenOf(certificate, expectTag(extension, UNIVERSAL.sequence, 'Extension'));
    const oid = expectTag(id, UNIVERSAL.objectIdentifier, 'extnID');
    if (!Buffer.from(certificate.subarray(oid.start, oid.end)).equals(AUTHORITY_KEY_IDENTIFIER)) continue;
    const value = expectTag(rest.at(-1), UNIVERSAL.octetString, 'extnValue');
    const aki = expectTag(readElement(certificate, value.contentStart), UNIVERSAL.sequence, 'AuthorityKeyIdentifier');
    if (aki.end !== value.end) throw new Error('DER: trailing bytes after AuthorityKeyIdentifier');
    const keyIdentifier = childrenOf(certificate, aki).find((field) => field.tag === (CONTEXT_PRIMITIVE | 0));
    return keyIdentifier && certificate.slice(keyIdentifier.contentStart, keyIdentifier.end);
  }
  return undefined;
}

/** The key bits of a SubjectPublicKeyInfo: its BIT STRING's value without the unused-bits count. */
export function subjectPublicKey(spki: Uint8Array): Uint8Array {
  const outer = expectTag(readElement(spki, 0), UNIVERSAL.sequence, 'SubjectPublicKeyInfo');
  const key = expectTag(childrenOf(spki, outer)[1], UNIVERSAL.bitString, 'subjectPublicKey');
  return spki.slice(key.contentStart + 1, key.end);
}

/** WebCrypto's ECDSA signature (r ‖ s, each the curve's size) as X.509 wants it: SEQUENCE { r, s }. */
export function ecdsaSignatureToDer(rawSignature: Uint8Array): Der {
  if (rawSignature.length === 0 || rawSignature.length % 2 !== 0) throw new Error('ECDSA signature: r and s differ in length');
  const half = rawSignature.length / 2;
  return sequence(unsignedInteger(rawSignature.subarray(0, half)), unsignedInteger(rawSignature.subarray(half)));
}

/** PEM armour: base64 in lines of 64 characters between the label's BEGIN and END lines. */
export function toPem(der: Uint8Array, label: string): string {
  const lines =
    Buffer.from(der)
      .toString('base64')
      .match(/.{1,64}/g) ?? [];
  return [`-----BEGIN ${label}-----`, ...lines, `-----END ${label}-----`].join('\n');
}
