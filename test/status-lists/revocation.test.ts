// A revocation is published at once, with the default configuration (immediateUpdate false): the
// list's uri serves a token that shows every change committed before the request, so the next
// presentation of a revoked credential fails. Concurrent fetches sign once; on PostgreSQL a second
// instance serves the token the first one stored.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { inflateSync } from 'node:zlib';
import { decode as cborDecode } from 'cbor-x';
import { decodeJwt, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine } from '../support/database.js';
import { presentSdJwt, resolveRequest, responseForm, submit } from '../support/presenter.js';
import { secondInstance, startService, stopSecond, type TestService } from '../support/service.js';
import { holderKey, receiveCredentials } from '../support/wallet.js';

const run = promisify(execFile);
let svc: TestService;

const PID = {
  id: 'pid',
  config: { format: 'dc+sd-jwt' },
  vct: 'urn:eudi:pid:1',
  statusManagement: true,
  fields: [{ path: ['given_name'], type: 'string', mandatory: true }],
};
const QUERY = {
  credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] }, claims: [{ path: ['given_name'] }] }],
};
const TRUSTED = [
  { type: 'internal', keyChainId: 'default-attestation' },
  { type: 'internal', keyChainId: 'default-statusList', serviceType: 'revocation' },
];

interface Issued {
  credential: string;
  holder: JWK;
  sessionId: string;
  uri: string;
  idx: number;
}

beforeAll(async () => {
  svc = await startService();
});
afterAll(() => svc.stop());

/** A tenant with the default status list configuration that issues PIDs and verifies them. */
async function setUpTenant(id: string) {
  const { token } = await svc.tenant(id);
  expect((await svc.call('GET', '/api/status-list-config', { token })).body.immediateUpdate).toBe(false);
  expect((await svc.raw('POST', '/api/issuer/credentials', { token, body: PID })).status).toBe(201);
  const trust = await svc.raw('POST', '/api/trust-list', { token, body: { id: 'issuers', entities: TRUSTED } });
  expect(trust.status, trust.text).toBe(201);
  const verifier = await svc.call('POST', '/api/verifier/config', { token, body: { id: 'pid-check', dcql_query: QUERY } });
  expect(verifier.status, verifier.text).toBe(201);
  return token;
}

async function issue(token: string): Promise<Issued> {
  const offer = await svc.call('POST', '/api/issuer/offer', {
    token,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: ['pid'],
      credentialClaims: { pid: { type: 'inline', claims: { given_name: 'Erika' } } },
    },
  });
  expect(offer.status, offer.text).toBe(201);
  const key = await holderKey();
  const { response } = await receiveCredentials(offer.body.uri, { keys: [key] });
  const credential = (response.credentialResponse.credentials as { credential: string }[])[0]?.credential as string;
  const { status } = decodeJwt(credential.split('~')[0] as string) as { status: { status_list: { idx: number; uri: string } } };
  return { credential, holder: key.privateJwk, sessionId: offer.body.session, ...status.status_list };
}

/** The entry's value in a status list token, JWT or CWT, decoded by hand. */
function entryOf(token: Buffer, idx: number): number {
  let list: { bits: number; lst: Uint8Array };
  if (token[0] === 0xd2) {
    // COSE_Sign1 (tag 18, one byte) decoded without its tag; its payload's claim 65533 is the status list.
    const [, , payload] = cborDecode(token.subarray(1)) as [unknown, unknown, Uint8Array];
    list = (cborDecode(payload) as Record<number, { bits: number; lst: Uint8Array }>)[65533] as { bits: number; lst: Uint8Array };
  } else {
    const { status_list } = decodeJwt(token.toString()) as { status_list: { bits: number; lst: string } };
    list = { bits: status_list.bits, lst: Buffer.from(status_list.lst, 'base64url') };
  }
  const bytes = inflateSync(list.lst);
  const bit = idx * list.bits;
  return ((bytes[bit >> 3] as number) >> (bit & 7)) & ((1 << list.bits) - 1);
}

