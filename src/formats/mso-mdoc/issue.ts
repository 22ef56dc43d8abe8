// ISO 18013-5 mdoc (`mso_mdoc`): IssuerSigned with the MSO signed by the document-signer chain.
//
// Encoding (OpenID4VCI 1.0, appendix A.2.4): the credential is the CBOR IssuerSigned
// ({nameSpaces, issuerAuth}), base64url without padding. issuerAuth is a COSE_Sign1 (untagged, as
// ISO 18013-5 defines IssuerAuth): alg alone in the protected header, x5chain in the unprotected
// one (the signer's x5c, leaf first, without the root of an internal chain: a bstr for one
// certificate, an array otherwise), and the MSO as #6.24(bstr .cbor MobileSecurityObject) for
// payload. Digests are SHA-256 over each IssuerSignedItemBytes (#6.24); every item gets a random
// 32-byte salt and a random digestID.
//
// Elements: one per field, `path[0]` in the field's namespace with the value claims[namespace][path[0]]
// (claims are keyed by namespace first, as the configuration's claims schema has them);
// claims that are absent or null are left out, and claims no field describes are not issued.
// Strings, numbers, booleans, objects and arrays become CBOR text, numbers, booleans, maps and
// arrays. A field (or child field) of type 'date' with a 'YYYY-MM-DD' string becomes full-date
// (#6.1004, RFC 8943); 'datetime' with an RFC 3339 date-time becomes tdate (#6.0), which the
// library writes in UTC without fractional seconds, as ISO 18013-5 requires.
//
// Status (Token Status List draft, "Referenced Token in COSE", ISO mdoc): the MSO gets a top-level
// `status` entry, the CWT `Status` structure {"status_list": {"idx": uint, "uri": tstr}} under a
// text key. @owf/mdoc's MobileSecurityObject has no such field, so the sign hook the library calls
// splices it into the MSO bytes (map head count + 1, the entry appended; every other entry keeps its
// bytes), signs the Sig_structure over that payload, and the COSE_Sign1 is rebuilt with it and the
// library's own headers and signature. The library reads MSOs with additional keys.
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import {
  CoseKey,
  Curve,
  cborDecode,
  cborEncode,
  DateOnly,
  DeviceKey,
  type DigestAlgorithm,
  IssuerAuth,
  IssuerSigned,
  IssuerSignedBuilder,
  KeyType,
  type MdocContext,
  SignatureAlgorithm,
} from '@owf/mdoc';
import type { JWK } from 'jose';
import type { Signer } from '../../key-chains/signing.js';
import type { FormatField } from '../types.js';

export interface MdocInput {
  /** The issuance time (the MSO's signed and validFrom). */
  issuedAt: Date;
  docType: string;
  fields: FormatField[];
  claims: Record<string, unknown>;
  holderJwk?: JWK;
  lifetimeSeconds?: number | null;
  /** Token Status List reference, put into the MSO as its `status` entry. */
  status?: { status_list: { idx: number; uri: string } };
}

const DEFAULT_LIFETIME_SECONDS = 365 * 86_400;
const DIGEST_ALGORITHM: DigestAlgorithm = 'SHA-256';
const NODE_HASH: Record<DigestAlgorithm, string> = { 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };
/** Curves a device key may use, with their COSE identifiers. */
const EC_CURVES: Record<string, Curve> = { 'P-256': Curve['P-256'], 'P-384': Curve['P-384'], 'P-521': Curve['P-521'] };
/** What each signing algorithm means for the document signer key: its curve and the raw r||s length. */
const SIGNER_CURVE: Record<Signer['algorithm'], { curve: string; signatureLength: number }> = {
  ES256: { curve: 'P-256', signatureLength: 64 },
  ES384: { curve: 'P-384', signatureLength: 96 },
  ES512: { curve: 'P-521', signatureLength: 132 },
};
const FULL_DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
/** Issuance retries when two items of a namespace drew the same random digestID. */
const ATTEMPTS = 3;

const notUsed = (what: string) => () => {
  throw new Error(`${what} is not used in mdoc issuance`);
};

/** A replacement for the payload the library signs, and what was signed with it. */
interface PayloadPatch {
  apply(payload: Uint8Array): Uint8Array;
  payload?: Uint8Array;
  toBeSigned?: Uint8Array;
}

