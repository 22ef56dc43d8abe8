// verifyMdocPresentation on its own: mdocs issued here by the service's own issuance code (issueMdoc,
// with a signer over a test certificate), presented by the test wallet (@owf/mdoc's Holder) and, for
// the rules the library leaves to the verifier, bent in their CBOR (cbor-x) before verification. It
// proves each structural refusal, the session transcript of each flow, the trust in the document
// signer, and the claims and status reference an accepted presentation gives.
import 'reflect-metadata';
import { DataItem, Verifier } from '@owf/mdoc';
import * as x509 from '@peculiar/x509';
import { Decoder, Encoder, Tag } from 'cbor-x';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FieldDefinition } from '../../src/credential-configs/service.js';
import { issueMdoc } from '../../src/formats/mso-mdoc/issue.js';
import { verifyMdocPresentation } from '../../src/formats/mso-mdoc/verify.js';
import type { PresentationContext } from '../../src/formats/presentation-context.js';
import { PresentationRejected } from '../../src/verification/errors.js';
import { verifyPresentation } from '../../src/verification/verify-presentation.js';
import { type MdocRequest, presentMdoc } from '../support/mdoc-wallet.js';
import { MDOC_DOCUMENT_SIGNER_EKU, type TestCertificate, testCertificate, testSigner } from '../support/test-pki.js';

const DOC_TYPE = 'org.iso.18013.5.1.mDL';
const NS = 'org.iso.18013.5.1';
const FIELDS = [
  { path: ['family_name'], type: 'string', namespace: NS },
  { path: ['birth_date'], type: 'date', namespace: NS },
  { path: ['issued_at'], type: 'datetime', namespace: NS },
  { path: ['age_over_18'], type: 'boolean', namespace: NS },
  { path: ['height'], type: 'number', namespace: NS },
  { path: ['driving_privileges'], namespace: NS },
  { path: ['portrait'], namespace: NS },
  { path: ['document_serial'], namespace: NS },
  { path: ['endorsements'], namespace: NS },
] as FieldDefinition[];
const CLAIMS = {
  [NS]: {
    family_name: 'Mustermann',
    birth_date: '1964-08-12',
    issued_at: '2026-01-02T03:04:05Z',
    age_over_18: true,
    height: 176,
    driving_privileges: [{ vehicle_category_code: 'B', codes: [{ code: 'A1' }] }],
    portrait: new Uint8Array([0xff, 0xd8, 0xff]),
    document_serial: 2n ** 60n,
    endorsements: ['none', null],
  },
};
const ELEMENTS = Object.keys(CLAIMS[NS]);
const REQUEST: MdocRequest = {
  clientId: 'x509_hash:verifier',
  nonce: 'nonce-of-the-request',
  responseUri: 'https://verifier.example/response',
  responseMode: 'direct_post',
  payload: {},
};
const STATUS = { status_list: { idx: 7, uri: 'https://status.example/lists/1' } };

let root: TestCertificate;
let documentSigner: TestCertificate;
let holder: { publicJwk: JWK; privateJwk: JWK };
let credential: string;

beforeAll(async () => {
  root = await testCertificate('C=DE, CN=mDL Root CA', { ca: true });
  documentSigner = await testCertificate('C=DE, CN=mDL Document Signer', {
    issuer: root,
    extensions: [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([MDOC_DOCUMENT_SIGNER_EKU], true),
    ],
  });
  const pair = await generateKeyPair('ES256', { extractable: true });
  holder = { publicJwk: await exportJWK(pair.publicKey), privateJwk: await exportJWK(pair.privateKey) };
  credential = await issue();
});

function issue(status?: typeof STATUS) {
  return issueMdoc(
    {
      issuedAt: new Date(),
      docType: DOC_TYPE,
      fields: FIELDS,
      claims: CLAIMS,
      holderJwk: holder.publicJwk,
      lifetimeSeconds: 3600,
      ...(status && { status }),
    },
    testSigner(documentSigner),
  );
}

function context(overrides: Partial<PresentationContext> = {}): PresentationContext {
  return {
    clientId: REQUEST.clientId,
    nonce: REQUEST.nonce,
    responseUri: REQUEST.responseUri,
    trustedCertificates: [root.pem],
    transactionData: [],
    now: new Date(),
    ...overrides,
  };
}

