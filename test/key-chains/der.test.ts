// The DER writer and reader under the key chains' certificates, at the edges where encodings change
// form: length octets, INTEGER sign padding, the UTCTime/GeneralizedTime switch, signature conversion.
import { generateKeyPairSync, sign, verify, webcrypto } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  authorityKeyIdentifier,
  bitString,
  certificateSubject,
  childrenOf,
  ecdsaSignatureToDer,
  explicit,
  ia5String,
  implicit,
  namedBits,
  objectIdentifier,
  octetString,
  printableString,
  readElement,
  sequence,
  set,
  smallInteger,
  subjectPublicKey,
  time,
  tlv,
  toPem,
  unsignedInteger,
  utf8String,
} from '../../src/platform/crypto/der.js';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const bytes = (hexString: string) => new Uint8Array(Buffer.from(hexString, 'hex'));

describe('lengths', () => {
  it.each([
    [0, '00'],
    [127, '7f'],
    [128, '8180'],
    [255, '81ff'],
    [256, '820100'],
    [65_535, '82ffff'],
    [65_536, '83010000'],
  ])('a %i-byte value has the length octets %s and reads back', (length, lengthOctets) => {
    const encoded = octetString(new Uint8Array(length).fill(0xab));
    expect(hex(encoded.subarray(1, 1 + lengthOctets.length / 2))).toBe(lengthOctets);
    expect(encoded.length).toBe(1 + lengthOctets.length / 2 + length);
    const element = readElement(encoded, 0);
    expect([element.tag, element.contentStart, element.end]).toEqual([0x04, 1 + lengthOctets.length / 2, encoded.length]);
  });

  it('refuses truncated input', () => {
    expect(() => readElement(bytes('0405abcd'), 0)).toThrow(/truncated/);
    expect(() => readElement(bytes('3080'), 0)).toThrow(/length/);
  });

  it.each([
    ['a short form', sequence(smallInteger(1), octetString(bytes('0102')))],
    ['a long form', octetString(new Uint8Array(300).fill(7))],
  ])('refuses %s cut short at every position', (_, whole) => {
    expect(readElement(whole, 0).end).toBe(whole.length);
    for (let cut = 0; cut < whole.length; cut++) {
      expect(() => readElement(whole.subarray(0, cut), 0), `cut at ${cut}`).toThrow(/DER: truncated/);
    }
  });

  it.each([
    ['80', 'the indefinite form'],
    ['85', 'a length of five octets'],
    ['ff', 'the reserved 0xff'],
  ])('refuses the length octet %s (%s)', (lengthOctet) => {
    expect(() => readElement(bytes(`04${lengthOctet}0000000000000000`), 0)).toThrow('DER: unsupported length');
  });

  it('reads a four-octet length, and refuses one with too few octets or larger than the input', () => {
    expect(readElement(bytes('048400000002abcd'), 0)).toEqual({ tag: 0x04, start: 0, contentStart: 6, end: 8 });
    expect(() => readElement(bytes('0484000000'), 0)).toThrow('DER: truncated');
    expect(() => readElement(bytes('048400000003abcd'), 0)).toThrow('DER: truncated');
    expect(() => readElement(bytes('0484ffffffff00'), 0)).toThrow('DER: truncated');
  });

  it.each(['1f2200', '3f810100', 'bf1f00', 'df2001ff'])('refuses the high tag number form in %s', (input) => {
    expect(() => readElement(bytes(input), 0)).toThrow('DER: high tag numbers are not supported');
  });

  it('reads at an offset, and tag 30 (the highest low tag number)', () => {
    expect(readElement(bytes('ff1e01aa'), 1)).toEqual({ tag: 0x1e, start: 1, contentStart: 3, end: 4 });
  });

  it('lists the children of a constructed element, and refuses a child that overruns its parent', () => {
    const whole = sequence(smallInteger(1), octetString(bytes('0102')));
    expect(childrenOf(whole, readElement(whole, 0)).map((child) => [child.tag, child.start, child.end])).toEqual([
      [0x02, 2, 5],
      [0x04, 5, 9],
    ]);
    // The SEQUENCE says 3 content octets; its OCTET STRING claims 4, read from the bytes after it.
    const overrun = bytes('300304040102030405');
    expect(() => childrenOf(overrun, readElement(overrun, 0))).toThrow('DER: truncated');
  });
});