/** The library's crypto and COSE hooks: the MSO is signed by the signing service, never with a local private key. */
function contextFor(signer: Signer, patch?: PayloadPatch): Pick<MdocContext, 'cose' | 'crypto'> {
  const expected = SignatureAlgorithm[signer.algorithm];
  const { signatureLength } = SIGNER_CURVE[signer.algorithm];
  return {
    crypto: {
      random: (length) => new Uint8Array(randomBytes(length)),
      digest: ({ digestAlgorithm, bytes }) => new Uint8Array(createHash(NODE_HASH[digestAlgorithm]).update(bytes).digest()),
      calculateEphemeralMacKey: notUsed('calculateEphemeralMacKey'),
    },
    cose: {
      sign1: {
        sign: async ({ toBeSigned, algorithm }) => {
          if (algorithm !== undefined && algorithm !== expected)
            throw new Error(`COSE algorithm ${algorithm} does not match the signer's ${signer.algorithm}`);
          let signed = toBeSigned;
          if (patch) {
            if (patch.payload) throw new Error('mso_mdoc issuance signed more than once');
            const [prefix, payload] = splitSigStructure(toBeSigned);
            patch.payload = patch.apply(payload);
            signed = patch.toBeSigned = concat(prefix, cborHead(MAJOR_BYTES, patch.payload.length), patch.payload);
          }
          const signature = await signer.sign(signed);
          if (signature.length !== signatureLength)
            throw new Error(`the signer returned ${signature.length} bytes, not a raw ${signer.algorithm} signature`);
          return new Uint8Array(signature);
        },
        verify: notUsed('sign1.verify'),
      },
      mac0: { sign: notUsed('mac0.sign'), verify: notUsed('mac0.verify') },
    },
  };
}

// --- raw CBOR: the MSO is changed by splicing bytes, so that nothing else in it is re-encoded ---

const MAJOR_BYTES = 2;
const MAJOR_MAP = 5;
const MAJOR_TAG = 6;
const ENCODED_CBOR_TAG = 24;

const concat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));

/** The head of the item at `offset`: major type, argument (definite lengths up to 32 bits) and where the content starts. */
function readHead(bytes: Uint8Array, offset: number): { major: number; value: number; end: number } {
  const first = bytes[offset];
  if (first === undefined) throw new Error('mso_mdoc status: truncated CBOR');
  const info = first & 0x1f;
  const size = info < 24 ? 0 : ({ 24: 1, 25: 2, 26: 4 } as Record<number, number>)[info];
  if (size === undefined || offset + 1 + size > bytes.length) throw new Error('mso_mdoc status: unexpected CBOR head');
  let value = info < 24 ? info : 0;
  for (let i = 1; i <= size; i++) value = value * 256 + (bytes[offset + i] as number);
  return { major: first >> 5, value, end: offset + 1 + size };
}