/** The wallet's DeviceResponse (base64url) for `request`, of `from` (default: the credential issued in beforeAll). */
async function present(request: MdocRequest = REQUEST, from = credential) {
  const { vpToken } = await presentMdoc(request, {
    docType: DOC_TYPE,
    namespace: NS,
    elements: ELEMENTS,
    holder: holder.privateJwk,
    credential: from,
  });
  return vpToken.mdl?.[0] as string;
}

async function outcome(presentation: string | Promise<string>, at: PresentationContext = context()): Promise<string> {
  try {
    await verifyMdocPresentation(await presentation, at);
    return 'accepted';
  } catch (err) {
    return err instanceof PresentationRejected ? err.message : `not a rejection: ${String(err)}`;
  }
}

const decoder = new Decoder({ mapsAsObjects: false, useRecords: false });
const encoder = new Encoder({ mapsAsObjects: false, useRecords: false, tagUint8Array: false });

/** The DeviceResponse with its CBOR changed by `bend` (a map of its top-level members). */
function bent(presentation: string, bend: (response: Map<string, any>) => void): string {
  const response = decoder.decode(Buffer.from(presentation, 'base64url')) as Map<string, any>;
  bend(response);
  return Buffer.from(encoder.encode(response)).toString('base64url');
}
const firstDocument = (response: Map<string, any>) => response.get('documents')[0] as Map<string, any>;

describe('an accepted mdoc presentation', () => {
  it('gives the elements as JSON by namespace, the docType, the signer and no status without one', async () => {
    const [verified, ...more] = await verifyPresentation('mso_mdoc', await present(), context());
    expect(more).toEqual([]);
    expect(verified).toEqual({
      format: 'mso_mdoc',
      docType: DOC_TYPE,
      claims: {
        [NS]: {
          family_name: 'Mustermann',
          birth_date: '1964-08-12',
          issued_at: '2026-01-02T03:04:05.000Z',
          age_over_18: true,
          height: 176,
          driving_privileges: [{ vehicle_category_code: 'B', codes: [{ code: 'A1' }] }],
          // Bytes as base64url, an integer past 2^53 as its decimal digits, CBOR null as null.
          portrait: '_9j_',
          document_serial: '1152921504606846976',
          endorsements: ['none', null],
        },
      },
      issuer: 'C=DE, CN=mDL Document Signer',
      // The x5chain of the issuer signature, as in an x5c header (for trusted_authorities).
      issuerChain: [documentSigner.der],
    });
  });

  it("gives the MSO's status reference as signed", async () => {
    const [verified] = await verifyMdocPresentation(await present(REQUEST, await issue(STATUS)), context());
    expect(verified?.status).toEqual(STATUS);
  });

  it('binds the device signature to the encryption key of a direct_post.jwt request and to the origin over the DC API', async () => {
    const { publicKey } = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
    const encryptionJwk = await exportJWK(publicKey);
    const encrypted = { ...REQUEST, responseMode: 'direct_post.jwt', payload: { client_metadata: { jwks: { keys: [encryptionJwk] } } } };
    const presentation = await present(encrypted);
    expect(await outcome(presentation, context({ encryptionJwk }))).toBe('accepted');
    expect(await outcome(presentation)).toMatch(/^mdoc device authentication .*: Device signature must be valid/);

    const overDcApi = { ...encrypted, responseMode: 'dc_api.jwt', origin: 'https://page.example' };
    const dcApiPresentation = await present(overDcApi);
    expect(await outcome(dcApiPresentation, context({ encryptionJwk, origin: 'https://page.example' }))).toBe('accepted');
    expect(await outcome(dcApiPresentation, context({ encryptionJwk, origin: 'https://other.example' }))).toMatch(
      /Device signature must be valid/,
    );
    expect(await outcome(dcApiPresentation, context({ encryptionJwk }))).toMatch(/Device signature must be valid/);
  });

  it('takes up to ten documents', async () => {
    const presentation = await present();
    const ten = bent(presentation, (response) => response.set('documents', Array(10).fill(firstDocument(response))));
    expect(await verifyMdocPresentation(ten, context())).toHaveLength(10);
  });
});

