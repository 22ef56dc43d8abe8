// mso_mdoc presentations over OpenID4VP 1.0 (appendix B.2): the wallet side builds a DeviceResponse
// with @owf/mdoc (device signature over the OpenID4VP session transcript with the holder key) and
// sends it base64url-encoded as the vp_token entry; the service verifies it and checks the DCQL query.
import 'reflect-metadata';
import { createHash } from 'node:crypto';
import {
  DeviceAuthentication,
  DeviceResponse,
  type Document,
  IssuerNamespaces,
  IssuerSigned,
  IssuerSignedItem,
  SessionTranscript,
  type VerificationAssessment,
  Verifier,
} from '@owf/mdoc';
import { Encoder } from 'cbor-x';
import type { JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyMdocPresentation } from '../../src/formats/mso-mdoc/verify.js';
import {
  encryptionKeyThumbprint,
  type MdocPresentationOptions,
  type MdocRequest,
  presentMdoc as present,
  transcriptOf,
  walletContext,
} from '../support/mdoc-wallet.js';
import { type ResolvedRequest, resolveRequest, submit } from '../support/presenter.js';
import { startService, type TestService } from '../support/service.js';
import { holderKey, issueCredential } from '../support/wallet.js';

const DOC_TYPE = 'org.iso.18013.5.1.mDL';
const NS = 'org.iso.18013.5.1';
const MDL = {
  id: 'mdl',
  config: { format: 'mso_mdoc', docType: DOC_TYPE },
  fields: [
    { path: ['family_name'], type: 'string', namespace: NS },
    { path: ['given_name'], type: 'string', namespace: NS },
    { path: ['birth_date'], type: 'date', namespace: NS },
    { path: ['age_over_18'], type: 'boolean', namespace: NS },
    { path: ['portrait'], type: 'string', namespace: NS },
  ],
};
const REQUESTED = ['family_name', 'given_name', 'birth_date', 'age_over_18'];
const QUERY = {
  credentials: [
    {
      id: 'mdl',
      format: 'mso_mdoc',
      meta: { doctype_value: DOC_TYPE },
      claims: [
        { path: [NS, 'family_name'] },
        { path: [NS, 'given_name'] },
        { path: [NS, 'birth_date'] },
        { path: [NS, 'age_over_18'], values: [true] },
      ],
    },
  ],
};

let svc: TestService;
let admin: string;
let credential: string;
let holder: JWK;

const issue = (tenantToken: string, claims: Record<string, unknown>) => issueCredential(svc, tenantToken, 'mdl', claims);

