// The status of presented mso_mdoc credentials: the verifier reads the MSO's `status` entry
// ({status_list: {idx, uri}}, signed by the issuer), then checks it as for SD-JWT VCs: the status list
// token is fetched, verified against the tenant's trust lists and cached; revoked and suspended reject.
import 'reflect-metadata';
import type { JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyMdocPresentation } from '../../src/formats/mso-mdoc/verify.js';
import { presentMdoc } from '../support/mdoc-wallet.js';
import { resolveRequest, submit } from '../support/presenter.js';
import { startService, type TestService } from '../support/service.js';
import { holderKey, receiveCredentials } from '../support/wallet.js';

const DOC_TYPE = 'org.iso.18013.5.1.mDL';
const NS = 'org.iso.18013.5.1';
const MDL = {
  id: 'mdl',
  config: { format: 'mso_mdoc', docType: DOC_TYPE },
  statusManagement: true,
  fields: [
    { path: ['family_name'], type: 'string', namespace: NS },
    { path: ['age_over_18'], type: 'boolean', namespace: NS },
  ],
};
const QUERY = {
  credentials: [
    {
      id: 'mdl',
      format: 'mso_mdoc',
      meta: { doctype_value: DOC_TYPE },
      claims: [{ path: [NS, 'family_name'] }, { path: [NS, 'age_over_18'] }],
    },
  ],
};
const TRUSTED = [
  { type: 'internal', keyChainId: 'default-attestation' },
  { type: 'internal', keyChainId: 'default-statusList', serviceType: 'revocation' },
];

let svc: TestService;
let token: string;
let issued: { credential: string; holder: JWK; sessionId: string };

beforeAll(async () => {
  svc = await startService();
  ({ token } = await svc.tenant('acme'));
  const config = await svc.call('PUT', '/api/status-list-config', { token, body: { bits: 2, immediateUpdate: true, ttl: 60 } });
  expect(config.status, config.text).toBe(200);
  const created = await svc.raw('POST', '/api/issuer/credentials', { token, body: MDL });
  expect(created.status, created.text).toBe(201);
  const trust = await svc.raw('POST', '/api/trust-list', { token, body: { id: 'issuers', entities: TRUSTED } });
  expect(trust.status, trust.text).toBe(201);
  const verifier = await svc.call('POST', '/api/verifier/config', { token, body: { id: 'mdl-check', dcql_query: QUERY } });
  expect(verifier.status, verifier.text).toBe(201);

  const offer = await svc.call('POST', '/api/issuer/offer', {
    token,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: ['mdl'],
      credentialClaims: { mdl: { type: 'inline', claims: { [NS]: { family_name: 'Mustermann', age_over_18: true } } } },
    },
  });
  expect(offer.status, offer.text).toBe(201);
  const key = await holderKey();
  const { response } = await receiveCredentials(offer.body.uri, { keys: [key] });
  const credential = (response.credentialResponse.credentials as { credential: string }[])[0]?.credential as string;
  issued = { credential, holder: key.privateJwk, sessionId: offer.body.session };
});
afterAll(() => svc.stop());

/** One presentation of the issued mdoc; the wallet's answer and the session as it ends. */
async function present() {
  const offer = await svc.raw('POST', '/api/verifier/offer', { token, body: { response_type: 'uri', requestId: 'mdl-check' } });
  expect(offer.status, offer.text).toBe(201);
  const resolved = await resolveRequest(offer.body.uri);
  const { vpToken } = await presentMdoc(resolved, {
    docType: DOC_TYPE,
    namespace: NS,
    elements: ['family_name', 'age_over_18'],
    credential: issued.credential,
    holder: issued.holder,
  });
  const reply = await submit(resolved, vpToken);
  return { reply, state: await svc.running.services.sessions.get('acme', offer.body.session) };
}

function expectAccepted(result: Awaited<ReturnType<typeof present>>) {
  expect(result.reply.status, JSON.stringify(result.reply.body)).toBe(200);
  expect(result.state.status).toBe('completed');
}

function expectRejected(result: Awaited<ReturnType<typeof present>>, reason: RegExp) {
  expect(result.reply.status).toBe(400);
  expect(result.reply.body.error).toBe('invalid_request');
  expect(result.state.status).toBe('failed');
  expect(result.state.errorReason).toMatch(reason);
  expect(result.state.private?.credentials).toBeUndefined();
}

const revoke = async (status: number) => {
  const changed = await svc.raw('POST', '/api/session/revoke', { token, body: { sessionId: issued.sessionId, status } });
  expect(changed.status, changed.text).toBe(200);
  expect(changed.body.updatedEntries).toBe(1);
};
const stats = async () => (await svc.call('GET', '/api/cache/stats', { token })).body.fetchedStatusList;

describe('status of presented mdocs', () => {
  it('reads the MSO status reference of the verified document', async () => {
    const request = {
      clientId: 'x509_san_dns:verifier.example',
      nonce: 'n-0S6_WzA2Mj',
      responseUri: 'https://verifier.example/response',
      responseMode: 'direct_post',
      payload: {},
    };
    const { vpToken } = await presentMdoc(request, {
      docType: DOC_TYPE,
      namespace: NS,
      elements: ['family_name'],
      credential: issued.credential,
      holder: issued.holder,
    });
    const trustedCertificates = await svc.running.services.trustLists.trustedCertificates('acme');
    const [verified] = await verifyMdocPresentation(vpToken.mdl?.[0] as string, {
      ...request,
      trustedCertificates,
      transactionData: [],
      now: new Date(),
    });
    expect(verified?.status).toEqual({
      status_list: { idx: expect.any(Number), uri: expect.stringMatching(new RegExp(`^${svc.url}/issuers/acme/status-lists/`)) },
    });
  });

  it('accepts a valid mdoc, rejects it revoked and suspended, and accepts it reinstated', async () => {
    const valid = await present();
    expectAccepted(valid);
    expect(valid.state.private?.credentials).toEqual([
      expect.objectContaining({
        queryId: 'mdl',
        format: 'mso_mdoc',
        status: { status_list: expect.objectContaining({ idx: expect.any(Number) }) },
      }),
    ]);
    expect(await stats()).toMatchObject({ entries: 1, misses: 1 });

    // The service's own list is read afresh at every presentation: each change is seen by the next one.
    await revoke(1);
    expectRejected(await present(), /^status: revoked$/);

    await revoke(2);
    expectRejected(await present(), /^status: suspended$/);

    await revoke(0);
    expectAccepted(await present());
  });
});
