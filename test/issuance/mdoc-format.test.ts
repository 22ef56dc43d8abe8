// mso_mdoc issuance against the real service's document-signer chain, checked twice: by hand over
// the raw CBOR with node:crypto, and by @owf/mdoc's own verifier (Holder + DeviceResponse + Verifier)
// with the tenant's root certificate as the only trust anchor.
import 'reflect-metadata';
import {
  createHash,
  createPrivateKey,
  generateKeyPairSync,
  X509Certificate as NodeX509,
  sign as nodeSign,
  verify as nodeVerify,
} from 'node:crypto';
import {
  CoseKey,
  Curve,
  DateOnly,
  DeviceRequest,
  DeviceResponse,
  DocRequest,
  Holder,
  IssuerNamespaces,
  IssuerSigned,
  IssuerSignedItem,
  ItemsRequest,
  KeyType,
  type MdocContext,
  MobileSecurityObject,
  SessionTranscript,
  SignatureAlgorithm,
  type VerificationAssessment,
  Verifier,
} from '@owf/mdoc';
import * as x509 from '@peculiar/x509';
import { Decoder, Encoder, Tag } from 'cbor-x';
import type { JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FieldDefinition } from '../../src/credential-configs/service.js';
import { issueMdoc } from '../../src/formats/mso-mdoc/issue.js';
import type { Signer } from '../../src/key-chains/signing.js';
import { mdocContext } from '../../src/platform/crypto/mdoc-context.js';
import { startService, type TestService } from '../support/service.js';

x509.cryptoProvider.set(crypto); // the global Web Crypto (node:crypto webcrypto)

const DOC_TYPE = 'org.iso.18013.5.1.mDL';
const NS = 'org.iso.18013.5.1';
const YEAR_SECONDS = 365 * 86_400;
const FIELDS: FieldDefinition[] = [
  { path: ['family_name'], type: 'string', namespace: NS },
  { path: ['given_name'], type: 'string', namespace: NS },
  { path: ['birth_date'], type: 'date', namespace: NS },
  { path: ['age_over_18'], type: 'boolean', namespace: NS },
];
const CLAIMS = { [NS]: { family_name: 'Mustermann', birth_date: '1990-01-31', age_over_18: true } };

let svc: TestService;
let acme: string;
beforeAll(async () => {
  svc = await startService();
  acme = (await svc.tenant('acme')).token;
});
afterAll(() => svc.stop());

const signerFor = (keyChainId?: string): Promise<Signer> =>
  svc.running.services.signing.signer('acme', { usageType: 'attestation', ...(keyChainId && { keyChainId }) });

async function rootDer(keyChainId = 'default-attestation'): Promise<Uint8Array> {
  const reply = await svc.raw('GET', `/api/key-chain/${keyChainId}`, { token: acme });
  expect(reply.status, reply.text).toBe(200);
  return new Uint8Array(new x509.X509Certificate(reply.body.rootCertificate).rawData);
}

function holderKey() {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { publicJwk: publicKey.export({ format: 'jwk' }) as JWK, privateJwk: privateKey.export({ format: 'jwk' }) as JWK };
}

// --- the service's mdoc verifier context (src/platform/crypto), plus the holder's signing ---

const HASH: Record<string, string> = { ES256: 'sha256', ES384: 'sha384', ES512: 'sha512' };
const CURVE_NAME: Record<number, string> = { [Curve['P-256']]: 'P-256', [Curve['P-384']]: 'P-384', [Curve['P-521']]: 'P-521' };
const b64u = (bytes?: Uint8Array) => (bytes ? Buffer.from(bytes).toString('base64url') : undefined);
/** DER as @peculiar/x509 wants it (a view over a plain ArrayBuffer). */
const parseDer = (der: Uint8Array) => new x509.X509Certificate(new Uint8Array(der));
const coseToJwk = (key: CoseKey): JWK => ({
  kty: 'EC',
  crv: CURVE_NAME[key.curve as number],
  x: b64u(key.x),
  y: b64u(key.y),
  ...(key.d && { d: b64u(key.d) }),
});