beforeAll(async () => {
  svc = await startService();
  admin = (await svc.tenant('acme')).token;
  const created = await svc.raw('POST', '/api/issuer/credentials', { token: admin, body: MDL });
  expect(created.status, created.text).toBe(201);
  const trust = await svc.call('POST', '/api/trust-list', {
    token: admin,
    body: { id: 'issuers', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
  });
  expect(trust.status, trust.text).toBe(201);
  const config = await svc.call('POST', '/api/verifier/config', { token: admin, body: { id: 'mdl-check', dcql_query: QUERY } });
  expect(config.status, config.text).toBe(201);
  ({ credential, holder } = await issue(admin, {
    [NS]: { family_name: 'Mustermann', given_name: 'Erika', birth_date: '1964-08-12', age_over_18: true },
  }));
});
afterAll(() => svc.stop());

const request = async (body: Record<string, unknown> = {}) => {
  const reply = await svc.call('POST', '/api/verifier/offer', {
    token: admin,
    body: { response_type: 'uri', requestId: 'mdl-check', ...body },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as { uri: string; session: string; requestUri: string };
};
const session = (id: string) => svc.running.services.sessions.get('acme', id);

// --- the wallet (test/support/mdoc-wallet.ts), with this file's credential, holder and elements ---

const presentMdoc = (request: MdocRequest, options: Partial<MdocPresentationOptions> = {}) =>
  present(request, {
    docType: DOC_TYPE,
    namespace: NS,
    elements: REQUESTED,
    holder,
    credential,
    ...options,
  });

/** A request for the tests that call the verifier directly, without a session. */
const DIRECT_REQUEST: MdocRequest = {
  clientId: 'x509_san_dns:verifier.example',
  nonce: 'n-0S6_WzA2Mj',
  responseUri: 'https://verifier.example/response',
  responseMode: 'direct_post',
  payload: {},
};

describe('mso_mdoc presentations', () => {
  it('uses the OpenID4VP 1.0 session transcript (B.2.6.1), checked by hand', async () => {
    const offer = await request();
    const resolved = await resolveRequest(offer.uri);
    const thumbprint = encryptionKeyThumbprint(resolved);
    expect(thumbprint?.length).toBe(32);
    const cbor = new Encoder({ tagUint8Array: false, useRecords: false });
    const info = cbor.encode([resolved.clientId, resolved.nonce, thumbprint, resolved.responseUri]);
    const expected = cbor.encode([null, null, ['OpenID4VPHandover', createHash('sha256').update(info).digest()]]);
    const { sessionTranscript } = await presentMdoc(resolved);
    expect(Buffer.from(sessionTranscript.encode()).equals(expected)).toBe(true);
  });

  for (const responseMode of ['direct_post.jwt', 'direct_post'] as const) {
    it(`verifies a DeviceResponse end to end (${responseMode})`, async () => {
      const offer = await request(responseMode === 'direct_post' ? { responseMode } : {});
      const resolved = await resolveRequest(offer.uri);
      expect(resolved.responseMode).toBe(responseMode);
      const { vpToken } = await presentMdoc(resolved);
      const reply = await submit(resolved, vpToken);
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      const done = await session(offer.session);
      expect(done).toMatchObject({ status: 'completed', consumed: true });
      expect(done.private?.credentials).toEqual([
        {
          queryId: 'mdl',
          format: 'mso_mdoc',
          docType: DOC_TYPE,
          claims: { [NS]: { family_name: 'Mustermann', given_name: 'Erika', birth_date: '1964-08-12', age_over_18: true } },
          issuer: expect.stringMatching(/CN=/),
        },
      ]);
      const raw = await svc.db.selectFrom('sessions').select('private_data').where('id', '=', offer.session).executeTakeFirstOrThrow();
      expect(raw.private_data).not.toContain('Erika');
    });
  }
});

describe('rejected mdoc presentations fail the session closed', () => {
  async function attempt(present: (resolved: ResolvedRequest) => Promise<Record<string, string[]>>, offerBody = {}) {
    const offer = await request(offerBody);
    const resolved = await resolveRequest(offer.uri);
    const reply = await submit(resolved, await present(resolved));
    return { reply, state: await session(offer.session) };
  }
  const expectRejected = (result: Awaited<ReturnType<typeof attempt>>, reason: RegExp) => {
    expect(result.reply.status, JSON.stringify(result.reply.body)).toBe(400);
    expect(result.reply.body.error).toBe('invalid_request');
    expect(result.state.status).toBe('failed');
    expect(result.state.errorReason).toMatch(reason);
    expect(result.state.private?.credentials).toBeUndefined();
  };
  const DEVICE_AUTH = /device authentication.*session transcript.*Device signature must be valid/;

  it('a session transcript with another nonce, client_id or response_uri', async () => {
    for (const transcript of [
      { nonce: 'guessed-nonce' },
      { clientId: 'x509_san_dns:someone-else.example' },
      { responseUri: 'https://someone-else.example/response' },
    ]) {
      expectRejected(await attempt(async (r) => (await presentMdoc(r, { transcript })).vpToken), DEVICE_AUTH);
    }
  });

  it('a session transcript without the encryption key thumbprint of a direct_post.jwt request', async () => {
    expectRejected(await attempt(async (r) => (await presentMdoc(r, { transcript: { jwkThumbprint: undefined } })).vpToken), DEVICE_AUTH);
  });

  it('a device signature by another key than the MSO device key', async () => {
    const stranger = (await holderKey()).privateJwk;
    expectRejected(await attempt(async (r) => (await presentMdoc(r, { holder: stranger })).vpToken), DEVICE_AUTH);
  });

  it('a replayed device signature whose DeviceAuthentication travels attached', async () => {
    expectRejected(
      await attempt(async (r) => {
        // signed for another session, with the DeviceAuthentication of that session put in the payload
        const old = await presentMdoc(r, { transcript: { nonce: 'an-earlier-session' } });
        const document = old.deviceResponse.documents?.[0] as Document;
        const deviceAuthentication = DeviceAuthentication.create({
          sessionTranscript: old.sessionTranscript,
          docType: DOC_TYPE,
          deviceNamespaces: document.deviceSigned.deviceNamespaces,
        }).encode({ asDataItem: true });
        const signature = document.deviceSigned.deviceAuth.deviceSignature as unknown as { structure: { payload: Uint8Array } };
        signature.structure.payload = deviceAuthentication;
        const replayed = DeviceResponse.fromEncodedForOid4Vp(old.deviceResponse.encodedForOid4Vp);
        // the library alone would accept it for this session: it verifies the attached payload
        const checks: VerificationAssessment[] = [];
        await Verifier.verifyDeviceResponse(
          {
            deviceResponse: replayed,
            sessionTranscript: await SessionTranscript.forOid4Vp(transcriptOf(r), walletContext),
            trustedCertificates: [],
            disableCertificateChainValidation: true,
            onCheck: (c) => checks.push(c),
          },
          walletContext,
        );
        expect(checks.find((c) => c.check === 'Device signature must be valid')?.status).toBe('PASSED');
        return { mdl: [replayed.encodedForOid4Vp] };
      }),
      /detached payload/,
    );
  });

  it('an issuer no trust list of the tenant names (another tenant’s mdoc)', async () => {
    const other = (await svc.tenant('globex')).token;
    expect((await svc.raw('POST', '/api/issuer/credentials', { token: other, body: MDL })).status).toBe(201);
    const foreign = await issue(other, {
      [NS]: { family_name: 'Mallory', given_name: 'Eve', birth_date: '1970-01-01', age_over_18: true },
    });
    expectRejected(
      await attempt(async (r) => (await presentMdoc(r, { credential: foreign.credential, holder: foreign.holder })).vpToken),
      /issuer authentication: Issuer certificate must be valid \(no trusted issuer/,
    );
  });

  it('a tampered element value', async () => {
    const original = IssuerSigned.fromEncodedForOid4Vci(credential);
    const forged = (original.getIssuerNamespace(NS) ?? []).map((item) =>
      item.elementIdentifier === 'family_name'
        ? IssuerSignedItem.fromOptions({
            digestId: item.digestId,
            random: item.random,
            elementIdentifier: 'family_name',
            elementValue: 'Forged',
          })
        : item,
    );
    const issuerSigned = IssuerSigned.create({
      issuerAuth: original.issuerAuth,
      issuerNamespaces: IssuerNamespaces.create({ issuerNamespaces: new Map([[NS, forged]]) }),
    });
    expectRejected(
      await attempt(async (r) => (await presentMdoc(r, { issuerSigned })).vpToken),
      /data integrity: The calculated digest for org\.iso\.18013\.5\.1\/family_name/,
    );
  });

  it('claims missing for the DCQL query', async () => {
    expectRejected(await attempt(async (r) => (await presentMdoc(r, { elements: ['family_name', 'age_over_18'] })).vpToken), /DCQL/);
  });

  it('a DeviceResponse without documents, and one that is no DeviceResponse', async () => {
    const empty = Buffer.from(
      new Encoder({ useRecords: false }).encode(
        new Map<string, unknown>([
          ['version', '1.0'],
          ['documents', []],
          ['status', 0],
        ]),
      ),
    ).toString('base64url');
    expectRejected(await attempt(async () => ({ mdl: [empty] })), /holds no document/);
    expectRejected(await attempt(async () => ({ mdl: ['bm90LWNib3I'] })), /not a base64url-encoded DeviceResponse/);
  });

  it('an mdoc outside its validity window (verified directly at another time)', async () => {
    const root = (await svc.call('GET', '/api/key-chain/default-attestation', { token: admin })).body.rootCertificate as string;
    const request = DIRECT_REQUEST;
    const { vpToken } = await presentMdoc(request);
    const context = { ...request, trustedCertificates: [root], transactionData: [], now: new Date() };
    const [verified] = await verifyMdocPresentation(vpToken.mdl?.[0] as string, context);
    expect(verified?.claims[NS]?.birth_date).toBe('1964-08-12');
    for (const now of [new Date(Date.now() + 400 * 86_400_000), new Date(Date.now() - 86_400_000)]) {
      await expect(verifyMdocPresentation(vpToken.mdl?.[0] as string, { ...context, now })).rejects.toThrow(
        /The MSO must be valid at the time of verification/,
      );
    }
  });

  it('names a trust anchor it cannot read when it refuses, and leaves it out when another one is trusted (verified directly)', async () => {
    const root = (await svc.call('GET', '/api/key-chain/default-attestation', { token: admin })).body.rootCertificate as string;
    const request = DIRECT_REQUEST;
    const { vpToken } = await presentMdoc(request);
    const presentation = vpToken.mdl?.[0] as string;
    const context = { ...request, transactionData: [], now: new Date() };
    const broken = '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----';
    await expect(verifyMdocPresentation(presentation, { ...context, trustedCertificates: [broken] })).rejects.toThrow(
      /Issuer certificate must be valid.*; trusted certificate 1 of 1 could not be read \(.+\) and was left out$/,
    );
    const [verified] = await verifyMdocPresentation(presentation, { ...context, trustedCertificates: [broken, root] });
    expect(verified?.claims[NS]?.family_name).toBe('Mustermann');
  });
});
