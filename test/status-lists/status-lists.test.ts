// Status lists end to end: issue through a wallet, read the status through the public token with an
// independent decoder, change it through the management API, and the list management around it.
import 'reflect-metadata';
import { X509Certificate } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import { getListFromStatusListJWT } from '@sd-jwt/jwt-status-list';
import { Decoder as CborDecoder, decode as cborDecode } from 'cbor-x';
import { decodeJwt, decodeProtectedHeader, importX509, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine } from '../support/database.js';
import { secondInstance, startService, stopSecond, type TestService } from '../support/service.js';
import { receiveCredentials } from '../support/wallet.js';

let svc: TestService;

const config = (id: string, statusManagement = true) => ({
  id,
  config: { format: 'dc+sd-jwt', display: [{ name: id, locale: 'en' }] },
  vct: `urn:test:${id}`,
  keyBinding: true,
  statusManagement,
  fields: [{ path: ['given_name'], type: 'string', mandatory: true }],
});

beforeAll(async () => {
  svc = await startService();
});
afterAll(() => svc.stop());

async function setUpTenant(id: string, statusListConfig?: Record<string, unknown>) {
  const { token } = await svc.tenant(id);
  if (statusListConfig) {
    const put = await svc.call('PUT', '/api/status-list-config', { token, body: statusListConfig });
    expect(put.status, put.text).toBe(200);
  }
  const created = await svc.raw('POST', '/api/issuer/credentials', { token, body: config('pid') });
  expect(created.status, created.text).toBe(201);
  return token;
}

/** Runs the pre-authorized flow; returns the session id and the credential's status reference. */
async function issue(token: string, configurationId = 'pid') {
  const offer = await svc.call('POST', '/api/issuer/offer', {
    token,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: [configurationId],
      credentialClaims: { [configurationId]: { type: 'inline', claims: { given_name: 'Erika' } } },
    },
  });
  expect(offer.status, offer.text).toBe(201);
  const { response } = await receiveCredentials(offer.body.uri);
  const credential = (response.credentialResponse.credentials as { credential: string }[])[0]?.credential as string;
  const payload = decodeJwt(credential.split('~')[0] as string) as { status?: { status_list: { idx: number; uri: string } } };
  return { sessionId: offer.body.session as string, status: payload.status };
}

/** Fetches the status list token and decodes it independently: jose against the x5c leaf, zlib by hand, and @sd-jwt/jwt-status-list. */
async function readStatus(uri: string, idx: number) {
  const reply = await fetch(uri, { headers: { accept: 'application/statuslist+jwt' } });
  expect(reply.status).toBe(200);
  expect(reply.headers.get('content-type')).toContain('application/statuslist+jwt');
  const jwt = await reply.text();
  const header = decodeProtectedHeader(jwt);
  expect(header.typ).toBe('statuslist+jwt');
  const leaf = new X509Certificate(Buffer.from((header.x5c as string[])[0] as string, 'base64'));
  const { payload } = await jwtVerify(jwt, await importX509(leaf.toString(), header.alg as string), { typ: 'statuslist+jwt' });
  expect(payload.sub).toBe(uri);
  expect(payload.exp).toBe((payload.iat as number) + (payload.ttl as number));
  const list = payload.status_list as { bits: number; lst: string; aggregation_uri?: string };
  const bytes = inflateSync(Buffer.from(list.lst, 'base64url'));
  const bit = idx * list.bits;
  const byHand = ((bytes[bit >> 3] as number) >> (bit & 7)) & ((1 << list.bits) - 1);
  const byLibrary = getListFromStatusListJWT(jwt).getStatus(idx);
  expect(byLibrary).toBe(byHand);
  const maxAge = Number(/max-age=(\d+)/.exec(reply.headers.get('cache-control') ?? '')?.[1]);
  expect(maxAge).toBeGreaterThan(0);
  expect(maxAge).toBeLessThanOrEqual(payload.ttl as number);
  return { value: byHand, payload, header, leaf };
}

const revoke = (token: string, body: Record<string, unknown>) => svc.raw('POST', '/api/session/revoke', { token, body });