/** The entry's value in the token served at `uri` now. */
async function served(uri: string, idx: number, form: 'jwt' | 'cwt' = 'jwt') {
  const reply = await fetch(uri, { headers: { accept: `application/statuslist+${form}` } });
  expect(reply.status).toBe(200);
  return entryOf(Buffer.from(await reply.arrayBuffer()), idx);
}

/**
 * The tokens `count` clients fetch from `uri` at once (JWT and CWT alternately). They run in another
 * process: one sharing this event loop would send its requests one at a time.
 */
async function fetchedAtOnce(uri: string, count: number): Promise<Buffer[]> {
  const script = `
    const forms = Array.from({ length: ${count} }, (_, i) => (i % 2 ? 'cwt' : 'jwt'));
    const replies = await Promise.all(forms.map((form) => fetch(${JSON.stringify(uri)}, { headers: { accept: 'application/statuslist+' + form } })));
    const bodies = await Promise.all(replies.map(async (r) => (r.status === 200 ? Buffer.from(await r.arrayBuffer()).toString('base64') : 'status ' + r.status)));
    process.stdout.write(JSON.stringify(bodies));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { maxBuffer: 256 * 1024 * 1024 });
  return (JSON.parse(stdout) as string[]).map((body) => Buffer.from(body, 'base64'));
}

const revoke = async (token: string, issued: Issued, status = 1) => {
  const changed = await svc.raw('POST', '/api/session/revoke', { token, body: { sessionId: issued.sessionId, status } });
  expect(changed.status, changed.text).toBe(200);
  expect(changed.body.updatedEntries).toBe(1);
};

const tokenState = (uri: string) =>
  svc.db
    .selectFrom('status_lists')
    .select(['version', 'token_version', 'token_seq'])
    .where('id', '=', uri.split('/').pop() as string)
    .executeTakeFirstOrThrow();

describe('a revocation through the API', () => {
  it('is in the token served right after it, and the next presentation of the credential fails', async () => {
    const token = await setUpTenant('revoked');
    const issued = await issue(token);
    // Someone (a relying party) fetched the list before the revocation: a token is signed and stored.
    expect(await served(issued.uri, issued.idx)).toBe(0);

    await revoke(token, issued);
    const offer = await svc.raw('POST', '/api/verifier/offer', { token, body: { response_type: 'uri', requestId: 'pid-check' } });
    expect(offer.status, offer.text).toBe(201);
    const resolved = await resolveRequest(offer.body.uri);
    const reply = await submit(resolved, { pid: [await presentSdJwt(issued.credential, issued.holder, resolved, ['given_name'])] });
    expect(reply.status, JSON.stringify(reply.body)).toBe(400);
    expect(reply.body.error).toBe('invalid_request');
    const session = await svc.running.services.sessions.get('revoked', offer.body.session);
    expect(session.status).toBe('failed');
    expect(session.errorReason).toBe('status: revoked');
    expect(await served(issued.uri, issued.idx)).toBe(1);
    expect(await served(issued.uri, issued.idx, 'cwt')).toBe(1);

    // The verification read the tenant's trust anchors into the trust list cache; /api/cache clears it.
    const stats = await svc.call('GET', '/api/cache/stats', { token });
    expect(stats.body.trustList.entries).toBe(1);
    expect(stats.body.fetchedStatusList.entries).toBe(1);
    expect((await svc.call('DELETE', '/api/cache/trust-list', { token })).status).toBe(204);
    const cleared = (await svc.call('GET', '/api/cache/stats', { token })).body;
    expect(cleared.trustList.entries).toBe(0);
    expect(cleared.fetchedStatusList.entries).toBe(1);
  });

  it('is signed once however many fetch the list at the same time', async () => {
    const token = await setUpTenant('concurrent-fetches');
    // A list of a megabyte takes long enough to read and sign that the fetches overlap (on PostgreSQL;
    // SQLite's synchronous queries leave them hardly any room to).
    const list = await svc.call('POST', '/api/status-lists', {
      token,
      body: { credentialConfigurationId: 'pid', capacity: 1_000_000, bits: 8 },
    });
    expect(list.status, list.text).toBe(201);
    const issued = await issue(token);
    expect(issued.uri).toBe(list.body.uri);
    expect(await served(issued.uri, issued.idx)).toBe(0);
    const before = await tokenState(issued.uri);

    await revoke(token, issued);
    const tokens = await fetchedAtOnce(issued.uri, 20);
    expect(tokens.map((t) => entryOf(t, issued.idx))).toEqual(Array.from({ length: 20 }, () => 1));
    expect(await tokenState(issued.uri)).toEqual({
      version: before.version + 1,
      token_version: before.version + 1,
      token_seq: before.token_seq + 1,
    });
  });

  // SQLite serves one instance; PostgreSQL is where several instances share the database.
  it(`is served ${engine === 'postgres' ? 'by another instance, which signs it; the first then serves that token' : 'from the stored token once signed'}`, async () => {
    const token = await setUpTenant('instances');
    const issued = await issue(token);
    const second = await secondInstance(svc);
    try {
      const onSecond = issued.uri.replace(svc.url, second.url);
      expect(await served(issued.uri, issued.idx)).toBe(0);
      await revoke(token, issued);
      expect(await served(onSecond, issued.idx)).toBe(1);
      const signed = await tokenState(issued.uri);
      expect(signed.token_version).toBe(signed.version);
      // The first instance's cache still holds the earlier token: the row's version decides, and nothing is signed again.
      expect(await served(issued.uri, issued.idx)).toBe(1);
      expect(await tokenState(issued.uri)).toEqual(signed);
    } finally {
      await stopSecond(svc, second);
    }
  });
});

describe("a revocation seen by the service's own verifier", () => {
  /**
   * A presentation of the credential made on `on` (the wallet's answer posted to that instance; the
   * request made and fetched through the first): whether it was accepted, and why not.
   */
  async function presentOn(on: TestService, tenant: string, token: string, issued: Issued) {
    const offer = await svc.raw('POST', '/api/verifier/offer', { token, body: { response_type: 'uri', requestId: 'pid-check' } });
    expect(offer.status, offer.text).toBe(201);
    const resolved = await resolveRequest(offer.body.uri);
    const form = await responseForm(resolved, { pid: [await presentSdJwt(issued.credential, issued.holder, resolved, ['given_name'])] });
    const reply = await on.raw('POST', new URL(resolved.responseUri).pathname, { form });
    const session = await svc.running.services.sessions.get(tenant, offer.body.session);
    return { status: reply.status, errorReason: session.errorReason };
  }

  // The default configuration: immediateUpdate false, a ttl of an hour, which a relying party may cache the token for.
  it(`is refused by the next presentation${engine === 'postgres' ? ' on either of two instances sharing PUBLIC_URL' : ''}, whatever the ttl`, async () => {
    const token = await setUpTenant('own-verifier');
    expect((await svc.call('GET', '/api/status-list-config', { token })).body.ttl).toBe(3600);
    const issued = await issue(token);
    // Behind one PUBLIC_URL, as behind a load balancer: each instance reads the lists in-process.
    const second = await secondInstance(svc, { PUBLIC_URL: svc.url });
    try {
      // Both verifiers read the list while the credential is valid, and keep what they verified.
      expect(await presentOn(svc, 'own-verifier', token, issued)).toEqual({ status: 200, errorReason: null });
      expect(await presentOn(second, 'own-verifier', token, issued)).toEqual({ status: 200, errorReason: null });

      await revoke(token, issued);
      expect(await presentOn(second, 'own-verifier', token, issued)).toEqual({ status: 400, errorReason: 'status: revoked' });
      expect(await presentOn(svc, 'own-verifier', token, issued)).toEqual({ status: 400, errorReason: 'status: revoked' });

      await revoke(token, issued, 0);
      expect(await presentOn(second, 'own-verifier', token, issued)).toEqual({ status: 200, errorReason: null });
    } finally {
      await stopSecond(svc, second);
    }
  });
});