/** The shortest head for a major type and argument. */
function cborHead(major: number, value: number): Uint8Array {
  const m = major << 5;
  if (value < 24) return Uint8Array.of(m | value);
  if (value < 0x100) return Uint8Array.of(m | 24, value);
  if (value < 0x10000) return Uint8Array.of(m | 25, value >> 8, value & 0xff);
  return Uint8Array.of(m | 26, (value >>> 24) & 0xff, (value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff);
}

/** Sig_structure ["Signature1", protected, external_aad, payload]: everything before the payload's bstr, and the payload. */
function splitSigStructure(toBeSigned: Uint8Array): [Uint8Array, Uint8Array] {
  const parts = cborDecode<unknown[]>(toBeSigned);
  const payload = parts[3];
  if (parts.length !== 4 || parts[0] !== 'Signature1' || !(payload instanceof Uint8Array))
    throw new Error('mso_mdoc status: the library asked to sign something other than a COSE_Sign1 Sig_structure');
  const tail = concat(cborHead(MAJOR_BYTES, payload.length), payload);
  const start = toBeSigned.length - tail.length;
  if (start <= 0 || !Buffer.from(toBeSigned.subarray(start)).equals(tail))
    throw new Error('mso_mdoc status: the Sig_structure does not end with its payload');
  return [toBeSigned.subarray(0, start), payload];
}

/** #6.24(bstr .cbor MSO) with a top-level `status` entry appended to the MSO map; the other entries keep their bytes. */
function withStatus(payload: Uint8Array, status: NonNullable<MdocInput['status']>): Uint8Array {
  const { idx, uri } = status.status_list;
  if (!Number.isSafeInteger(idx) || idx < 0) throw new Error(`mso_mdoc status: idx must be a non-negative integer (got ${idx})`);
  if (typeof uri !== 'string' || !uri) throw new Error('mso_mdoc status: uri is missing');
  const tag = readHead(payload, 0);
  const bstr = readHead(payload, tag.end);
  if (tag.major !== MAJOR_TAG || tag.value !== ENCODED_CBOR_TAG || bstr.major !== MAJOR_BYTES || bstr.end + bstr.value !== payload.length)
    throw new Error('mso_mdoc status: the payload is not #6.24(bstr)');
  const mso = payload.subarray(bstr.end);
  const map = readHead(mso, 0);
  if (map.major !== MAJOR_MAP) throw new Error('mso_mdoc status: the MSO is not a map');
  if (cborDecode<Map<unknown, unknown>>(mso).has('status')) throw new Error('mso_mdoc status: the MSO already has a status');
  const entry = concat(
    cborEncode('status'),
    cborEncode(
      new Map([
        [
          'status_list',
          new Map<string, unknown>([
            ['idx', idx],
            ['uri', uri],
          ]),
        ],
      ]),
    ),
  );
  const patched = concat(cborHead(MAJOR_MAP, map.value + 1), mso.subarray(map.end), entry);
  return concat(cborHead(MAJOR_TAG, ENCODED_CBOR_TAG), cborHead(MAJOR_BYTES, patched.length), patched);
}

const jwkBytes = (value: unknown, name: string) => {
  if (typeof value !== 'string' || !value) throw new Error(`mso_mdoc holder key: ${name} is missing`);
  return new Uint8Array(Buffer.from(value, 'base64url'));
};

/** The public part of an EC JWK as COSE_Key fields (kty, crv, x, y); anything else in the JWK, `d` included, is left out. */
function ecKeyOptions(jwk: JWK, what: string) {
  if (jwk.kty !== 'EC' || typeof jwk.crv !== 'string' || EC_CURVES[jwk.crv] === undefined) {
    throw new Error(`${what} must be an EC key on P-256, P-384 or P-521 (got kty ${jwk.kty}, crv ${jwk.crv})`);
  }
  return { keyType: KeyType.Ec, curve: EC_CURVES[jwk.crv], x: jwkBytes(jwk.x, 'x'), y: jwkBytes(jwk.y, 'y') };
}

/** The document signer's public key from the leaf certificate; the library only reads its algorithm. */
function signingKeyOf(signer: Signer): CoseKey {
  const [leaf] = signer.x5c;
  if (!leaf) throw new Error('mso_mdoc needs a document signer certificate (the signer has no x5c)');
  const jwk = new X509Certificate(Buffer.from(leaf, 'base64')).publicKey.export({ format: 'jwk' }) as JWK;
  const { curve } = SIGNER_CURVE[signer.algorithm];
  if (jwk.crv !== curve)
    throw new Error(`the document signer certificate holds a ${jwk.crv ?? jwk.kty} key, but the signer uses ${signer.algorithm}`);
  return CoseKey.create({ ...ecKeyOptions(jwk, 'the document signer key'), algorithm: SignatureAlgorithm[signer.algorithm] });
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;

/** A value of a 'date' or 'datetime' field as its CBOR date type; other values stay as they are. */
function typedScalar(value: unknown, type: string | undefined, where: string): unknown {
  if (typeof value !== 'string') return value;
  if (type === 'date') {
    // new Date('2023-02-30') rolls over to March: only a date that survives the round trip is one.
    const date = FULL_DATE.test(value) ? new DateOnly(value) : undefined;
    if (!date || Number.isNaN(Date.parse(value)) || date.toISOString() !== value)
      throw new Error(`mso_mdoc claim ${where}: '${value}' is not a full-date (YYYY-MM-DD)`);
    return date;
  }
  if (type === 'datetime') {
    const time = DATE_TIME.test(value) ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(time)) throw new Error(`mso_mdoc claim ${where}: '${value}' is not an RFC 3339 date-time`);
    return new Date(time);
  }
  return value;
}

/** The value of a field with its own type applied, then its children's at their paths inside it. */
function typedValue(value: unknown, field: FormatField, where: string): unknown {
  let result = typedScalar(value, field.type, where);
  for (const child of field.children ?? []) result = applyAt(result, child.path, child, `${where}.${child.path.join('.')}`);
  return result;
}

/** Applies a child field at its path (keys, null for every array element, or an index), copying what it changes. */
function applyAt(value: unknown, path: FormatField['path'], field: FormatField, where: string): unknown {
  if (path.length === 0) return typedValue(value, field, where);
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    if (head === null) return value.map((item) => applyAt(item, rest, field, where));
    if (typeof head === 'number') return value.map((item, i) => (i === head ? applyAt(item, rest, field, where) : item));
    // A key under an array of maps: the child describes each element.
    return value.map((item) => applyAt(item, path, field, where));
  }
  if (isPlainObject(value) && head !== null && head !== undefined) {
    const key = String(head);
    if (!Object.hasOwn(value, key)) return value;
    return { ...value, [key]: applyAt(value[key], rest, field, where) };
  }
  return value;
}

