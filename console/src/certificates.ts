// What a person checks in a certificate chain (subject, issuer, validity, serial), read from the PEM
// the API returns. Only the few DER structures of an X.509 certificate's to-be-signed part are
// walked; the browser never needs to verify anything (the service does), so no crypto library.

export interface CertificateSummary {
  subject: string;
  issuer: string;
  serial: string;
  notBefore: Date;
  notAfter: Date;
  selfSigned: boolean;
  /** The keyIdentifier of its AuthorityKeyIdentifier, base64url, as DCQL trusted_authorities of type aki name it. */
  authorityKeyId?: string;
}

interface Node {
  tag: number;
  start: number;
  end: number;
}

/** The PEM certificate blocks of a text, in their order. */
const pemBlocks = (text: string) => text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];

/** The PEM blocks of a chain, leaf first, each summarised; a block that does not parse is left out. */
export function summarizeChain(pem: string): CertificateSummary[] {
  const blocks = pemBlocks(pem);
  return blocks.flatMap((block) => {
    try {
      return [summarize(base64Der(block))];
    } catch {
      return [];
    }
  });
}

/** The certificates of a file as PEM: PEM text as it is, a DER file (binary) wrapped. */
export function certificatesPem(bytes: Uint8Array): string[] {
  const blocks = pemBlocks(new TextDecoder().decode(bytes));
  if (blocks.length) return blocks;
  const base64 = btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(''));
  return [`-----BEGIN CERTIFICATE-----\n${base64.match(/.{1,64}/g)?.join('\n')}\n-----END CERTIFICATE-----`];
}

/** The SHA-256 fingerprint of a PEM certificate's DER, as colon-separated hex. */
export async function sha256Fingerprint(pem: string): Promise<string> {
  const der = base64Der(pem);
  return hex(new Uint8Array(await crypto.subtle.digest('SHA-256', der as BufferSource)));
}

function base64Der(block: string): Uint8Array {
  const body = block.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
  return Uint8Array.from(atob(body), (c) => c.charCodeAt(0));
}

function summarize(der: Uint8Array): CertificateSummary {
  const certificate = read(der, 0);
  const tbs = children(der, certificate)[0] as Node;
  // version [0] is optional: the serial is the first INTEGER.
  const parts = children(der, tbs).filter((n) => n.tag !== 0xa0);
  const [serial, , issuer, validity, subject] = parts as [Node, Node, Node, Node, Node];
  const [notBefore, notAfter] = children(der, validity) as [Node, Node];
  const subjectName = name(der, subject);
  const issuerName = name(der, issuer);
  return {
    subject: subjectName,
    issuer: issuerName,
    serial: hex(der.subarray(serial.start, serial.end)),
    notBefore: time(der, notBefore),
    notAfter: time(der, notAfter),
    selfSigned: subjectName === issuerName,
    authorityKeyId: authorityKeyId(
      der,
      children(der, tbs).find((n) => n.tag === 0xa3),
    ),
  };
}

const AUTHORITY_KEY_IDENTIFIER = '2.5.29.35';

/** extensions [3] holds a SEQUENCE of Extension {extnID, critical?, extnValue OCTET STRING}; AKI's value is {[0] keyIdentifier, ...}. */
function authorityKeyId(der: Uint8Array, extensions: Node | undefined): string | undefined {
  if (!extensions) return undefined;
  const [list] = children(der, extensions);
  for (const extension of list ? children(der, list) : []) {
    const parts = children(der, extension);
    const id = parts[0] as Node;
    if (oid(der.subarray(id.start, id.end)) !== AUTHORITY_KEY_IDENTIFIER) continue;
    const value = parts.at(-1) as Node;
    const [sequence] = children(der, value);
    const keyId = sequence && children(der, sequence).find((n) => n.tag === 0x80);
    return keyId && base64url(der.subarray(keyId.start, keyId.end));
  }
  return undefined;
}

const base64url = (bytes: Uint8Array) =>
  btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(''))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

/** The DER element at `offset`: tag and the bounds of its content. */
function read(der: Uint8Array, offset: number): Node {
  const tag = der[offset] as number;
  let length = der[offset + 1] as number;
  let start = offset + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes === 0 || bytes > 4) throw new Error('unsupported length');
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + (der[start + i] as number);
    start += bytes;
  }
  if (start + length > der.length) throw new Error('truncated');
  return { tag, start, end: start + length };
}

function children(der: Uint8Array, parent: Node): Node[] {
  const nodes: Node[] = [];
  for (let offset = parent.start; offset < parent.end; ) {
    const node = read(der, offset);
    nodes.push(node);
    offset = node.end;
  }
  return nodes;
}

const ATTRIBUTE_NAMES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
};

/** A distinguished name as RFC 4514 writes it (last RDN first: `CN=…, O=…, C=…`), the attributes a person recognises. */
function name(der: Uint8Array, sequence: Node): string {
  const parts: string[] = [];
  for (const set of children(der, sequence)) {
    for (const attribute of children(der, set)) {
      const [type, value] = children(der, attribute) as [Node, Node];
      const label = ATTRIBUTE_NAMES[oid(der.subarray(type.start, type.end))];
      if (label) parts.push(`${label}=${new TextDecoder().decode(der.subarray(value.start, value.end))}`);
    }
  }
  return parts.reverse().join(', ');
}

function oid(bytes: Uint8Array): string {
  const first = bytes[0] as number;
  const arcs = [Math.floor(first / 40), first % 40];
  let value = 0;
  for (const byte of bytes.subarray(1)) {
    value = value * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      arcs.push(value);
      value = 0;
    }
  }
  return arcs.join('.');
}

/** UTCTime (YYMMDDHHMMSSZ) or GeneralizedTime (YYYYMMDDHHMMSSZ). */
function time(der: Uint8Array, node: Node): Date {
  const text = new TextDecoder().decode(der.subarray(node.start, node.end));
  const full = node.tag === 0x17 ? `${Number(text.slice(0, 2)) < 50 ? '20' : '19'}${text}` : text;
  const [y, mo, d, h, mi, s] = [0, 4, 6, 8, 10, 12].map((at, i) => Number(full.slice(at, i === 0 ? 4 : at + 2)));
  return new Date(Date.UTC(y as number, (mo as number) - 1, d, h, mi, s));
}

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(':');

/**
 * The SHA-256 fingerprint of each certificate of a chain, in the order of its PEM blocks (leaf first),
 * as colon-separated hex: what an operator compares with a fingerprint from elsewhere (openssl x509 -fingerprint -sha256).
 */
export function sha256Fingerprints(pem: string): Promise<string[]> {
  return Promise.all(pemBlocks(pem).map(sha256Fingerprint));
}

/** A certificate expiring within this many days is flagged, leaving time to rotate or renew it. */
const EXPIRY_WARNING_DAYS = 30;

/** Whole days from now until `notAfter`: negative once it has passed. */
export const daysLeft = (notAfter: Date) => Math.floor((notAfter.getTime() - Date.now()) / 86_400_000);

/** Whether a certificate has expired or expires within EXPIRY_WARNING_DAYS. */
export const expiresSoon = (notAfter: Date) => daysLeft(notAfter) <= EXPIRY_WARNING_DAYS;