describe('INTEGER', () => {
  it.each([
    ['', '020100'],
    ['00', '020100'],
    ['0000', '020100'],
    ['7f', '02017f'],
    ['80', '02020080'],
    ['ff', '020200ff'],
    ['00007f', '02017f'],
    ['000080', '02020080'],
    ['0100', '02020100'],
  ])('from the unsigned bytes %s is %s', (input, expected) => {
    expect(hex(unsignedInteger(bytes(input)))).toBe(expected);
  });

  it.each([
    [0, '020100'],
    [2, '020102'],
    [127, '02017f'],
    [128, '02020080'],
    [256, '02020100'],
  ])('from the number %i is %s', (value, expected) => {
    expect(hex(smallInteger(value))).toBe(expected);
  });
});

describe('OBJECT IDENTIFIER', () => {
  it.each([
    ['2.5.29.14', '0603551d0e'],
    ['1.2.840.10045.4.3.2', '06082a8648ce3d040302'],
    ['1.0.18013.5.1.2', '060728818c5d050102'],
    ['2.999.3', '0603883703'],
  ])('%s is %s', (dotted, expected) => {
    expect(hex(objectIdentifier(dotted))).toBe(expected);
  });

  it.each([
    ['0.39', '060127'],
    ['1.39.0', '06024f00'],
    ['2.40', '060178'],
    ['2.47.127', '06027f7f'],
    ['1.2.128', '06032a8100'],
    ['1.2.16383.16384', '06062a ff7f 818000'],
    ['1.2.4294967295', '06062a8fffffff7f'],
  ])('%s is %s (base 128, minimal, continuation bit on all but the last octet)', (dotted, expected) => {
    expect(hex(objectIdentifier(dotted))).toBe(expected.replaceAll(' ', ''));
  });

  it.each(['1', '', '3.1', '9.0', '0.40', '1.40', '1.2.x', '1..2', '1.2.', '-1.2', '1.2.-3'])('refuses %j', (dotted) => {
    expect(() => objectIdentifier(dotted)).toThrow(/object identifier/);
  });
});

describe('times (RFC 5280 4.1.2.5)', () => {
  it.each([
    ['1999-12-31T23:59:59.999Z', '17', '991231235959Z'],
    ['2026-03-04T05:06:07Z', '17', '260304050607Z'],
    ['2049-12-31T23:59:59Z', '17', '491231235959Z'],
    ['2050-01-01T00:00:00Z', '18', '20500101000000Z'],
    ['2136-07-08T09:10:11Z', '18', '21360708091011Z'],
    ['1950-01-01T00:00:00Z', '17', '500101000000Z'],
    ['2049-01-01T00:00:00Z', '17', '490101000000Z'],
    ['2050-12-31T23:59:59Z', '18', '20501231235959Z'],
    ['9999-12-31T23:59:59Z', '18', '99991231235959Z'],
  ])('%s is tag %s %s', (iso, tag, text) => {
    const encoded = time(new Date(iso));
    expect(hex(encoded.subarray(0, 1))).toBe(tag);
    expect(Buffer.from(encoded.subarray(2)).toString('latin1')).toBe(text);
    expect(encoded[1]).toBe(text.length);
  });

  it.each(['1949-12-31T23:59:59Z', '1900-01-01T00:00:00Z', '+010000-01-01T00:00:00Z'])(
    'refuses %s, which neither form holds unambiguously',
    (iso) => {
      expect(() => time(new Date(iso))).toThrow(`no certificate time for the year ${new Date(iso).getUTCFullYear()}`);
    },
  );
});

describe('strings, bits and tags', () => {
  it('encodes the string types and refuses characters a type cannot hold', () => {
    expect(hex(printableString("A-z 0'()+,./:=?"))).toBe(`130f${Buffer.from("A-z 0'()+,./:=?").toString('hex')}`);
    expect(() => printableString('a&b')).toThrow(/PrintableString/);
    expect(hex(utf8String('é'))).toBe('0c02c3a9');
    expect(hex(ia5String('https://x'))).toBe(`1609${Buffer.from('https://x').toString('hex')}`);
    expect(() => ia5String('é')).toThrow(/IA5String/);
  });

  it.each([
    [[0], '03020780'],
    [[4], '03020308'],
    [[5, 6], '03020106'],
    [[7], '03020001'],
    [[8], '0303070080'],
    [[], '030100'],
  ])('writes the named bits %j as %s, trailing zero bits dropped', (bits, expected) => {
    expect(hex(namedBits(bits))).toBe(expected);
  });

  it('writes explicit and implicit context tags', () => {
    expect(hex(explicit(3, smallInteger(2)))).toBe('a303020102');
    expect(hex(implicit(0, octetString(bytes('0102'))))).toBe('80020102');
    expect(hex(implicit(6, ia5String('a')))).toBe('860161');
    expect(hex(implicit(0, sequence(smallInteger(1))))).toBe('a003020101');
    expect(hex(bitString(bytes('ff'), 0))).toBe('030200ff');
  });

  it('sorts the elements of a SET by their encoding', () => {
    expect(hex(set(smallInteger(2), octetString(bytes('01')), smallInteger(1)))).toBe('3109020101020102040101');
  });
});