/** Data elements per namespace: one per field whose claim is present (not undefined or null), first field wins. */
function namespacesOf(fields: FormatField[], claims: Record<string, unknown>): Map<string, Map<string, unknown>> {
  const namespaces = new Map<string, Map<string, unknown>>();
  for (const field of fields) {
    const [identifier] = field.path;
    if (typeof identifier !== 'string') continue;
    if (!field.namespace) throw new Error(`mso_mdoc field ${identifier} has no namespace`);
    const inNamespace = claims[field.namespace];
    if (!isPlainObject(inNamespace) || !Object.hasOwn(inNamespace, identifier)) continue;
    const value = inNamespace[identifier];
    if (value === undefined || value === null) continue;
    const elements = namespaces.get(field.namespace) ?? new Map<string, unknown>();
    if (!elements.has(identifier)) elements.set(identifier, typedValue(value, field, identifier));
    namespaces.set(field.namespace, elements);
  }
  return namespaces;
}

/** Builds and signs the IssuerSigned; returns it CBOR-encoded, base64url without padding (the OpenID4VCI `credential`). */
export async function issueMdoc(input: MdocInput, signer: Signer): Promise<string> {
  if (!input.holderJwk) throw new Error('mso_mdoc requires key binding');
  const deviceKey = DeviceKey.create(ecKeyOptions(input.holderJwk, 'the mso_mdoc holder key'));
  const lifetime = input.lifetimeSeconds ?? DEFAULT_LIFETIME_SECONDS;
  if (!Number.isFinite(lifetime) || lifetime <= 0)
    throw new Error(`mso_mdoc lifetime must be a positive number of seconds (got ${lifetime})`);
  const namespaces = namespacesOf(input.fields, input.claims);
  if (namespaces.size === 0) throw new Error('mso_mdoc needs at least one data element, but no field has a claim');

  const signingKey = signingKeyOf(signer);
  const certificates = signer.x5c.map((der) => new Uint8Array(Buffer.from(der, 'base64')));
  // tdate carries whole seconds; the dates are cut to seconds so the MSO says exactly what was meant.
  const now = new Date(Math.floor(input.issuedAt.getTime() / 1000) * 1000);
  const validityInfo = { signed: now, validFrom: now, validUntil: new Date(now.getTime() + Math.round(lifetime) * 1000) };
  const { status } = input;

  for (let attempt = 1; ; attempt++) {
    const patch: PayloadPatch | undefined = status && { apply: (payload) => withStatus(payload, status) };
    const builder = new IssuerSignedBuilder(input.docType, contextFor(signer, patch));
    for (const [namespace, elements] of namespaces) builder.addIssuerNamespace(namespace, elements);
    let issuerSigned = await builder.sign({
      signingKey,
      algorithm: SignatureAlgorithm[signer.algorithm],
      digestAlgorithm: DIGEST_ALGORITHM,
      validityInfo,
      deviceKeyInfo: { deviceKey },
      certificates,
    });
    if (patch) {
      // The library's COSE_Sign1 with the payload that was actually signed.
      const built = issuerSigned.issuerAuth;
      if (!patch.payload || !patch.toBeSigned) throw new Error('mso_mdoc issuance did not sign the MSO');
      const issuerAuth = IssuerAuth.fromDecodedStructure({
        protected: built.protectedHeaders,
        unprotected: built.unprotectedHeaders,
        payload: patch.payload,
        signature: built.signature,
      });
      if (!Buffer.from(issuerAuth.toBeSigned).equals(patch.toBeSigned))
        throw new Error('mso_mdoc status: the COSE_Sign1 does not match what was signed');
      issuerSigned = IssuerSigned.create({ issuerNamespaces: issuerSigned.issuerNamespaces, issuerAuth });
    }
    // digestIDs are random: should two items of a namespace share one, their digests would collide in the MSO.
    const digests = issuerSigned.issuerAuth.mobileSecurityObject.valueDigests.valueDigests;
    const unique = [...namespaces].every(([namespace, elements]) => digests.get(namespace)?.size === elements.size);
    if (unique) return Buffer.from(issuerSigned.encode()).toString('base64url');
    if (attempt >= ATTEMPTS) throw new Error('mso_mdoc issuance drew duplicate digestIDs repeatedly');
  }
}