describe('status of issued credentials', () => {
  it('revokes, suspends and reinstates, visible at once with immediateUpdate', async () => {
    const token = await setUpTenant('immediate', { bits: 2, immediateUpdate: true });
    const { sessionId, status } = await issue(token);
    expect(status?.status_list.uri).toMatch(new RegExp(`^${svc.url}/issuers/immediate/status-lists/[0-9a-f-]+$`));
    const { uri, idx } = (status as { status_list: { idx: number; uri: string } }).status_list;
    const first = await readStatus(uri, idx);
    expect(first.value).toBe(0);
    expect((first.payload.status_list as { aggregation_uri?: string }).aggregation_uri).toBe(`${svc.url}/issuers/immediate/status-lists`);

    const listId = uri.split('/').pop() as string;
    for (const value of [1, 2, 0]) {
      const changed = await revoke(token, { sessionId, status: value });
      expect(changed.status, changed.text).toBe(200);
      expect(changed.body.updatedEntries).toBe(1);
      // The change request itself signed the new token.
      const row = await svc.db
        .selectFrom('status_lists')
        .select(['version', 'token_version'])
        .where('id', '=', listId)
        .executeTakeFirstOrThrow();
      expect(row.token_version).toBe(row.version);
      expect((await readStatus(uri, idx)).value).toBe(value);
    }

    // The list reports what it holds.
    const lists = (await svc.raw('GET', '/api/status-lists', { token })).body;
    expect(lists).toHaveLength(1);
    expect(lists[0]).toMatchObject({ bits: 2, usedEntries: 1, immediateUpdate: true, uri, credentialConfigurationId: null });
    expect(lists[0].availableEntries).toBe(lists[0].capacity - 1);
    expect(lists[0].expiresAt).not.toBeNull();

    // The aggregation endpoint lists the tenant's lists.
    const aggregation = await svc.call('GET', '/issuers/immediate/status-lists');
    expect(aggregation.body).toEqual({ status_lists: [uri] });
  });

  it('keeps the status on the entry row with its bit; a status the list has too few bits for changes neither (400 naming status)', async () => {
    const token = await setUpTenant('one-bit', { bits: 1, immediateUpdate: true });
    const { sessionId, status } = await issue(token);
    const { uri, idx } = (status as { status_list: { idx: number; uri: string } }).status_list;
    const entryStatus = async () =>
      (await svc.db.selectFrom('status_entries').select('status').where('session_id', '=', sessionId).executeTakeFirstOrThrow()).status;

    const suspended = await revoke(token, { sessionId, status: 2 });
    expect(suspended.status).toBe(400);
    expect(suspended.body.errors).toEqual([
      { field: 'status', message: expect.stringMatching(/^status 2 needs more bits than the 1 bit/) },
    ]);
    expect(await entryStatus()).toBe(0);
    expect((await readStatus(uri, idx)).value).toBe(0);

    expect((await revoke(token, { sessionId, status: 1 })).status).toBe(200);
    expect(await entryStatus()).toBe(1);
    expect((await readStatus(uri, idx)).value).toBe(1);
  });

  it('without immediateUpdate signs at the first fetch after a change, and serves that token until the next change or its ttl', async () => {
    const token = await setUpTenant('lazy');
    const { sessionId, status } = await issue(token);
    const { uri, idx } = (status as { status_list: { idx: number; uri: string } }).status_list;
    const listId = uri.split('/').pop() as string;
    const signed = () =>
      svc.db
        .selectFrom('status_lists')
        .select(['version', 'token_version', 'token_seq'])
        .where('id', '=', listId)
        .executeTakeFirstOrThrow();
    const first = await readStatus(uri, idx);
    expect(first.value).toBe(0);
    expect(await signed()).toEqual({ version: 0, token_version: 0, token_seq: 1 });
    // An unchanged list is served as signed.
    expect((await readStatus(uri, idx)).payload.iat).toBe(first.payload.iat);

    expect((await revoke(token, { sessionId, status: 1 })).status).toBe(200);
    // The change request signs nothing; the next fetch shows the change, though the earlier token's ttl has not passed.
    expect(await signed()).toEqual({ version: 1, token_version: 0, token_seq: 1 });
    expect((await readStatus(uri, idx)).value).toBe(1);
    expect(await signed()).toEqual({ version: 1, token_version: 1, token_seq: 2 });
    expect((await readStatus(uri, idx)).value).toBe(1);
    expect((await signed()).token_seq).toBe(2);
    // The bitset is stored compactly, not as JSON.
    const row = await svc.db.selectFrom('status_lists').select('bitset').where('id', '=', listId).executeTakeFirstOrThrow();
    expect(row.bitset).toBeInstanceOf(Uint8Array);

    // Once its ttl has passed, an unchanged list is signed again.
    await svc.db
      .updateTable('status_lists')
      .set({ token_expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', listId)
      .execute();
    expect((await readStatus(uri, idx)).value).toBe(1);
    expect(await signed()).toEqual({ version: 1, token_version: 1, token_seq: 3 });

    // 1 bit per entry cannot hold suspended.
    const suspend = await revoke(token, { sessionId, status: 2 });
    expect(suspend.status).toBe(400);
    expect(suspend.text).toContain('status');
  });

  it('serves the CWT form when asked for it', async () => {
    const token = await setUpTenant('cwt', { immediateUpdate: true });
    const { status } = await issue(token);
    const { uri, idx } = (status as { status_list: { idx: number; uri: string } }).status_list;
    const reply = await fetch(uri, { headers: { accept: 'application/statuslist+cwt' } });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('application/statuslist+cwt');
    const bytes0 = Buffer.from(await reply.arrayBuffer());
    // Tag 18 (COSE_Sign1) is one byte, 0xd2; decoded without it, so that no registered tag handler interferes.
    expect(bytes0[0]).toBe(0xd2);
    const [protectedBytes, , payloadBytes] = cborDecode(bytes0.subarray(1)) as [Uint8Array, unknown, Uint8Array];
    const protectedHeader = cborDecode(protectedBytes) as Map<number, unknown> | Record<number, unknown>;
    const get = (m: Map<number, unknown> | Record<number, unknown>, k: number) =>
      m instanceof Map ? m.get(k) : (m as Record<number, unknown>)[k];
    expect(get(protectedHeader, 16)).toBe('application/statuslist+cwt');
    const claims = cborDecode(payloadBytes) as Map<number, unknown> | Record<number, unknown>;
    expect(get(claims, 2)).toBe(uri);
    const list = get(claims, 65533) as { bits: number; lst: Uint8Array } | Map<string, unknown>;
    const lst = (list instanceof Map ? list.get('lst') : list.lst) as Uint8Array;
    const bytes = inflateSync(lst);
    expect(((bytes[idx >> 3] as number) >> (idx & 7)) & 1).toBe(0);
  });

  it("the served CWT and JWT carry the tenant's ttl, iat at signing, exp = iat + ttl, and aggregation_uri only when enabled", async () => {
    for (const enableAggregation of [true, false]) {
      const tenant = `cwt-claims-${enableAggregation}`;
      const token = await setUpTenant(tenant, { ttl: 120, enableAggregation });
      const { status } = await issue(token);
      const { uri } = (status as { status_list: { idx: number; uri: string } }).status_list;
      const before = Math.floor(Date.now() / 1000);
      const reply = await fetch(uri, { headers: { accept: 'application/statuslist+cwt' } });
      const after = Math.ceil(Date.now() / 1000);
      const [, , payloadBytes] = new CborDecoder({ mapsAsObjects: false }).decode(Buffer.from(await reply.arrayBuffer()).subarray(1));
      const claims = new CborDecoder({ mapsAsObjects: false }).decode(payloadBytes) as Map<number, unknown>;
      const iat = claims.get(6) as number;
      expect(iat).toBeGreaterThanOrEqual(before);
      expect(iat).toBeLessThanOrEqual(after);
      expect([claims.get(4), claims.get(65534)]).toEqual([iat + 120, 120]);
      const aggregationUri = (claims.get(65533) as Map<string, unknown>).get('aggregation_uri');
      expect(aggregationUri).toBe(enableAggregation ? `${svc.url}/issuers/${tenant}/status-lists` : undefined);

      const jwt = await (await fetch(uri, { headers: { accept: 'application/statuslist+jwt' } })).text();
      const payload = decodeJwt(jwt);
      expect([payload.iat, payload.exp, payload.ttl]).toEqual([iat, iat + 120, 120]);
      expect((payload.status_list as { aggregation_uri?: string }).aggregation_uri).toBe(aggregationUri);
    }
  });

  it("answers 404 for an unknown session and for another tenant's session", async () => {
    const token = await setUpTenant('sessions404');
    const { sessionId } = await issue(token);
    expect((await revoke(token, { sessionId: 'nope', status: 1 })).status).toBe(404);
    const other = (await svc.tenant('sessions404-other')).token;
    expect((await revoke(other, { sessionId, status: 1 })).status).toBe(404);
    expect((await revoke(token, { sessionId, status: 3 })).status).toBe(400);
  });

  it('leaves credentials of configurations without statusManagement without status', async () => {
    const { token } = await svc.tenant('nostatus');
    expect((await svc.raw('POST', '/api/issuer/credentials', { token, body: config('plain', false) })).status).toBe(201);
    const { status } = await issue(token, 'plain');
    expect(status).toBeUndefined();
    expect((await svc.call('GET', '/api/status-lists', { token })).body).toEqual([]);
  });
});

describe('status list configuration', () => {
  it('validates, falls back to the globals and resets', async () => {
    const { token } = await svc.tenant('config');
    expect((await svc.call('GET', '/api/status-list-config', { token })).body).toEqual({
      capacity: 10000,
      bits: 1,
      ttl: 3600,
      immediateUpdate: false,
      enableAggregation: true,
    });
    for (const [body, field] of [
      [{ capacity: 99 }, 'capacity'],
      [{ bits: 3 }, 'bits'],
      [{ ttl: 59 }, 'ttl'],
      [{ immediateUpdate: 'yes' }, 'immediateUpdate'],
      [{ colour: 'red' }, 'colour'],
    ] as const) {
      const reply = await svc.raw('PUT', '/api/status-list-config', { token, body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.text).toContain(field);
    }
    const put = await svc.call('PUT', '/api/status-list-config', { token, body: { capacity: 500, bits: 4, enableAggregation: false } });
    expect(put.body).toEqual({ capacity: 500, bits: 4, ttl: 3600, immediateUpdate: false, enableAggregation: false });
    const reset = await svc.call('PUT', '/api/status-list-config', { token, body: { capacity: null } });
    expect(reset.body).toMatchObject({ capacity: 10000, bits: 4 });
    const audit = await svc.call('GET', '/api/admin/audit-logs', { token });
    expect(audit.body.some((e: { actionType: string }) => e.actionType === 'status_list_config.updated')).toBe(true);
    expect((await svc.call('DELETE', '/api/status-list-config', { token })).status).toBe(204);
    expect((await svc.call('GET', '/api/status-list-config', { token })).body).toMatchObject({ bits: 1, enableAggregation: true });
  });

  it('needs issuance:manage and a tenant', async () => {
    const { token } = await svc.tenant('config-roles');
    const offerOnly = await svc.client(token, 'offer-only', ['issuance:offer']);
    expect((await svc.call('GET', '/api/status-list-config', { token: offerOnly })).status).toBe(403);
    expect((await svc.call('GET', '/api/status-lists', { token: offerOnly })).status).toBe(403);
    expect((await svc.call('GET', '/api/status-list-config')).status).toBe(401);
  });
});

describe('status lists', () => {
  it("creates, reads, rebinds and deletes; refuses deleting a list in use; hides other tenants' lists", async () => {
    const token = await setUpTenant('lists', { bits: 2 });
    expect((await svc.call('POST', '/api/status-lists', { token, body: { capacity: 999 } })).status).toBe(400);
    expect((await svc.raw('POST', '/api/status-lists', { token, body: { bits: 3 } })).status).toBe(400);
    const unknownConfig = await svc.call('POST', '/api/status-lists', { token, body: { credentialConfigurationId: 'nope' } });
    expect(unknownConfig.status).toBe(400);
    expect(unknownConfig.text).toContain('credentialConfigurationId');
    const wrongChain = await svc.call('POST', '/api/status-lists', { token, body: { keyChainId: 'default-attestation' } });
    expect(wrongChain.status).toBe(400);

    const created = await svc.call('POST', '/api/status-lists', { token, body: { credentialConfigurationId: 'pid', capacity: 1000 } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      tenantId: 'lists',
      credentialConfigurationId: 'pid',
      keyChainId: null,
      bits: 2,
      capacity: 1000,
      usedEntries: 0,
      availableEntries: 1000,
      expiresAt: null,
      uri: `${svc.url}/issuers/lists/status-lists/${created.body.id}`,
    });
    const id = created.body.id as string;
    expect((await svc.call('GET', `/api/status-lists/${id}`, { token })).body.id).toBe(id);

    // A credential of the bound configuration goes into the bound list.
    const { status } = await issue(token);
    expect(status?.status_list.uri).toBe(created.body.uri);
    expect((await svc.call('GET', `/api/status-lists/${id}`, { token })).body.usedEntries).toBe(1);
    const refused = await svc.call('DELETE', `/api/status-lists/${id}`, { token });
    expect(refused.status).toBe(409);

    const patched = await svc.call('PATCH', `/api/status-lists/${id}`, {
      token,
      body: { credentialConfigurationId: null, keyChainId: 'default-statusList' },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ credentialConfigurationId: null, keyChainId: 'default-statusList' });

    // The key chain a list signs with cannot be deleted.
    expect((await svc.call('DELETE', '/api/key-chain/default-statusList', { token })).status).toBe(409);

    const unused = (await svc.call('POST', '/api/status-lists', { token, body: {} })).body;
    const other = (await svc.tenant('lists-other')).token;
    expect((await svc.call('GET', `/api/status-lists/${unused.id}`, { token: other })).status).toBe(404);
    expect((await svc.call('PATCH', `/api/status-lists/${unused.id}`, { token: other, body: {} })).status).toBe(404);
    expect((await svc.call('DELETE', `/api/status-lists/${unused.id}`, { token: other })).status).toBe(404);
    expect((await fetch(`${svc.url}/issuers/lists-other/status-lists/${unused.id}`)).status).toBe(404);
    expect((await svc.call('DELETE', `/api/status-lists/${unused.id}`, { token })).status).toBe(204);
    expect((await svc.call('GET', `/api/status-lists/${unused.id}`, { token })).status).toBe(404);
  });

  it('re-signs the token when the key chain rotates', async () => {
    const token = await setUpTenant('rotation');
    const { status } = await issue(token);
    const { uri, idx } = (status as { status_list: { idx: number; uri: string } }).status_list;
    const before = await readStatus(uri, idx);
    const rotated = await svc.call('POST', '/api/key-chain/default-statusList/rotate', { token });
    expect(rotated.status, rotated.text).toBe(200);
    const after = await readStatus(uri, idx);
    expect(after.leaf.fingerprint256).not.toBe(before.leaf.fingerprint256);
  });

  it('rolls a full list over to a new shared list', async () => {
    const { token } = await svc.tenant('rollover');
    expect((await svc.call('PUT', '/api/status-list-config', { token, body: { capacity: 100 } })).status).toBe(200);
    const entries = await svc.running.services.statusLists.allocate('rollover', { credentialConfigurationId: 'pid', count: 250 });
    const lists = (await svc.call('GET', '/api/status-lists', { token })).body as { id: string; usedEntries: number; capacity: number }[];
    expect(lists).toHaveLength(3);
    expect(lists.map((l) => l.usedEntries)).toEqual([100, 100, 50]);
    expect(new Set(entries.map((e) => `${e.listId}:${e.idx}`)).size).toBe(250);
    // A full list holds every index exactly once.
    const first = entries.filter((e) => e.listId === lists[0]?.id).map((e) => e.idx);
    expect([...first].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    // ...but not in order: indexes are unpredictable.
    expect(first).not.toEqual(Array.from({ length: 100 }, (_, i) => i));
  });

  // SQLite serves one instance; PostgreSQL is where several instances share the database.
  it(`gives 1,000 concurrent allocations ${engine === 'postgres' ? 'on two instances ' : ''}1,000 distinct indexes`, async () => {
    await svc.tenant('concurrent');
    const second = await secondInstance(svc);
    try {
      const services = [svc.running.services.statusLists, second.running.services.statusLists];
      const entries = await Promise.all(
        Array.from({ length: 1000 }, (_, i) =>
          services[i % 2]?.allocate('concurrent', { credentialConfigurationId: 'pid' }).then(([e]) => e),
        ),
      );
      const keys = new Set(entries.map((e) => `${e?.listId}:${e?.idx}`));
      expect(keys.size).toBe(1000);
      const stored = await svc.db
        .selectFrom('status_entries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('tenant_id', '=', 'concurrent')
        .executeTakeFirstOrThrow();
      expect(Number(stored.n)).toBe(1000);
    } finally {
      await stopSecond(svc, second);
    }
  });
});

describe('caches', () => {
  it('reports and clears the caches of signed tokens', async () => {
    const token = await setUpTenant('caches');
    const { status } = await issue(token);
    const { uri, idx } = (status as { status_list: { idx: number; uri: string } }).status_list;
    await readStatus(uri, idx);
    await readStatus(uri, idx);
    const stats = await svc.call('GET', '/api/cache/stats', { token });
    expect(stats.status).toBe(200);
    expect(stats.body.statusList.entries).toBe(1);
    expect(stats.body.statusList.hits).toBeGreaterThan(0);
    expect(stats.body.trustList.entries).toBe(0);
    expect((await svc.call('DELETE', '/api/cache/status-list', { token })).status).toBe(204);
    expect((await svc.call('GET', '/api/cache/stats', { token })).body.statusList.entries).toBe(0);
    expect((await svc.call('DELETE', '/api/cache/trust-list', { token })).status).toBe(204);
    expect((await svc.call('DELETE', '/api/cache', { token })).status).toBe(204);
    expect((await readStatus(uri, idx)).value).toBe(0);
    const presenter = await svc.client(token, 'presenter', ['presentation:manage']);
    expect((await svc.call('GET', '/api/cache/stats', { token: presenter })).status).toBe(200);
  });
});