describe('reading a certificate', () => {
  const name = sequence(set(sequence(objectIdentifier('2.5.4.3'), printableString('Issuer'))));
  const spki = sequence(sequence(objectIdentifier('1.2.840.10045.2.1')), bitString(bytes('04aabb')));
  const validity = sequence(time(new Date()), time(new Date()));
  const algorithm = sequence(objectIdentifier('1.2.840.10045.4.3.2'));
  const certificate = (tbs: Uint8Array) => sequence(tbs, algorithm, bitString(bytes('00')));

  it('finds subject and SubjectPublicKeyInfo with and without the version field', () => {
    const subject = sequence(set(sequence(objectIdentifier('2.5.4.3'), utf8String('Subjé'))));
    const v3 = certificate(sequence(explicit(0, smallInteger(2)), smallInteger(7), algorithm, name, validity, subject, spki));
    const v1 = certificate(sequence(smallInteger(7), algorithm, name, validity, subject, spki));
    for (const cert of [v3, v1]) {
      const fields = certificateSubject(cert);
      expect(hex(fields.subject)).toBe(hex(subject));
      expect(hex(fields.subjectPublicKeyInfo)).toBe(hex(spki));
    }
  });

  it('takes the key bits out of a SubjectPublicKeyInfo without the unused-bits octet', async () => {
    expect(hex(subjectPublicKey(spki))).toBe('04aabb');
    const { publicKey } = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-384' }, true, ['sign'])) as CryptoKeyPair;
    const jwk = await webcrypto.subtle.exportKey('jwk', publicKey);
    const der = new Uint8Array(await webcrypto.subtle.exportKey('spki', publicKey));
    const point = Buffer.concat([Buffer.of(4), Buffer.from(jwk.x as string, 'base64url'), Buffer.from(jwk.y as string, 'base64url')]);
    expect(hex(subjectPublicKey(der))).toBe(point.toString('hex'));
  });

  it('takes no key bits out of an empty BIT STRING, and refuses a SubjectPublicKeyInfo without one', () => {
    const algorithmOnly = sequence(objectIdentifier('1.2.840.10045.2.1'));
    expect(hex(subjectPublicKey(sequence(algorithmOnly, bitString(new Uint8Array()))))).toBe('');
    expect(() => subjectPublicKey(sequence(algorithmOnly, octetString(bytes('0004'))))).toThrow('DER: expected subjectPublicKey');
    expect(() => subjectPublicKey(sequence(algorithmOnly))).toThrow('DER: expected subjectPublicKey');
    expect(() => subjectPublicKey(octetString(bytes('00')))).toThrow('DER: expected SubjectPublicKeyInfo');
  });

  // AuthorityKeyIdentifier (RFC 5280 4.2.1.1), as DCQL trusted_authorities of type aki match it.
  const extension = (oid: string, value: Uint8Array, critical?: boolean) =>
    sequence(objectIdentifier(oid), ...(critical === undefined ? [] : [tlv(0x01, Uint8Array.of(critical ? 0xff : 0))]), octetString(value));
  const withExtensions = (...extensions: Uint8Array[]) =>
    certificate(
      sequence(explicit(0, smallInteger(2)), smallInteger(7), algorithm, name, validity, name, spki, explicit(3, sequence(...extensions))),
    );
  const SKI = extension('2.5.29.14', octetString(bytes('0102')));

  it('reads the keyIdentifier of the AuthorityKeyIdentifier, among other extensions, critical flag or not', () => {
    const keyIdOnly = extension('2.5.29.35', sequence(implicit(0, octetString(bytes('a1b2c3')))));
    expect(hex(authorityKeyIdentifier(withExtensions(SKI, keyIdOnly)) as Uint8Array)).toBe('a1b2c3');
    // keyIdentifier beside authorityCertIssuer [1] and authorityCertSerialNumber [2]
    const full = sequence(implicit(0, octetString(bytes('0a0b'))), explicit(1, name), implicit(2, smallInteger(9)));
    expect(hex(authorityKeyIdentifier(withExtensions(extension('2.5.29.35', full, false))) as Uint8Array)).toBe('0a0b');
  });

  it('reads no keyIdentifier without the extension, without extensions, or when the authority is named by issuer and serial only', () => {
    expect(authorityKeyIdentifier(withExtensions(SKI))).toBeUndefined();
    expect(authorityKeyIdentifier(certificate(sequence(smallInteger(7), algorithm, name, validity, name, spki)))).toBeUndefined();
    const issuerAndSerial = sequence(explicit(1, name), implicit(2, smallInteger(9)));
    expect(authorityKeyIdentifier(withExtensions(extension('2.5.29.35', issuerAndSerial)))).toBeUndefined();
  });

  it('refuses certificates whose extensions are malformed, naming the part', () => {
    const tbs = (...extensions: Uint8Array[]) =>
      sequence(explicit(0, smallInteger(2)), smallInteger(7), algorithm, name, validity, name, spki, ...extensions);
    expect(() => authorityKeyIdentifier(octetString(bytes('00')))).toThrow('DER: expected Certificate');
    expect(() => authorityKeyIdentifier(sequence(octetString(bytes('00'))))).toThrow('DER: expected TBSCertificate');
    expect(() => authorityKeyIdentifier(certificate(tbs(explicit(3, octetString(bytes('00'))))))).toThrow('DER: expected Extensions');
    expect(() => authorityKeyIdentifier(withExtensions(octetString(bytes('00'))))).toThrow('DER: expected Extension');
    expect(() => authorityKeyIdentifier(withExtensions(sequence(octetString(bytes('00')), octetString(bytes('00')))))).toThrow(
      'DER: expected extnID',
    );
    expect(() => authorityKeyIdentifier(withExtensions(sequence(objectIdentifier('2.5.29.35'), smallInteger(1))))).toThrow(
      'DER: expected extnValue',
    );
  });

  it('refuses an AuthorityKeyIdentifier that is not a SEQUENCE or has bytes after it', () => {
    expect(() => authorityKeyIdentifier(withExtensions(extension('2.5.29.35', octetString(bytes('01')))))).toThrow(
      'DER: expected AuthorityKeyIdentifier',
    );
    const trailing = Buffer.concat([sequence(implicit(0, octetString(bytes('01')))), bytes('0500')]);
    expect(() => authorityKeyIdentifier(withExtensions(extension('2.5.29.35', trailing)))).toThrow('trailing bytes');
  });

  it('refuses what is not a certificate', () => {
    expect(() => certificateSubject(octetString(bytes('00')))).toThrow(/Certificate/);
    expect(() => certificateSubject(certificate(sequence(smallInteger(1))))).toThrow(/subject/);
  });
});