describe('refusals', () => {
  it("refuses another session's transcript, an untrusted signer, and a time outside the MSO's validity", async () => {
    const presentation = await present();
    expect(await outcome(presentation, context({ nonce: 'another nonce' }))).toBe(
      'mdoc device authentication (device signature over the session transcript of this request): Device signature must be valid',
    );
    expect(await outcome(presentation, context({ trustedCertificates: [] }))).toMatch(
      /^mdoc issuer authentication: Issuer certificate must be valid \(.+\)$/,
    );
    expect(await outcome(presentation, context({ now: new Date(Date.now() + 7200_000) }))).toMatch(
      /^mdoc issuer authentication: The MSO must be valid at the time of verification/,
    );
  });

  it('names every failed check, the first one first, each with its category', async () => {
    const presentation = await present();
    expect(await outcome(presentation, context({ nonce: 'another nonce', trustedCertificates: [] }))).toMatch(
      /^mdoc device authentication \(device signature over the session transcript of this request\): Device signature must be valid; mdoc issuer authentication: /,
    );
  });

  it('wraps a document the library cannot read as a malformed document', async () => {
    const presentation = await present();
    expect(await outcome(bent(presentation, (r) => firstDocument(r).delete('deviceSigned')))).toMatch(
      /^mdoc: (malformed document \(.+\)|the presentation is not a base64url-encoded DeviceResponse)$/,
    );
  });

  it('names a trust anchor it cannot read when it refuses, and leaves it out when another one is trusted', async () => {
    const presentation = await present();
    const broken = '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----';
    expect(await outcome(presentation, context({ trustedCertificates: [broken] }))).toMatch(
      /Issuer certificate must be valid.*; trusted certificate 1 of 1 could not be read \(.+\) and was left out$/,
    );
    expect(await outcome(presentation, context({ trustedCertificates: [root.pem, broken] }))).toBe('accepted');
    expect(await outcome(presentation, context({ trustedCertificates: [broken, broken] }))).toMatch(
      /; trusted certificate 1 of 2 could not be read \(.+\) and was left out; trusted certificate 2 of 2 could not be read/,
    );
    // A refusal without unreadable anchors says nothing of them.
    expect(await outcome(presentation, context({ nonce: 'x', trustedCertificates: [root.pem] }))).not.toMatch(/could not be read/);
  });

  it('refuses what is not a base64url-encoded DeviceResponse', async () => {
    const not = 'mdoc: the presentation is not a base64url-encoded DeviceResponse';
    expect(await outcome('a+b/c=')).toBe(not);
    // A DeviceResponse with a character base64url decoding would skip, before or after.
    const presentation = await present();
    expect(await outcome(`!${presentation}`)).toBe(not);
    expect(await outcome(`${presentation}!`)).toBe(not);
    expect(await outcome('bm90LWNib3I')).toBe(not);
    expect(await outcome(Buffer.from(encoder.encode(['an', 'array'])).toString('base64url'))).toBe(not);
  });

  it('refuses a DeviceResponse whose status is not OK, that reports documentErrors, or holds no or too many documents', async () => {
    const presentation = await present();
    expect(await outcome(bent(presentation, (r) => r.set('status', 10)))).toBe('mdoc: the DeviceResponse has status 10, not OK (0)');
    expect(await outcome(bent(presentation, (r) => r.set('documentErrors', [new Map([[DOC_TYPE, 0]])])))).toBe(
      'mdoc: the DeviceResponse reports documentErrors',
    );
    expect(await outcome(bent(presentation, (r) => r.set('documentErrors', [])))).toBe('accepted');
    expect(await outcome(bent(presentation, (r) => r.set('documents', [])))).toBe('mdoc: the DeviceResponse holds no document');
    expect(await outcome(bent(presentation, (r) => r.delete('documents')))).toBe('mdoc: the DeviceResponse holds no document');
    expect(await outcome(bent(presentation, (r) => r.set('documents', Array(11).fill(firstDocument(r)))))).toBe(
      'mdoc: the DeviceResponse holds more than 10 documents',
    );
  });

  it('refuses a document with element errors, without a device signature, with an attached payload, or of another docType', async () => {
    const presentation = await present();
    expect(await outcome(bent(presentation, (r) => firstDocument(r).set('errors', new Map([[NS, new Map([['portrait', 1]])]]))))).toBe(
      `mdoc: document ${DOC_TYPE} reports errors for some elements`,
    );
    expect(await outcome(bent(presentation, (r) => firstDocument(r).set('errors', new Map())))).toBe('accepted');
    const deviceAuth = (r: Map<string, any>) => firstDocument(r).get('deviceSigned').get('deviceAuth') as Map<string, any>;
    expect(
      await outcome(
        bent(presentation, (r) => {
          const auth = deviceAuth(r);
          auth.set('deviceMac', auth.get('deviceSignature'));
          auth.delete('deviceSignature');
        }),
      ),
    ).toBe(`mdoc device authentication: document ${DOC_TYPE} has no device signature (MAC is not supported)`);
    expect(
      await outcome(
        bent(presentation, (r) => {
          const signature = deviceAuth(r).get('deviceSignature') as unknown[];
          signature[2] = new Uint8Array([1, 2, 3]);
        }),
      ),
    ).toBe(`mdoc device authentication: the device signature of ${DOC_TYPE} must have a detached payload`);
    expect(await outcome(bent(presentation, (r) => firstDocument(r).set('docType', 'org.example.other')))).toBe(
      `mdoc: document docType org.example.other is not the docType the issuer signed (${DOC_TYPE})`,
    );
  });
});