const verifierContext: MdocContext = {
  ...mdocContext,
  cose: {
    ...mdocContext.cose,
    sign1: {
      ...mdocContext.cose.sign1,
      sign: ({ toBeSigned, key }) => {
        const alg = SignatureAlgorithm[key.algorithm as number] as string;
        return new Uint8Array(
          nodeSign(HASH[alg] as string, toBeSigned, {
            key: createPrivateKey({ key: coseToJwk(key) as any, format: 'jwk' }),
            dsaEncoding: 'ieee-p1363',
          }),
        );
      },
    },
  },
};

/** Presents the mdoc as a wallet would (OpenID4VP session transcript, device signature) and verifies it as a reader. */
async function presentAndVerify(credential: string, privateJwk: JWK, trustedCertificates: Uint8Array[], elements: string[]) {
  const issuerSigned = IssuerSigned.fromEncodedForOid4Vci(credential);
  const deviceRequest = DeviceRequest.create({
    docRequests: [
      DocRequest.create({
        itemsRequest: ItemsRequest.create({ docType: DOC_TYPE, namespaces: { [NS]: Object.fromEntries(elements.map((e) => [e, false])) } }),
      }),
    ],
  });
  const sessionTranscript = await SessionTranscript.forOid4Vp(
    { clientId: 'x509_san_dns:verifier.example.com', nonce: 'n-0S6_WzA2Mj', responseUri: 'https://verifier.example.com/response' },
    verifierContext,
  );
  const signingKey = CoseKey.create({
    ...cosePart(privateJwk),
    d: Buffer.from(privateJwk.d as string, 'base64url'),
    algorithm: SignatureAlgorithm.ES256,
  });
  const deviceResponse = await Holder.createDeviceResponseForDeviceRequest(
    { deviceRequest, sessionTranscript, issuerSigned: [issuerSigned], signature: { signingKey } },
    verifierContext,
  );
  const checks: VerificationAssessment[] = [];
  await Verifier.verifyDeviceResponse(
    {
      deviceRequest,
      deviceResponse: DeviceResponse.fromEncodedForOid4Vp(deviceResponse.encodedForOid4Vp),
      sessionTranscript,
      trustedCertificates,
      onCheck: (c) => checks.push(c),
    },
    verifierContext,
  );
  return checks;
}

const cosePart = (jwk: JWK) => ({
  keyType: KeyType.Ec,
  curve: Curve[jwk.crv as 'P-256'],
  x: Buffer.from(jwk.x as string, 'base64url'),
  y: Buffer.from(jwk.y as string, 'base64url'),
});
const failed = (checks: VerificationAssessment[]) =>
  checks.filter((c) => c.status === 'FAILED').map((c) => `${c.category}: ${c.check} ${c.reason ?? ''}`);

// --- raw CBOR, read without the library's structures ---

