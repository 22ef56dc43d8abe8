// ISO/IEC 18013-7 Annex C: an mdoc presentation over the W3C Digital Credentials API (protocol
// org-iso-mdoc). The offer carries { deviceRequest, encryptionInfo } for navigator.credentials.get;
// the test wallet reads them with cbor-x, checks the ReaderAuth with node:crypto against the access
// certificate, makes its own session transcript over the page's origin, builds the DeviceResponse
// with @owf/mdoc's Holder, seals it with @hpke/core (DHKEM(P-256, HKDF-SHA256), HKDF-SHA256,
// AES-128-GCM, info = the transcript) and the integrator's page posts { response } back.
import 'reflect-metadata';
import { createPublicKey, verify as nodeVerify, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Aes128Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from '@hpke/core';
import { Decoder, Encoder, Tag } from 'cbor-x';
import type { JWK } from 'jose';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, launchBrowser } from '../support/browser.js';
import { MDL_DOC_TYPE, MDL_NAMESPACE, PID, PID_ADULT_QUERY } from '../support/fixtures.js';
import { annexCWalletTranscript, deviceResponseOver } from '../support/mdoc-wallet.js';
import { fieldsOf } from '../support/problems.js';
import { startService, type TestService } from '../support/service.js';
import { issueCredential } from '../support/wallet.js';

const PAGE = readFileSync(new URL('../../docs/examples/annex-c-presentation.html', import.meta.url), 'utf8');
const ORIGIN = 'https://shop.example.com';
const NS = MDL_NAMESPACE;
const MDL = {
  id: 'mdl',
  config: { format: 'mso_mdoc', docType: MDL_DOC_TYPE },
  statusManagement: true,
  fields: [
    { path: ['family_name'], type: 'string', namespace: NS },
    { path: ['given_name'], type: 'string', namespace: NS },
    { path: ['age_over_18'], type: 'boolean', namespace: NS },
  ],
};
const MDL_QUERY = {
  credentials: [
    {
      id: 'mdl',
      format: 'mso_mdoc',
      meta: { doctype_value: MDL_DOC_TYPE },
      claims: [{ path: [NS, 'family_name'] }, { path: [NS, 'age_over_18'], values: [true] }],
    },
  ],
};
const TRUSTED = [
  { type: 'internal', keyChainId: 'default-attestation' },
  { type: 'internal', keyChainId: 'default-statusList', serviceType: 'revocation' },
];
const MDL_CLAIMS = { [NS]: { family_name: 'Mustermann', given_name: 'Erika', age_over_18: true } };

const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() });
const cbor = new Encoder({ mapsAsObjects: false, useRecords: false, tagUint8Array: false });
const decoder = new Decoder({ mapsAsObjects: false, useRecords: false });
const b64u = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

let svc: TestService;
let admin: string;
let mdl: { credential: string; holder: JWK; session: string };

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  const statusConfig = await svc.call('PUT', '/api/status-list-config', {
    token: admin,
    body: { bits: 2, immediateUpdate: true, ttl: 60 },
  });
  expect(statusConfig.status, statusConfig.text).toBe(200);
  for (const body of [PID, MDL]) expect((await svc.raw('POST', '/api/issuer/credentials', { token: admin, body })).status).toBe(201);
  const trust = await svc.raw('POST', '/api/trust-list', { token: admin, body: { id: 'issuers', entities: TRUSTED } });
  expect(trust.status, trust.text).toBe(201);
  for (const [id, dcql_query] of [
    ['mdl-check', MDL_QUERY],
    ['adult', PID_ADULT_QUERY],
  ] as const) {
    const config = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id, dcql_query } });
    expect(config.status, config.text).toBe(201);
  }
  mdl = await issueCredential(svc, admin, 'mdl', MDL_CLAIMS);
});
afterAll(() => svc.stop());

interface AnnexCOffer {
  session: string;
  expiresAt: string;
  dcApiRequest: { protocol: string; data: { deviceRequest: string; encryptionInfo: string } };
  responseUri: string;
}