describe('element values of other CBOR types', () => {
  it('gives a tagged value by its content, and a map or an embedded data item as an object', async () => {
    const fields = ['website', 'nickname', 'alias', 'preferences', 'embedded'].map((name) => ({
      path: [name],
      namespace: NS,
    })) as FieldDefinition[];
    // Tags the decoder does not interpret (32: URI, 1234: unassigned) come as {tag, value}.
    const claims = {
      [NS]: {
        website: new Tag('https://example.org', 32),
        nickname: new Tag(null, 1234),
        // CBOR undefined (simple value 23) becomes JSON null as well.
        alias: new Tag(undefined, 1234),
        preferences: { language: { primary: 'de' } },
        embedded: DataItem.fromData({ level: 2 }),
      },
    };
    const issued = await issueMdoc(
      { issuedAt: new Date(), docType: DOC_TYPE, fields, claims, holderJwk: holder.publicJwk, lifetimeSeconds: 3600 },
      testSigner(documentSigner),
    );
    const { vpToken } = await presentMdoc(REQUEST, {
      docType: DOC_TYPE,
      namespace: NS,
      elements: Object.keys(claims[NS]),
      holder: holder.privateJwk,
      credential: issued,
    });
    const [verified] = await verifyMdocPresentation(vpToken.mdl?.[0] as string, context());
    expect(verified?.claims).toEqual({
      [NS]: {
        website: 'https://example.org',
        nickname: null,
        alias: null,
        preferences: { language: { primary: 'de' } },
        embedded: { level: 2 },
      },
    });
  });
});

// What the verifier does when @owf/mdoc reports its checks otherwise than the version in use does:
// the library's own verification runs, and only the checks it reports (or a failure) are changed.
describe('when the library reports its checks otherwise', () => {
  const libraryVerify = Verifier.verifyDeviceResponse.bind(Verifier);
  type Options = Parameters<typeof Verifier.verifyDeviceResponse>[0];
  type Check = Parameters<NonNullable<Options['onCheck']>>[0];
  afterEach(() => vi.restoreAllMocks());

  /** Verifies with the library's checks passed through `report` (which may drop or change them). */
  function reportingThrough(report: (check: Check, onCheck: (check: Check) => void) => void) {
    vi.spyOn(Verifier, 'verifyDeviceResponse').mockImplementation((options, mdocContext) =>
      libraryVerify({ ...options, onCheck: (check) => report(check, (c) => options.onCheck?.(c)) }, mdocContext),
    );
  }
  /** A library that reports `checks` and then throws. */
  function failingAfter(...checks: Check[]) {
    vi.spyOn(Verifier, 'verifyDeviceResponse').mockImplementation(async (options) => {
      for (const check of checks) options.onCheck?.(check);
      throw new Error('library failure');
    });
  }

  const REQUIRED = [
    'Device signature must be valid',
    'Issuer certificate must be valid',
    'Issuer auth signature is invalid',
    'The MSO must be valid at the time of verification',
  ];

  it.each(REQUIRED)("refuses when the check '%s' is not reported as passed for every document (fails closed)", async (required) => {
    const presentation = await present();
    const refusal = `mdoc: the check '${required}' did not run for every document`;
    reportingThrough((check, onCheck) => check.check !== required && onCheck(check));
    expect(await outcome(presentation)).toBe(refusal);
    // Reported, but as a warning: not passed.
    reportingThrough((check, onCheck) => onCheck(check.check === required ? { ...check, status: 'WARNING' } : check));
    expect(await outcome(presentation)).toBe(refusal);
    // Two documents, the check reported as passed for only one of them.
    const two = bent(presentation, (response) => response.set('documents', [firstDocument(response), firstDocument(response)]));
    let seen = 0;
    reportingThrough((check, onCheck) => (check.check !== required || seen++ === 0) && onCheck(check));
    expect(await outcome(two)).toBe(refusal);
  });

  it('names the failed checks reported before the library throws, with their category, and only those', async () => {
    failingAfter(
      { status: 'PASSED', category: 'DEVICE_AUTH', check: 'Device signature must be valid' },
      { status: 'FAILED', category: 'DATA_INTEGRITY', check: 'Digests must match', reason: 'element portrait' },
      { status: 'FAILED', category: 'DOCUMENT_FORMAT', check: 'Document must be well formed', reason: 'Document must be well formed' },
      { status: 'FAILED', category: 'READER_AUTH', check: 'Reader certificate must be valid' },
    );
    expect(await outcome(present())).toBe(
      'mdoc data integrity: Digests must match (element portrait); mdoc document format: Document must be well formed; mdoc reader authentication: Reader certificate must be valid',
    );
  });

  it('refuses with the error when the library throws without a failed check, naming unreadable trust anchors', async () => {
    failingAfter({ status: 'PASSED', category: 'ISSUER_AUTH', check: 'Issuer certificate must be valid' });
    expect(await outcome(present())).toBe('mdoc: the DeviceResponse could not be verified (library failure)');
    failingAfter();
    const broken = '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----';
    expect(await outcome(present(), context({ trustedCertificates: [root.pem, broken] }))).toMatch(
      /^mdoc: the DeviceResponse could not be verified \(library failure\); trusted certificate 2 of 2 could not be read/,
    );
  });

  it('names a failed check without a reason by its category and check alone', async () => {
    reportingThrough((check, onCheck) =>
      onCheck(
        check.check === 'Issuer certificate must be valid' ? { category: check.category, check: check.check, status: 'FAILED' } : check,
      ),
    );
    expect(await outcome(present())).toBe('mdoc issuer authentication: Issuer certificate must be valid');
  });
});