describe('ECDSA signatures', () => {
  it('turns r ‖ s into SEQUENCE { r, s } with minimal INTEGERs', () => {
    const r = `0000${'01'.repeat(30)}`;
    const s = `80${'02'.repeat(31)}`;
    expect(hex(ecdsaSignatureToDer(bytes(r + s)))).toBe(`3043021e${'01'.repeat(30)}022100${s}`);
    expect(hex(ecdsaSignatureToDer(bytes(`${'00'.repeat(31)}05${'00'.repeat(32)}`)))).toBe('3006020105020100');
    expect(() => ecdsaSignatureToDer(bytes('010203'))).toThrow(/length/);
  });

  it.each(['', '01', '0102030405'])('refuses the raw signature %j: empty, or r and s of different lengths', (raw) => {
    expect(() => ecdsaSignatureToDer(bytes(raw))).toThrow('ECDSA signature: r and s differ in length');
  });

  it('keeps zero values as INTEGER 0 and splits r ‖ s in the middle', () => {
    expect(hex(ecdsaSignatureToDer(bytes('0000')))).toBe('3006020100020100');
    expect(hex(ecdsaSignatureToDer(bytes('01ff')))).toBe('30070201010202' + '00ff');
  });

  it.each(['P-256', 'P-384', 'P-521'] as const)('gives %s signatures that node:crypto verifies as DER', (namedCurve) => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve });
    const data = Buffer.from('tbs');
    // Enough signatures that some r or s start with a zero byte or with the high bit set.
    for (let i = 0; i < 64; i++) {
      const raw = sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
      const der = ecdsaSignatureToDer(new Uint8Array(raw));
      expect(verify('sha256', data, { key: publicKey, dsaEncoding: 'der' }, der)).toBe(true);
    }
  });
});

describe('PEM', () => {
  it('writes base64 lines of 64 characters', () => {
    const pem = toPem(new Uint8Array(100).fill(1), 'CERTIFICATE');
    const lines = pem.split('\n');
    expect(lines[0]).toBe('-----BEGIN CERTIFICATE-----');
    expect(lines.at(-1)).toBe('-----END CERTIFICATE-----');
    expect(lines.slice(1, -1).map((line) => line.length)).toEqual([64, 64, 8]);
  });
});