const offer = async (body: Record<string, unknown> = {}, token = admin): Promise<AnnexCOffer> => {
  const reply = await svc.call('POST', '/api/verifier/offer', {
    token,
    body: { response_type: 'iso-18013-7', requestId: 'mdl-check', expected_origin: ORIGIN, ...body },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as AnnexCOffer;
};
const session = (id: string) => svc.running.services.sessions.get('acme', id);
const postBack = (made: AnnexCOffer, body: Record<string, unknown>) => svc.raw('POST', new URL(made.responseUri).pathname, { body });

/** The bytes inside a #6.24 item, however the decoder hands it over (@owf/mdoc registers its own class for the tag). */
function embedded(item: unknown): Uint8Array {
  if (item instanceof Tag && item.tag === 24) return item.value as Uint8Array;
  const buffer = (item as { buffer?: unknown }).buffer;
  if (buffer instanceof Uint8Array) return buffer;
  throw new Error('not a #6.24 embedded CBOR item');
}

/** The recipient key of an EncryptionInfo ["dcapi", {nonce, recipientPublicKey}], as an uncompressed point. */
function recipientPoint(encryptionInfo: string): Uint8Array {
  const [type, parameters] = decoder.decode(Buffer.from(encryptionInfo, 'base64url')) as [string, Map<string, unknown>];
  expect(type).toBe('dcapi');
  expect((parameters.get('nonce') as Uint8Array).length).toBeGreaterThanOrEqual(16);
  const key = parameters.get('recipientPublicKey') as Map<number, unknown>;
  expect([key.get(1), key.get(-1)]).toEqual([2, 1]); // EC2, P-256
  return new Uint8Array([4, ...(key.get(-2) as Uint8Array), ...(key.get(-3) as Uint8Array)]);
}

interface WalletOptions {
  /** The elements the wallet discloses (default: both requested). */
  elements?: string[];
  credential?: string;
  holder?: JWK;
  /** The origin the wallet signs the DeviceResponse over (default: the page's). */
  signedOrigin?: string;
  /** The EncryptionInfo the wallet signs over (default: the request's). */
  signedEncryptionInfo?: string;
  /** The origin of the HPKE info (default: the page's). */
  sealedOrigin?: string;
  /** Seal to this point instead of the request's recipient key. */
  sealTo?: Uint8Array;
  /** Repeat the document this many times in the DeviceResponse, as copies or as CBOR shared references (tags 28/29). */
  documents?: { copies: number; shared?: boolean };
  /** Name the document signer certificate this many times in the issuerAuth x5chain (unprotected header), as copies or by shared reference. */
  signerCertificate?: { copies: number; shared?: boolean };
}

/** The issuerAuth's unprotected x5chain {33: certificate} replaced by an array naming the certificate `copies` times, byte for byte or by shared reference. */
function repeatSignerCertificate(deviceResponse: Uint8Array, { copies, shared = false }: { copies: number; shared?: boolean }): Uint8Array {
  const bytes = Buffer.from(deviceResponse);
  const unprotected = Buffer.from([0xa1, 0x18, 33, 0x59]);
  const at = bytes.indexOf(unprotected);
  if (at < 0) throw new Error('no unprotected x5chain with one certificate');
  const certificate = bytes.subarray(at + 3, itemEnd(bytes, at + 3));
  const chain = [Buffer.from([0x99, copies >> 8, copies & 0xff]), ...(shared ? [Buffer.from([0xd8, 28])] : []), certificate];
  for (let i = 1; i < copies; i++) chain.push(shared ? Buffer.from([0xd8, 29, 0x00]) : certificate);
  return new Uint8Array(Buffer.concat([bytes.subarray(0, at + 3), ...chain, bytes.subarray(at + 3 + certificate.length)]));
}

/** Where the CBOR item at `pos` ends (definite lengths only, as @owf/mdoc writes them). */
function itemEnd(bytes: Buffer, pos: number): number {
  const major = (bytes[pos] as number) >> 5;
  const info = (bytes[pos] as number) & 31;
  const width = info < 24 ? 0 : 2 ** (info - 24);
  const length = width ? Number(bytes.readUIntBE(pos + 1, width)) : info;
  let end = pos + 1 + width;
  if (major === 2 || major === 3) return end + length;
  if (major === 6) return itemEnd(bytes, end);
  const items = major === 4 ? length : major === 5 ? 2 * length : 0;
  for (let i = 0; i < items; i++) end = itemEnd(bytes, end);
  return end;
}

/** The DeviceResponse with its one document repeated, byte for byte or by shared reference. */
function repeatDocument(deviceResponse: Uint8Array, { copies, shared = false }: { copies: number; shared?: boolean }): Uint8Array {
  const bytes = Buffer.from(deviceResponse);
  const parts = [bytes.subarray(0, 1)];
  let at = 1;
  for (let i = 0; i < ((bytes[0] as number) & 31); i++) {
    const keyEnd = itemEnd(bytes, at);
    const valueEnd = itemEnd(bytes, keyEnd);
    if (decoder.decode(bytes.subarray(at, keyEnd)) !== 'documents') parts.push(bytes.subarray(at, valueEnd));
    else {
      const document = bytes.subarray(keyEnd + 1, itemEnd(bytes, keyEnd + 1));
      const shareable = Buffer.concat([Buffer.from([0xd8, 28]), document]);
      const reference = Buffer.from([0xd8, 29, 0x00]);
      const items = Array.from({ length: copies }, (_, n) => (!shared ? document : n === 0 ? shareable : reference));
      parts.push(bytes.subarray(at, keyEnd), Buffer.from([0x99, copies >> 8, copies & 0xff]), ...items);
    }
    at = valueEnd;
  }
  return new Uint8Array(Buffer.concat(parts));
}

/** What the wallet returns to the page: base64url(CBOR(["dcapi", {enc, cipherText}])). */
async function walletResponse(made: AnnexCOffer, options: WalletOptions = {}): Promise<string> {
  const { encryptionInfo } = made.dcApiRequest.data;
  const signed = annexCWalletTranscript(options.signedEncryptionInfo ?? encryptionInfo, options.signedOrigin ?? ORIGIN);
  const deviceResponse = await deviceResponseOver(signed.sessionTranscript, {
    docType: MDL_DOC_TYPE,
    namespace: NS,
    elements: options.elements ?? ['family_name', 'age_over_18'],
    credential: options.credential ?? mdl.credential,
    holder: options.holder ?? mdl.holder,
  });
  const info = annexCWalletTranscript(encryptionInfo, options.sealedOrigin ?? ORIGIN).bytes;
  const recipientPublicKey = await suite.kem.deserializePublicKey(options.sealTo ?? recipientPoint(encryptionInfo));
  let plaintext = options.documents ? repeatDocument(deviceResponse.encode(), options.documents) : deviceResponse.encode();
  if (options.signerCertificate) plaintext = repeatSignerCertificate(plaintext, options.signerCertificate);
  const { enc, ct } = await suite.seal({ recipientPublicKey, info }, plaintext);
  return b64u(
    cbor.encode([
      'dcapi',
      new Map<string, unknown>([
        ['enc', new Uint8Array(enc)],
        ['cipherText', new Uint8Array(ct)],
      ]),
    ]),
  );
}

async function expectFailed(made: AnnexCOffer, response: string, reason: RegExp) {
  const reply = await postBack(made, { response, origin: ORIGIN });
  expect(reply.status, reply.text).toBe(400);
  expect(reply.body.error).toBe('invalid_request');
  const failed = await session(made.session);
  expect(failed.status).toBe('failed');
  expect(failed.errorReason).toMatch(reason);
  expect(failed.private?.credentials).toBeUndefined();
}

describe('the iso-18013-7 offer', () => {
  it('carries an org-iso-mdoc request: a DeviceRequest 1.1 per mso_mdoc query and the EncryptionInfo of this session', async () => {
    const made = await offer();
    expect(made.dcApiRequest.protocol).toBe('org-iso-mdoc');
    expect(made.responseUri).toMatch(/\/presentations\/[\w-]+\/annex-c-response$/);
    expect(made).not.toHaveProperty('uri');
    const request = decoder.decode(Buffer.from(made.dcApiRequest.data.deviceRequest, 'base64url')) as Map<string, unknown>;
    expect(request.get('version')).toBe('1.1');
    const docRequests = request.get('docRequests') as Map<string, unknown>[];
    expect(docRequests).toHaveLength(1);
    const items = decoder.decode(embedded(docRequests[0]?.get('itemsRequest'))) as Map<string, unknown>;
    expect(items.get('docType')).toBe(MDL_DOC_TYPE);
    expect(items.get('nameSpaces')).toEqual(
      new Map([
        [
          NS,
          new Map([
            ['family_name', false],
            ['age_over_18', false],
          ]),
        ],
      ]),
    );
    recipientPoint(made.dcApiRequest.data.encryptionInfo);
    expect(await session(made.session)).toMatchObject({
      status: 'fetched',
      public: { useDcApi: true, dcApiProtocol: 'iso-18013-7', browserOrigin: ORIGIN },
    });
    // Every session has its own recipient key.
    const other = await offer();
    expect(other.dcApiRequest.data.encryptionInfo).not.toBe(made.dcApiRequest.data.encryptionInfo);
    // The private key is in the sealed session data only.
    const shown = await svc.call('GET', `/api/session/${made.session}`, { token: admin });
    expect(shown.status).toBe(200);
    expect(shown.text).not.toMatch(/recipientKey|"d":/);
  });

  it('has a ReaderAuth that verifies with the access certificate over this session transcript', async () => {
    const made = await offer();
    const request = decoder.decode(Buffer.from(made.dcApiRequest.data.deviceRequest, 'base64url')) as Map<string, unknown>;
    const docRequest = (request.get('docRequests') as Map<string, unknown>[])[0] as Map<string, unknown>;
    const [protectedHeader, unprotected, payload, signature] = docRequest.get('readerAuth') as [
      Uint8Array,
      Map<number, unknown>,
      null,
      Uint8Array,
    ];
    expect(payload).toBeNull();
    expect(decoder.decode(protectedHeader)).toEqual(new Map([[1, -7]])); // ES256
    const x5chain = unprotected.get(33);
    const leaf = new X509Certificate(Buffer.from((Array.isArray(x5chain) ? x5chain[0] : x5chain) as Uint8Array));
    const access = await svc.running.services.signing.signer('acme', { usageType: 'access' });
    expect(leaf.raw.toString('base64')).toBe(access.x5c[0]);
    // ReaderAuthenticationBytes = #6.24(bstr .cbor ["ReaderAuthentication", SessionTranscript, ItemsRequestBytes])
    const transcript = decoder.decode(annexCWalletTranscript(made.dcApiRequest.data.encryptionInfo, ORIGIN).bytes);
    const itemsRequest = new Tag(embedded(docRequest.get('itemsRequest')), 24);
    const readerAuthentication = cbor.encode(new Tag(cbor.encode(['ReaderAuthentication', transcript, itemsRequest]), 24));
    const toBeSigned = cbor.encode(['Signature1', protectedHeader, new Uint8Array(), readerAuthentication]);
    const key = createPublicKey(leaf.publicKey.export({ format: 'pem', type: 'spki' }));
    expect(nodeVerify('sha256', toBeSigned, { key, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
    // Over another origin it does not verify: the reader signed this page's transcript.
    const elsewhere = decoder.decode(annexCWalletTranscript(made.dcApiRequest.data.encryptionInfo, 'https://evil.example.com').bytes);
    const forged = cbor.encode([
      'Signature1',
      protectedHeader,
      new Uint8Array(),
      cbor.encode(new Tag(cbor.encode(['ReaderAuthentication', elsewhere, itemsRequest]), 24)),
    ]);
    expect(nodeVerify('sha256', forged, { key, dsaEncoding: 'ieee-p1363' }, signature)).toBe(false);
  });

  it("keeps the query's intent_to_retain, and refuses queries a DeviceRequest cannot carry", async () => {
    const query = (claims: unknown[] | undefined, id = 'mdl') => ({
      id,
      format: 'mso_mdoc',
      meta: { doctype_value: MDL_DOC_TYPE },
      ...(claims && { claims }),
    });
    const configure = async (id: string, credentials: unknown[]) => {
      const reply = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id, dcql_query: { credentials } } });
      expect(reply.status, reply.text).toBe(201);
    };
    await configure('retain', [query([{ path: [NS, 'family_name'], intent_to_retain: true }, { path: [NS, 'age_over_18'] }])]);
    const made = await offer({ requestId: 'retain' });
    const request = decoder.decode(Buffer.from(made.dcApiRequest.data.deviceRequest, 'base64url')) as Map<string, unknown>;
    const items = decoder.decode(embedded((request.get('docRequests') as Map<string, unknown>[])[0]?.get('itemsRequest'))) as Map<
      string,
      Map<string, Map<string, boolean>>
    >;
    expect(Object.fromEntries(items.get('nameSpaces')?.get(NS) ?? [])).toEqual({ family_name: true, age_over_18: false });

    await configure('any-claims', [query(undefined)]);
    await configure('twice', [query([{ path: [NS, 'family_name'] }], 'a'), query([{ path: [NS, 'age_over_18'] }], 'b')]);
    for (const [requestId, reason] of [
      ['any-claims', /names no claims/],
      ['twice', /two credential queries ask for/],
    ] as const) {
      const reply = await svc.call('POST', '/api/verifier/offer', {
        token: admin,
        body: { response_type: 'iso-18013-7', requestId, expected_origin: ORIGIN },
      });
      expect(reply.status).toBe(400);
      expect(reply.text).toMatch(reason);
    }
  });

  it('needs expected_origin, and a configuration of mso_mdoc queries without transaction data', async () => {
    const noOrigin = await svc.call('POST', '/api/verifier/offer', {
      token: admin,
      body: { response_type: 'iso-18013-7', requestId: 'mdl-check' },
    });
    expect(noOrigin.status).toBe(400);
    expect(fieldsOf(noOrigin)).toEqual(['body.expected_origin']);
    const sdJwt = await svc.call('POST', '/api/verifier/offer', {
      token: admin,
      body: { response_type: 'iso-18013-7', requestId: 'adult', expected_origin: ORIGIN },
    });
    expect(sdJwt.status).toBe(400);
    expect(sdJwt.text).toMatch(/mso_mdoc only/);
    const withTransactionData = await svc.call('POST', '/api/verifier/offer', {
      token: admin,
      body: {
        response_type: 'iso-18013-7',
        requestId: 'mdl-check',
        expected_origin: ORIGIN,
        transaction_data: [{ type: 'payment', credential_ids: ['mdl'] }],
      },
    });
    expect(withTransactionData.status).toBe(400);
    expect(fieldsOf(withTransactionData)).toEqual(['body.transaction_data']);
  });
});

describe('the Annex C response', () => {
  it('completes the session with the disclosed elements, sends the webhook, and is not taken twice', async () => {
    const received: unknown[] = [];
    const receiver: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        received.push(JSON.parse(body));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as AddressInfo;
    const made = await offer({ webhook: { url: `http://127.0.0.1:${port}/claims` } });
    const response = await walletResponse(made);
    const reply = await postBack(made, { response, origin: ORIGIN });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({});
    const done = await session(made.session);
    expect(done).toMatchObject({ status: 'completed', consumed: true });
    expect(done.private?.credentials).toEqual([
      expect.objectContaining({
        queryId: 'mdl',
        format: 'mso_mdoc',
        docType: MDL_DOC_TYPE,
        claims: { [NS]: { family_name: 'Mustermann', age_over_18: true } },
        status: { status_list: expect.objectContaining({ idx: expect.any(Number) }) },
      }),
    ]);
    await expect.poll(() => received.length, { timeout: 5000 }).toBe(1);
    expect(received[0]).toMatchObject({
      type: 'presentation.completed',
      sessionId: made.session,
      credentials: [{ claims: { [NS]: { family_name: 'Mustermann', age_over_18: true } } }],
    });
    await new Promise<void>((resolve) => receiver.close(() => resolve()));

    // Replayed: the session was answered.
    const replayed = await postBack(made, { response, origin: ORIGIN });
    expect(replayed.status).toBe(400);
    expect(replayed.body.error_description).toMatch(/already answered|does not accept a response/);
    expect((await session(made.session)).status).toBe('completed');
  });

  it("carries the page back to the request's redirectUri with a response_code", async () => {
    const made = await offer({ redirectUri: `${ORIGIN}/done/{sessionId}` });
    const reply = await postBack(made, { response: await walletResponse(made) });
    expect(reply.status, reply.text).toBe(200);
    const redirect = new URL(reply.body.redirect_uri);
    expect(`${redirect.origin}${redirect.pathname}`).toBe(`${ORIGIN}/done/${made.session}`);
    // The result is released with that code only (verification/result; test/verification/response-code.test.ts).
    expect((await session(made.session)).public).toMatchObject({ responseCodeRequired: true });
    const release = (response_code: string) =>
      svc.raw('POST', '/api/verifier/result', { token: admin, body: { session: made.session, response_code } });
    expect((await release('guessed')).status).toBe(400);
    const released = await release(redirect.searchParams.get('response_code') as string);
    expect(released.status, released.text).toBe(200);
    expect(released.body.credentials).toEqual([expect.objectContaining({ format: 'mso_mdoc', queryId: expect.any(String) })]);
  });

  it('answers the CORS preflight of the expected origin only', async () => {
    const made = await offer();
    const path = new URL(made.responseUri).pathname;
    const preflight = (origin: string) =>
      fetch(`${svc.url}${path}`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
    expect((await preflight(ORIGIN)).headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect((await preflight('https://evil.example.com')).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('sealed over another origin cannot be opened', async () => {
    const made = await offer();
    const response = await walletResponse(made, { signedOrigin: 'https://evil.example.com', sealedOrigin: 'https://evil.example.com' });
    await expectFailed(made, response, /could not be decrypted/);
  });

  it('a device signature over another origin is rejected (device authentication)', async () => {
    const made = await offer();
    await expectFailed(made, await walletResponse(made, { signedOrigin: 'https://evil.example.com' }), /device authentication/);
  });

  it("a device signature over another session's transcript is rejected", async () => {
    const made = await offer();
    const other = await offer();
    const response = await walletResponse(made, { signedEncryptionInfo: other.dcApiRequest.data.encryptionInfo });
    await expectFailed(made, response, /device authentication/);
  });

  it('a response posted from another origin is rejected', async () => {
    const made = await offer();
    const reply = await postBack(made, { response: await walletResponse(made), origin: 'https://evil.example.com' });
    expect(reply.status).toBe(400);
    expect(await session(made.session)).toMatchObject({ status: 'failed', errorReason: expect.stringMatching(/origin/) });
  });

  it('sealed to another key cannot be opened', async () => {
    const made = await offer();
    const stranger = await suite.kem.generateKeyPair();
    const point = new Uint8Array(await suite.kem.serializePublicKey(stranger.publicKey));
    await expectFailed(made, await walletResponse(made, { sealTo: point }), /could not be decrypted/);
  });

  it('a tampered ciphertext cannot be opened', async () => {
    const made = await offer();
    const [type, data] = decoder.decode(Buffer.from(await walletResponse(made), 'base64url')) as [string, Map<string, Uint8Array>];
    const cipherText = Uint8Array.from(data.get('cipherText') as Uint8Array);
    cipherText[10] = (cipherText[10] as number) ^ 0x01;
    const tampered = b64u(cbor.encode([type, new Map([...data, ['cipherText', cipherText]])]));
    await expectFailed(made, tampered, /could not be decrypted/);
  });

  it('malformed responses are rejected with what is wrong', async () => {
    for (const [response, reason] of [
      ['not base64url!', /not base64url/],
      [b64u(cbor.encode(['openid4vp', new Map()])), /not an EncryptedResponse/],
      [
        b64u(
          cbor.encode([
            'dcapi',
            new Map([
              ['enc', new Uint8Array(10)],
              ['cipherText', new Uint8Array(40)],
            ]),
          ]),
        ),
        /uncompressed P-256 point/,
      ],
    ] as const) {
      const made = await offer();
      await expectFailed(made, response, reason);
    }
  });

  it('an element the query requires but the wallet withholds fails the DCQL check', async () => {
    const made = await offer();
    await expectFailed(made, await walletResponse(made, { elements: ['family_name'] }), /DCQL/);
  });

  it('two documents for a query without `multiple` fail the DCQL check (a rejection, not a server error)', async () => {
    const made = await offer();
    await expectFailed(made, await walletResponse(made, { documents: { copies: 2 } }), /^DCQL: .*multiple/);
  });

  it('a DeviceResponse naming its document thousands of times (CBOR shared references) is refused as it is decoded', async () => {
    const made = await offer();
    const response = await walletResponse(made, { documents: { copies: 5000, shared: true } });
    expect(response.length).toBeLessThan(30_000);
    const started = Date.now();
    await expectFailed(made, response, /CBOR value sharing \(tag 28\) is not accepted/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('an issuer x5chain naming its certificate thousands of times (CBOR shared references) is refused as it is decoded', async () => {
    const made = await offer();
    const response = await walletResponse(made, { signerCertificate: { copies: 20_000, shared: true } });
    expect(response.length).toBeLessThan(100_000);
    const started = Date.now();
    await expectFailed(made, response, /CBOR value sharing \(tag 28\) is not accepted/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('more than 10 documents, or issuer chains of more than 10 certificates, are refused before any is verified', async () => {
    const made = await offer();
    await expectFailed(made, await walletResponse(made, { documents: { copies: 11 } }), /more than 10 documents/);
    const again = await offer();
    await expectFailed(again, await walletResponse(again, { signerCertificate: { copies: 11 } }), /more than 10 certificates/);
  });

  it('an mdoc of an issuer the tenant does not trust is rejected', async () => {
    const other = (await svc.tenant('globex')).token;
    expect((await svc.raw('POST', '/api/issuer/credentials', { token: other, body: { ...MDL, statusManagement: false } })).status).toBe(
      201,
    );
    const foreign = await issueCredential(svc, other, 'mdl', MDL_CLAIMS);
    const made = await offer();
    await expectFailed(
      made,
      await walletResponse(made, { credential: foreign.credential, holder: foreign.holder }),
      /issuer authentication: Issuer certificate must be valid \(no trusted issuer/,
    );
  });

  it('a revoked mdoc is rejected with its status', async () => {
    const revoked = await issueCredential(svc, admin, 'mdl', MDL_CLAIMS);
    const changed = await svc.call('POST', '/api/session/revoke', { token: admin, body: { sessionId: revoked.session, status: 1 } });
    expect(changed.status, changed.text).toBe(200);
    expect((await svc.call('DELETE', '/api/cache/status-list', { token: admin })).status).toBe(204);
    const made = await offer();
    await expectFailed(made, await walletResponse(made, { credential: revoked.credential, holder: revoked.holder }), /^status: revoked$/);
  });

  it('goes to its own endpoint only', async () => {
    const made = await offer();
    const response = await walletResponse(made);
    const wrong = await svc.raw('POST', new URL(made.responseUri).pathname.replace(/annex-c-response$/, 'dc-api-response'), {
      body: { response },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error_description).toBe(
      'this presentation request does not answer here: it was made for ISO 18013-7 Annex C; post its response to the annex-c-response endpoint',
    );
    expect((await session(made.session)).status).toBe('fetched');
  });
});

describe.skipIf(!browserAvailable)('the example integrator page', () => {
  let browser: Browser;
  let page: Server;
  let pageUrl: string;
  let pageOrigin: string;
  const made: AnnexCOffer[] = [];

  beforeAll(async () => {
    browser = await launchBrowser();
    // The integrator's backend: serves the page, and asks svc for an Annex C request for the page's origin.
    page = createServer(async (req, res) => {
      if (req.method === 'POST' && req.url === '/presentation-request') {
        const reply = await svc.call('POST', '/api/verifier/offer', {
          token: admin,
          body: { response_type: 'iso-18013-7', requestId: 'mdl-check', expected_origin: pageOrigin },
        });
        if (reply.status === 201) made.push(reply.body as AnnexCOffer);
        res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.text);
        return;
      }
      if (req.method === 'GET' && req.url?.startsWith('/result/')) {
        const id = decodeURIComponent(req.url.slice('/result/'.length));
        const state = await svc.call('GET', `/api/session/${encodeURIComponent(id)}`, { token: admin });
        res.writeHead(state.status, { 'content-type': 'application/json' }).end(JSON.stringify({ status: state.body.status }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    pageUrl = `${pageOrigin}/`;
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => page?.close(resolve));
  });

  it("passes the request to navigator.credentials.get and posts the wallet's answer to svc, which completes the session", async () => {
    const tab = await browser.newPage();
    // The browser's DC API, stubbed: it hands the request to the test wallet (in Node) and returns its answer.
    await tab.exposeFunction('testWallet', async (request: { protocol: string; data: AnnexCOffer['dcApiRequest']['data'] }) => {
      const current = made.at(-1) as AnnexCOffer;
      expect(request).toEqual(current.dcApiRequest);
      // The wallet makes its transcript over the origin the browser reports: the page's.
      return walletResponse(current, { signedOrigin: pageOrigin, sealedOrigin: pageOrigin });
    });
    await tab.addInitScript(() => {
      const w = window as unknown as { DigitalCredential: unknown; testWallet: (r: unknown) => Promise<string> };
      w.DigitalCredential = class {};
      Object.defineProperty(navigator, 'credentials', {
        value: {
          get: async (options: { digital: { requests: { protocol: string }[] } }) => {
            const [request] = options.digital.requests;
            return { protocol: request?.protocol, data: { response: await w.testWallet(request) } };
          },
        },
      });
    });
    await tab.goto(pageUrl);
    await tab.getByRole('button', { name: 'Share from your wallet' }).click();
    await tab.getByRole('status').filter({ hasText: 'Verified.' }).waitFor();
    const [current] = made.slice(-1);
    const done = await svc.running.services.sessions.get('acme', current?.session as string);
    expect(done.status).toBe('completed');
    expect(done.private?.credentials).toEqual([
      expect.objectContaining({ claims: { [NS]: { family_name: 'Mustermann', age_over_18: true } } }),
    ]);
    await tab.close();
  });

  it('says so where the browser has no Digital Credentials API', async () => {
    const tab = await browser.newPage();
    await tab.addInitScript(() => {
      delete (window as unknown as { DigitalCredential?: unknown }).DigitalCredential;
    });
    await tab.goto(pageUrl);
    await tab.getByRole('button', { name: 'Share from your wallet' }).click();
    await tab.getByRole('status').filter({ hasText: 'This browser cannot ask a wallet' }).waitFor();
    await tab.close();
  });
});