describe("a malformed status entry in the issuer's MSO", () => {
  /**
   * The credential issued in beforeAll with `entry` added to its MSO map as `status`, signed again by
   * the document signer (the issuance code writes only well-formed status entries).
   */
  async function withMsoStatus(entry: unknown): Promise<string> {
    const issuerSigned = decoder.decode(Buffer.from(credential, 'base64url')) as Map<string, any>;
    const issuerAuth = issuerSigned.get('issuerAuth') as [Uint8Array, unknown, Uint8Array, Uint8Array];
    // #6.24(bstr .cbor MSO): the tag (d8 18), then a byte string of 256 to 65535 bytes (59 and two length bytes).
    const tagged = Buffer.from(issuerAuth[2]);
    expect([...tagged.subarray(0, 3)]).toEqual([0xd8, 0x18, 0x59]);
    const mso = tagged.subarray(5, 5 + tagged.readUInt16BE(3));
    // A map of fewer than 24 entries has its count in its first byte: one more, the status appended.
    expect(mso[0]! >> 5).toBe(5);
    const patched = Buffer.concat([Buffer.from([mso[0]! + 1]), mso.subarray(1), encoder.encode('status'), encoder.encode(entry)]);
    const payload = encoder.encode(new Tag(new Uint8Array(patched), 24));
    const toSign = encoder.encode(['Signature1', issuerAuth[0], new Uint8Array(0), payload]);
    const signature = await testSigner(documentSigner).sign(new Uint8Array(toSign));
    issuerSigned.set('issuerAuth', [issuerAuth[0], issuerAuth[1], new Uint8Array(payload), signature]);
    return Buffer.from(encoder.encode(issuerSigned)).toString('base64url');
  }

  it('refuses a status that is not a map, or a status_list that is not one, and gives none without a status_list', async () => {
    const notAMap = await present(REQUEST, await withMsoStatus('revoked'));
    expect(await outcome(notAMap)).toBe(`mdoc: the MSO of ${DOC_TYPE} has a malformed status entry (not a map)`);
    const listNotAMap = await present(REQUEST, await withMsoStatus(new Map([['status_list', 'https://status.example/lists/1']])));
    expect(await outcome(listNotAMap)).toBe(`mdoc: the MSO of ${DOC_TYPE} has a malformed status_list (not a map)`);
    // A status entry of another mechanism only: nothing for the status list check.
    const [other] = await verifyMdocPresentation(await present(REQUEST, await withMsoStatus(new Map([['identifier_list', 1]]))), context());
    expect(other?.claims[NS]).toMatchObject({ family_name: 'Mustermann' });
    expect(other).not.toHaveProperty('status');
  });
});