const decoder = new Decoder({ mapsAsObjects: false });
/** The bytes of an embedded CBOR item (#6.24): cbor-x hands it over as the library's DataItem or as a Tag. */
const embedded = (value: unknown): Uint8Array => {
  const item = value as { buffer?: Uint8Array; tag?: number; value?: Uint8Array };
  if (item instanceof Tag) return item.value as Uint8Array;
  return item.buffer as Uint8Array;
};
/** #6.24(bstr) re-encoded exactly: d8 18, then the byte-string head, then the bytes. */
function tag24(bytes: Uint8Array): Buffer {
  const n = bytes.length;
  const head =
    n < 24
      ? [0x40 | n]
      : n < 256
        ? [0x58, n]
        : n < 65536
          ? [0x59, n >> 8, n & 0xff]
          : [0x5a, n >>> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
  return Buffer.concat([Buffer.from([0xd8, 0x18, ...head]), bytes]);
}

function readRaw(credential: string) {
  expect(credential).toMatch(/^[A-Za-z0-9_-]+$/);
  const top = decoder.decode(Buffer.from(credential, 'base64url')) as Map<string, unknown>;
  expect([...top.keys()].sort()).toEqual(['issuerAuth', 'nameSpaces']);
  const issuerAuth = top.get('issuerAuth') as [Uint8Array, Map<number, unknown>, Uint8Array, Uint8Array];
  expect(Array.isArray(issuerAuth) && issuerAuth.length === 4).toBe(true);
  const [protectedBytes, unprotected, payload, signature] = issuerAuth;
  const msoBytes = embedded(decoder.decode(payload));
  const mso = decoder.decode(msoBytes) as Map<string, any>;
  const nameSpaces = top.get('nameSpaces') as Map<string, unknown[]>;
  const items = new Map(
    [...nameSpaces].map(([ns, list]) => [
      ns,
      list.map((raw) => {
        const bytes = embedded(raw);
        return { bytes, item: decoder.decode(bytes) as Map<string, any> };
      }),
    ]),
  );
  return { protectedBytes, unprotected, payload, signature, msoBytes, mso, items };
}

describe('mso_mdoc issuance', () => {
  it('issues an IssuerSigned whose signature, chain, digests, device key and validity verify by hand', async () => {
    const signer = await signerFor();
    const root = new NodeX509(Buffer.from(await rootDer()));
    const { publicJwk } = holderKey();
    const before = Math.floor(Date.now() / 1000);
    const credential = await issueMdoc(
      { issuedAt: new Date(), docType: DOC_TYPE, fields: FIELDS, claims: CLAIMS, holderJwk: publicJwk },
      signer,
    );
    const after = Math.ceil(Date.now() / 1000);
    const raw = readRaw(credential);

    // issuerAuth: alg protected, x5chain (the leaf, DER) unprotected, signature over Sig_structure by the leaf key
    expect(decoder.decode(raw.protectedBytes)).toEqual(new Map([[1, -7]]));
    const x5chain = raw.unprotected.get(33) as Uint8Array;
    expect(Buffer.from(x5chain).toString('base64')).toBe(signer.x5c[0]);
    const leaf = new NodeX509(Buffer.from(x5chain));
    const toBeSigned = new Encoder({ tagUint8Array: false }).encode(['Signature1', raw.protectedBytes, new Uint8Array(), raw.payload]);
    expect(nodeVerify('sha256', toBeSigned, { key: leaf.publicKey, dsaEncoding: 'ieee-p1363' }, raw.signature)).toBe(true);
    expect(leaf.verify(root.publicKey)).toBe(true);
    expect(leaf.checkIssued(root)).toBe(true);
    // a document signer: id-mdl-kp-mdlDS in the extended key usage
    expect(parseDer(x5chain).getExtension(x509.ExtendedKeyUsageExtension)?.usages).toContain('1.0.18013.5.1.2');

    // the MSO
    expect(raw.mso.get('version')).toBe('1.0');
    expect(raw.mso.get('digestAlgorithm')).toBe('SHA-256');
    expect(raw.mso.get('docType')).toBe(DOC_TYPE);
    const deviceKey = raw.mso.get('deviceKeyInfo').get('deviceKey') as Map<number, unknown>;
    expect(new Map([...deviceKey].map(([k, v]) => [k, v instanceof Uint8Array ? Buffer.from(v).toString('base64url') : v]))).toEqual(
      new Map<number, unknown>([
        [1, 2],
        [-1, 1],
        [-2, publicJwk.x],
        [-3, publicJwk.y],
      ]),
    );
    const validity = raw.mso.get('validityInfo') as Map<string, Date>;
    const seconds = (key: string) => (validity.get(key) as Date).getTime() / 1000;
    expect(seconds('signed')).toBeGreaterThanOrEqual(before);
    expect(seconds('signed')).toBeLessThanOrEqual(after);
    expect(seconds('validFrom')).toBe(seconds('signed'));
    expect(seconds('validUntil') - seconds('validFrom')).toBe(YEAR_SECONDS);
    for (const key of ['signed', 'validFrom', 'validUntil']) {
      // tdate: tag 0 over a 20-character UTC date-time without fractional seconds
      const text = `${(validity.get(key) as Date).toISOString().slice(0, 19)}Z`;
      expect(Buffer.from(raw.msoBytes).includes(Buffer.concat([Buffer.from([0xc0, 0x74]), Buffer.from(text)]))).toBe(true);
    }

    // the data elements: present claims only, each digest in the MSO
    const items = raw.items.get(NS) ?? [];
    expect([...raw.items.keys()]).toEqual([NS]);
    expect(Object.fromEntries(items.map(({ item }) => [item.get('elementIdentifier'), item.get('elementValue')]))).toEqual({
      family_name: 'Mustermann',
      birth_date: expect.any(DateOnly),
      age_over_18: true,
    });
    const digests = raw.mso.get('valueDigests').get(NS) as Map<number, Uint8Array>;
    expect(digests.size).toBe(3);
    for (const { bytes, item } of items) {
      expect((item.get('random') as Uint8Array).length).toBe(32);
      const digest = createHash('sha256').update(tag24(bytes)).digest();
      expect(Buffer.from(digests.get(item.get('digestID')) as Uint8Array).equals(digest)).toBe(true);
    }
    // birth_date as full-date: tag 1004 over the text "1990-01-31"
    const birth = items.find(({ item }) => item.get('elementIdentifier') === 'birth_date');
    expect(Buffer.from(birth?.bytes as Uint8Array).includes(Buffer.from('d903ec6a313939302d30312d3331', 'hex'))).toBe(true);
  });

  it('is accepted by the @owf/mdoc holder and reader with the tenant root as the only trust anchor', async () => {
    const { publicJwk, privateJwk } = holderKey();
    const root = await rootDer();
    const credential = await issueMdoc(
      { issuedAt: new Date(), docType: DOC_TYPE, fields: FIELDS, claims: CLAIMS, holderJwk: publicJwk },
      await signerFor(),
    );

    const walletChecks: VerificationAssessment[] = [];
    await Holder.verifyIssuerSigned(
      { issuerSigned: credential, trustedCertificates: [root], verificationCallback: (c) => walletChecks.push(c) },
      verifierContext,
    );
    expect(failed(walletChecks)).toEqual([]);
    const issuerSigned = IssuerSigned.fromEncodedForOid4Vci(credential);
    expect(issuerSigned.issuerAuth.mobileSecurityObject.docType).toBe(DOC_TYPE);
    expect(issuerSigned.issuerAuth.mobileSecurityObject.deviceKeyInfo.deviceKey.jwk).toMatchObject({
      kty: 'EC',
      crv: 'P-256',
      x: publicJwk.x,
      y: publicJwk.y,
    });
    expect(issuerSigned.getPrettyClaims(NS)).toEqual({ family_name: 'Mustermann', birth_date: expect.any(DateOnly), age_over_18: true });
    expect(String((issuerSigned.getPrettyClaims(NS) as Record<string, unknown>).birth_date)).toBe('1990-01-31');

    const checks = await presentAndVerify(credential, privateJwk, [root], ['family_name', 'birth_date', 'age_over_18']);
    expect(failed(checks)).toEqual([]);
    const passed = checks.filter((c) => c.status === 'PASSED').map((c) => c.check);
    expect(passed).toEqual(
      expect.arrayContaining([
        'Device signature must be valid',
        'Issuer certificate must be valid',
        'Issuer auth signature is invalid', // the library's wording for the passed signature check
        "Country name (C) must be present in the issuer certificate's subject distinguished name",
        'The MSO signed date must be within the validity period of the certificate',
        'The MSO must be valid at the time of verification',
        `The calculated digest for ${NS}/birth_date attribute must match the digest in the issuerAuth element`,
      ]),
    );
  });

  it('fails verification with another trust anchor, a tampered element, a foreign device key or an expired MSO', async () => {
    const { publicJwk, privateJwk } = holderKey();
    const root = await rootDer();
    const credential = await issueMdoc(
      { issuedAt: new Date(), docType: DOC_TYPE, fields: FIELDS, claims: CLAIMS, holderJwk: publicJwk, lifetimeSeconds: 60 },
      await signerFor(),
    );

    // the root of another tenant: a well-formed IACA, just not the one that issued this mdoc
    const other = (await svc.tenant('other')).token;
    const otherRoot = new x509.X509Certificate(
      (await svc.raw('GET', '/api/key-chain/default-attestation', { token: other })).body.rootCertificate,
    );
    const untrusted = await presentAndVerify(credential, privateJwk, [new Uint8Array(otherRoot.rawData)], ['family_name']);
    expect(failed(untrusted).join('\n')).toMatch(/Issuer certificate must be valid/);

    const foreign = holderKey();
    const wrongDevice = await presentAndVerify(credential, foreign.privateJwk, [root], ['family_name']);
    expect(failed(wrongDevice).join('\n')).toMatch(/Device signature must be valid/);

    const expired: VerificationAssessment[] = [];
    await Holder.verifyIssuerSigned(
      {
        issuerSigned: credential,
        trustedCertificates: [root],
        now: new Date(Date.now() + 3_600_000),
        verificationCallback: (c) => expired.push(c),
      },
      verifierContext,
    );
    expect(failed(expired).join('\n')).toMatch(/The MSO must be valid at the time of verification/);

    const original = IssuerSigned.fromEncodedForOid4Vci(credential);
    const tampered = IssuerSigned.create({
      issuerAuth: original.issuerAuth,
      issuerNamespaces: IssuerNamespaces.create({
        issuerNamespaces: new Map([
          [
            NS,
            (original.getIssuerNamespace(NS) ?? []).map((item) =>
              item.elementIdentifier === 'family_name'
                ? IssuerSignedItem.fromOptions({
                    digestId: item.digestId,
                    random: item.random,
                    elementIdentifier: 'family_name',
                    elementValue: 'Forged',
                  })
                : item,
            ),
          ],
        ]),
      }),
    });
    const integrity: VerificationAssessment[] = [];
    await Holder.verifyIssuerSigned(
      { issuerSigned: tampered, trustedCertificates: [root], verificationCallback: (c) => integrity.push(c) },
      verifierContext,
    );
    expect(failed(integrity)).toEqual([
      `DATA_INTEGRITY: The calculated digest for ${NS}/family_name attribute must match the digest in the issuerAuth element `,
    ]);
  });

  it('signs with ES384 and ES512 internal chains too', async () => {
    for (const [algorithm, alg] of [
      ['ES384', -35],
      ['ES512', -36],
    ] as const) {
      const id = `mdoc-${algorithm.toLowerCase()}`;
      const created = await svc.call('POST', '/api/key-chain', {
        token: acme,
        body: { id, usageType: 'attestation', type: 'internalChain', algorithm },
      });
      expect(created.status, created.text).toBe(201);
      const { publicJwk, privateJwk } = holderKey();
      const credential = await issueMdoc(
        { issuedAt: new Date(), docType: DOC_TYPE, fields: FIELDS, claims: CLAIMS, holderJwk: publicJwk },
        await signerFor(id),
      );
      expect(decoder.decode(readRaw(credential).protectedBytes)).toEqual(new Map([[1, alg]]));
      expect(failed(await presentAndVerify(credential, privateJwk, [await rootDer(id)], ['family_name', 'age_over_18']))).toEqual([]);
    }
  });

  it('omits absent claims, encodes nested values and dates, and honours the lifetime', async () => {
    const fields: FieldDefinition[] = [
      ...FIELDS,
      { path: ['issue_date'], type: 'datetime', namespace: NS },
      {
        path: ['driving_privileges'],
        type: 'array',
        namespace: NS,
        children: [
          { path: [null, 'vehicle_category_code'], type: 'string' },
          { path: [null, 'issue_date'], type: 'date' },
        ],
      },
      { path: ['resident_city'], type: 'string', namespace: 'org.example.extra' },
      { path: ['not_given'], type: 'string', namespace: 'org.example.extra' },
    ];
    const claims = {
      [NS]: {
        family_name: 'Mustermann',
        issue_date: '2024-05-01T10:20:30.456+02:00',
        driving_privileges: [{ vehicle_category_code: 'B', issue_date: '2010-06-15', codes: [{ code: '78' }] }],
        unrelated: 'not described by a field',
      },
      'org.example.extra': { resident_city: 'Berlin', not_given: null },
    };
    const credential = await issueMdoc(
      { issuedAt: new Date(), docType: DOC_TYPE, fields, claims, holderJwk: holderKey().publicJwk, lifetimeSeconds: 3600 },
      await signerFor(),
    );
    const raw = readRaw(credential);
    const byId = (ns: string) =>
      Object.fromEntries((raw.items.get(ns) ?? []).map(({ item }) => [item.get('elementIdentifier'), item.get('elementValue')]));
    expect(Object.keys(byId(NS)).sort()).toEqual(['driving_privileges', 'family_name', 'issue_date']);
    expect(Object.keys(byId('org.example.extra'))).toEqual(['resident_city']);
    expect((byId(NS).issue_date as Date).toISOString()).toBe('2024-05-01T08:20:30.000Z');
    const [privilege] = byId(NS).driving_privileges as Map<string, unknown>[];
    expect(privilege?.get('vehicle_category_code')).toBe('B');
    expect(privilege?.get('issue_date')).toBeInstanceOf(DateOnly);
    expect(String(privilege?.get('issue_date'))).toBe('2010-06-15');
    expect(privilege?.get('codes')).toEqual([new Map([['code', '78']])]);
    const issueDateItem = raw.items.get(NS)?.find(({ item }) => item.get('elementIdentifier') === 'issue_date');
    expect(
      Buffer.from(issueDateItem?.bytes as Uint8Array).includes(Buffer.from('c074323032342d30352d30315430383a32303a33305a', 'hex')),
    ).toBe(true);
    for (const ns of ['org.example.extra', NS]) expect(raw.mso.get('valueDigests').get(ns).size).toBe(raw.items.get(ns)?.length);
    const validity = raw.mso.get('validityInfo') as Map<string, Date>;
    expect(((validity.get('validUntil') as Date).getTime() - (validity.get('validFrom') as Date).getTime()) / 1000).toBe(3600);
  });

  it('refuses without a holder key, with a non-EC holder key, or with a malformed date', async () => {
    const signer = await signerFor();
    await expect(issueMdoc({ issuedAt: new Date(), docType: DOC_TYPE, fields: FIELDS, claims: CLAIMS }, signer)).rejects.toThrow(
      'mso_mdoc requires key binding',
    );
    const ed = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }) as JWK;
    await expect(
      issueMdoc({ issuedAt: new Date(), docType: DOC_TYPE, fields: FIELDS, claims: CLAIMS, holderJwk: ed }, signer),
    ).rejects.toThrow(/EC key/);
    const holderJwk = holderKey().publicJwk;
    for (const birth_date of ['2023-02-30', '31.01.1990', '1990-1-31']) {
      await expect(
        issueMdoc(
          { issuedAt: new Date(), docType: DOC_TYPE, fields: FIELDS, claims: { [NS]: { ...CLAIMS[NS], birth_date } }, holderJwk },
          signer,
        ),
      ).rejects.toThrow(/full-date/);
    }
    await expect(
      issueMdoc(
        {
          issuedAt: new Date(),
          docType: DOC_TYPE,
          fields: [{ path: ['family_name'], type: 'string' }],
          claims: CLAIMS,
          holderJwk,
        },
        signer,
      ),
    ).rejects.toThrow(/no namespace/);
  });

  it('puts the Token Status List reference into the MSO as `status` and keeps it verifiable', async () => {
    const { publicJwk, privateJwk } = holderKey();
    const root = await rootDer();
    const signer = await signerFor();
    const uri = 'https://issuer.example.com/issuers/acme/status-lists/0b5e6d1c';
    const status = { status_list: { idx: 412, uri } };
    const credential = await issueMdoc(
      { issuedAt: new Date(), docType: DOC_TYPE, fields: FIELDS, claims: CLAIMS, holderJwk: publicJwk, status },
      signer,
    );
    const raw = readRaw(credential);

    // the MSO: the six ISO entries, then status {status_list: {idx: uint, uri: tstr}}
    expect([...raw.mso.keys()]).toEqual([
      'version',
      'digestAlgorithm',
      'valueDigests',
      'deviceKeyInfo',
      'docType',
      'validityInfo',
      'status',
    ]);
    expect(raw.mso.get('status')).toEqual(
      new Map([
        [
          'status_list',
          new Map<string, unknown>([
            ['idx', 412],
            ['uri', uri],
          ]),
        ],
      ]),
    );
    // CBOR types by the bytes: a map of one entry under the text "status", "idx" a uint (19 01 9c), "uri" a tstr
    const entry = Buffer.concat([
      Buffer.from('66737461747573a16b7374617475735f6c697374a263696478', 'hex'),
      Buffer.from('19019c63757269', 'hex'),
      Buffer.from([0x78, uri.length]),
      Buffer.from(uri),
    ]);
    expect(Buffer.from(raw.msoBytes).subarray(-entry.length).equals(entry)).toBe(true);
    expect(raw.msoBytes[0]).toBe(0xa7); // map(7)

    // every other entry is byte for byte what the library writes for this MSO without status
    const rest = Buffer.from(raw.msoBytes).subarray(1, raw.msoBytes.length - entry.length);
    const read = IssuerSigned.fromEncodedForOid4Vci(credential).issuerAuth.mobileSecurityObject;
    const withoutStatus = MobileSecurityObject.create({
      docType: read.docType,
      digestAlgorithm: read.digestAlgorithm,
      validityInfo: read.validityInfo,
      deviceKeyInfo: read.deviceKeyInfo,
      valueDigests: read.valueDigests,
    }).encode();
    expect(Buffer.from(withoutStatus).equals(Buffer.concat([Buffer.from([0xa6]), rest]))).toBe(true);
    // tdate (tag 0) for the validity dates is still there
    const signed = `${(raw.mso.get('validityInfo').get('signed') as Date).toISOString().slice(0, 19)}Z`;
    expect(rest.includes(Buffer.concat([Buffer.from('667369676e6564c074', 'hex'), Buffer.from(signed)]))).toBe(true);
    // the payload is #6.24 over exactly these MSO bytes
    expect(Buffer.from(raw.payload).equals(tag24(raw.msoBytes))).toBe(true);
    // each item's digest is still the one in the MSO
    const digests = raw.mso.get('valueDigests').get(NS) as Map<number, Uint8Array>;
    for (const { bytes, item } of raw.items.get(NS) ?? [])
      expect(Buffer.from(digests.get(item.get('digestID')) as Uint8Array).equals(createHash('sha256').update(tag24(bytes)).digest())).toBe(
        true,
      );

    // issuerAuth: the same headers, a signature over the new payload
    expect(decoder.decode(raw.protectedBytes)).toEqual(new Map([[1, -7]]));
    expect(Buffer.from(raw.unprotected.get(33) as Uint8Array).toString('base64')).toBe(signer.x5c[0]);
    const leaf = new NodeX509(Buffer.from(raw.unprotected.get(33) as Uint8Array));
    const toBeSigned = new Encoder({ tagUint8Array: false }).encode(['Signature1', raw.protectedBytes, new Uint8Array(), raw.payload]);
    expect(nodeVerify('sha256', toBeSigned, { key: leaf.publicKey, dsaEncoding: 'ieee-p1363' }, raw.signature)).toBe(true);

    // the library reads the MSO, and the wallet and reader accept the mdoc
    const walletChecks: VerificationAssessment[] = [];
    await Holder.verifyIssuerSigned(
      { issuerSigned: credential, trustedCertificates: [root], verificationCallback: (c) => walletChecks.push(c) },
      verifierContext,
    );
    expect(failed(walletChecks)).toEqual([]);
    expect(IssuerSigned.fromEncodedForOid4Vci(credential).issuerAuth.mobileSecurityObject.docType).toBe(DOC_TYPE);
    const checks = await presentAndVerify(credential, privateJwk, [root], ['family_name', 'birth_date', 'age_over_18']);
    expect(failed(checks)).toEqual([]);
    expect(checks.filter((c) => c.status === 'PASSED').map((c) => c.check)).toContain('Issuer auth signature is invalid');

    // idx 0 and a large idx keep their uint encoding; a negative or fractional idx is refused
    const issueWithIdx = (idx: number) =>
      issueMdoc(
        {
          issuedAt: new Date(),
          docType: DOC_TYPE,
          fields: FIELDS,
          claims: CLAIMS,
          holderJwk: publicJwk,
          status: { status_list: { idx, uri } },
        },
        signer,
      );
    for (const idx of [0, 70_000]) {
      const other = readRaw(await issueWithIdx(idx));
      expect(other.mso.get('status').get('status_list').get('idx')).toBe(idx);
    }
    for (const idx of [-1, 1.5]) await expect(issueWithIdx(idx)).rejects.toThrow(/idx/);
  });

  it('never puts a private holder key into the MSO', async () => {
    const { privateJwk } = holderKey();
    const credential = await issueMdoc(
      { issuedAt: new Date(), docType: DOC_TYPE, fields: FIELDS, claims: CLAIMS, holderJwk: privateJwk },
      await signerFor(),
    );
    const deviceKey = readRaw(credential).mso.get('deviceKeyInfo').get('deviceKey') as Map<number, unknown>;
    expect([...deviceKey.keys()].sort((a, b) => a - b)).toEqual([-3, -2, -1, 1]);
  });
});

describe('mso_mdoc through the OpenID4VCI flow', () => {
  it('issues an mdoc a wallet library receives and a verifier accepts against the tenant root', async () => {
    const { receiveCredentials } = await import('../support/wallet.js');
    const created = await svc.call('POST', '/api/issuer/credentials', {
      token: acme,
      body: {
        id: 'mdl',
        config: { format: 'mso_mdoc', docType: DOC_TYPE },
        fields: FIELDS.map((f) => ({ ...f, ...(f.path[0] === 'age_over_18' && { defaultValue: true }) })),
      },
    });
    expect(created.status, created.text).toBe(201);
    const metadata = (await svc.raw('GET', '/.well-known/openid-credential-issuer/issuers/acme')).body;
    expect(metadata.credential_configurations_supported.mdl).toMatchObject({
      format: 'mso_mdoc',
      doctype: DOC_TYPE,
      credential_signing_alg_values_supported: [-7],
    });
    const offer = await svc.call('POST', '/api/issuer/offer', {
      token: acme,
      body: {
        response_type: 'uri',
        flow: 'pre_authorized_code',
        credentialConfigurationIds: ['mdl'],
        credentialClaims: {
          mdl: { type: 'inline', claims: { [NS]: { family_name: 'Mustermann', given_name: 'Erika', birth_date: '1964-08-12' } } },
        },
      },
    });
    expect(offer.status, offer.text).toBe(201);
    const { response, keys } = await receiveCredentials(offer.body.uri);
    const credential = ((response.credentialResponse.credentials ?? [])[0] as { credential: string }).credential;
    const checks = await presentAndVerify(
      credential,
      keys[0]?.privateJwk as JWK,
      [await rootDer()],
      ['family_name', 'given_name', 'birth_date', 'age_over_18'],
    );
    expect(failed(checks)).toEqual([]);
    const raw = readRaw(credential);
    const elements = Object.fromEntries(
      (raw.items.get(NS) ?? []).map(({ item }) => [item.get('elementIdentifier'), item.get('elementValue')]),
    );
    expect(elements).toMatchObject({ family_name: 'Mustermann', given_name: 'Erika', age_over_18: true });
  });
});
